// How the front answers: every failure is an apiError, with the HTTP status
// and the machine-readable code a client acts on, and every answer is JSON
// (writeJSON). A server error (5xx) is answered with its code and the
// request id only; what failed inside (a Go or JS error's text) goes to the
// log under that id, which the shards' log lines carry too
// (requestIDHeader), so one id finds a request's trail.

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strconv"
)

// apiError is an error with its HTTP status and machine-readable code.
type apiError struct {
	Status  int
	Code    string
	Message string
	Index   *int // the key the error is about, when there is one
	// Detail is for the log only: what failed inside (a Go or JS error's
	// text), which the answer never carries.
	Detail string
	// RetryAfter, when set, is the answer's Retry-After in seconds.
	RetryAfter int
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func errorf(status int, code, format string, args ...any) *apiError {
	return &apiError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// internalError is a 5xx whose message is safe to send and whose detail
// goes to the log.
func internalError(status int, code, message string, detail error) *apiError {
	e := &apiError{Status: status, Code: code, Message: message}
	if detail != nil {
		e.Detail = detail.Error()
	}
	return e
}

// requestIDKey is the context key of the request id.
type requestIDKey struct{}

// requestIDHeader carries the request id to the shards, whose log lines
// then carry it too.
const requestIDHeader = "X-Edgebloom-Request-Id"

// newRequestID returns the id under which a request's errors are logged:
// Cloudflare's Cf-Ray when there is one (so it also finds the request in
// Cloudflare's logs), otherwise 16 random hex digits.
func newRequestID(r *http.Request) string {
	if ray := r.Header.Get("Cf-Ray"); ray != "" && len(ray) <= 64 {
		return ray
	}
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"encoding the response failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// writeError answers with err. A server error (5xx) carries its code, a
// message and the request id, never the detail of what failed inside (a Go
// error's text can name types, a JS one files of the bundle): that goes to
// the log, under the request id.
func writeError(w http.ResponseWriter, id string, err error) {
	ae := asAPIError(err)
	if ae.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="edgebloom"`)
	}
	if ae.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ae.RetryAfter))
	}
	body := map[string]any{"code": ae.Code, "message": ae.Message}
	if ae.Index != nil {
		body["index"] = *ae.Index
	}
	if ae.Status >= 500 {
		if id != "" {
			body["requestId"] = id
		}
		// A front that is busy says so to every client of a burst: the
		// log would say it as many times.
		if ae.Code != "busy" {
			logError(id, ae)
		}
	}
	writeJSON(w, ae.Status, map[string]any{"error": body})
}

// asAPIError returns err as an apiError: itself, or a 500 whose detail is
// err's text.
func asAPIError(err error) *apiError {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = internalError(http.StatusInternalServerError, "internal", "the service failed to serve the request", err)
	}
	return ae
}

// logError writes ae to the log under the request id, with its detail.
func logError(id string, ae *apiError) {
	detail := ""
	if ae.Detail != "" {
		detail = "; detail: " + ae.Detail
	}
	log.Printf("edgebloom: request %s: %d %s: %s%s", id, ae.Status, ae.Code, ae.Message, detail)
}
