package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/snapshot"
	"github.com/edgebloom/edgebloom/urlkey"
)

// Limits of the HTTP API.
const (
	maxBodyBytes = 1 << 20 // a request body, 1 MiB
	maxKeys      = 10_000  // keys in one add or check
	maxKeyBytes  = 8 << 10 // one key, 8 KiB of UTF-8
	maxShards    = 64      // shards of one filter; each request fans out to all of them at most
	maxNameBytes = 64
	// maxShardBits bounds one shard's bitset (abi.MaxShardBits, which
	// shard.js takes from abi.js). The shard never encodes its filter whole
	// (an add logs the bits it set, compaction and snapshots read byte
	// ranges, a load writes chunk by chunk), so the engine's memory stays
	// near the bitset (README.md, "Capacity and memory"); a snapshot is
	// sent a megabyte at a time (snapshot-stream.js).
	maxShardBits = abi.MaxShardBits
)

// Server is the HTTP front of the edge service: it authenticates, validates
// and routes each key to its shard, a Durable Object reached through
// Objects. It is plain net/http, so it runs under syumai/workers in workerd
// and under httptest on the host alike.
type Server struct {
	// Token returns the service's secret (EDGEBLOOM_TOKEN): the bearer
	// token that allows everything, and the key scoped tokens are signed
	// with (auth.go); "" refuses every request with 500, so an unset secret
	// never opens the service.
	Token func() string
	// PreviousToken returns the secret before a rotation
	// (EDGEBLOOM_TOKEN_PREVIOUS), accepted as Token is while it is set.
	PreviousToken func() string
	// AllowedOrigins returns the origins whose pages may call the read
	// endpoints (EDGEBLOOM_ALLOWED_ORIGINS, cors.go).
	AllowedOrigins func() string
	Objects        Objects
	// TestHooks, when it returns true, serves the endpoints under /_test/
	// (testHook); nil or false answers them 404.
	TestHooks func() bool

	// metas caches each filter's parameters as the meta object last gave
	// them. One Go instance serves many requests (worker.mjs keeps it per
	// isolate), so most requests skip reading meta. A cached generation
	// that is no longer current costs one retry, never data: a shard
	// refuses a request of a generation older than its own or deleted
	// there (409 stale_generation; every shard of a deleted generation is
	// told before a PUT of the name is answered, see metaCall), and
	// withParams then reads meta again and runs the request once more.
	metaMu sync.Mutex
	metas  map[string]filterParams
}

// maxCachedMetas bounds the meta cache; when full it starts over.
const maxCachedMetas = 4096

// apiError is an error with its HTTP status and machine-readable code.
type apiError struct {
	Status  int
	Code    string
	Message string
	Index   *int // the key the error is about, when there is one
	// Detail is for the log only: what failed inside (a Go or JS error's
	// text), which the answer never carries.
	Detail string
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
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = internalError(http.StatusInternalServerError, "internal", "the service failed to serve the request", err)
	}
	if ae.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="edgebloom"`)
	}
	body := map[string]any{"code": ae.Code, "message": ae.Message}
	if ae.Index != nil {
		body["index"] = *ae.Index
	}
	if ae.Status >= 500 {
		if id != "" {
			body["requestId"] = id
		}
		detail := ""
		if ae.Detail != "" {
			detail = "; detail: " + ae.Detail
		}
		log.Printf("edgebloom: request %s: %d %s: %s%s", id, ae.Status, ae.Code, ae.Message, detail)
	}
	writeJSON(w, ae.Status, map[string]any{"error": body})
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	served.Add(1)
	id := newRequestID(r)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	defer func() {
		// A panic would end the Go program: the client would get workerd's
		// error page (with a stack trace in local development) and the
		// request id nothing. Answer 500 and log it instead.
		if v := recover(); v != nil {
			writeError(w, id, internalError(http.StatusInternalServerError, "internal", "the service failed to serve the request",
				fmt.Errorf("panic: %v\n%s", v, debug.Stack())))
		}
	}()
	if err := s.serve(w, r); err != nil {
		writeError(w, id, err)
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) error {
	w, answered := s.cors(w, r)
	if answered {
		return nil
	}
	access, err := s.authenticate(r)
	if err != nil {
		return err
	}
	if r.URL.Path == tokensPath {
		return s.mintToken(w, r, access)
	}
	if strings.HasPrefix(r.URL.Path, "/_test/") && s.TestHooks != nil && s.TestHooks() {
		if err := access.adminOnly("a test hook"); err != nil {
			return err
		}
		return s.testHook(w, r)
	}
	if name, rest, ok := checkpointPath(r.URL.Path); ok {
		return s.serveCheckpoints(w, r, access, name, rest)
	}
	name, action, ok := splitPath(r.URL.Path)
	if !ok {
		return errorf(http.StatusNotFound, "not_found", "no such endpoint: %s", r.URL.Path)
	}
	allowed := map[string]string{"": "PUT, GET, DELETE", "add": "POST", "check": "POST", "snapshot": "GET", "changes": "GET"}[action]
	if !methodIn(r.Method, allowed) {
		w.Header().Set("Allow", allowed)
		return errorf(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not allowed on this endpoint; allowed: %s", r.Method, allowed)
	}
	if err := checkName(name); err != nil {
		return err
	}
	if err := access.allow(operation(action, r.Method), name); err != nil {
		return err
	}
	ctx := r.Context()
	switch action + " " + r.Method {
	case " PUT":
		return s.create(ctx, w, r, name)
	case " GET":
		return s.stats(ctx, w, name)
	case " DELETE":
		return s.remove(ctx, w, name)
	case "add POST", "check POST":
		return s.keys(ctx, w, r, name, action)
	case "snapshot GET":
		return s.snapshot(ctx, w, name)
	case "changes GET":
		return s.changes(ctx, w, r, name)
	}
	return errorf(http.StatusNotFound, "not_found", "no such endpoint")
}

// bearerToken returns the token of an Authorization header of the Bearer
// scheme. Auth schemes are case-insensitive (RFC 9110 §11.1: "bearer x" is
// Bearer too), and one or more spaces separate the scheme from the token.
func bearerToken(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimLeft(h, " "), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(token, " ")
	return token, token != ""
}

// splitPath splits /v1/filters/{name}[/{action}].
func splitPath(p string) (name, action string, ok bool) {
	rest, ok := strings.CutPrefix(p, "/v1/filters/")
	if !ok {
		return "", "", false
	}
	name, action, _ = strings.Cut(rest, "/")
	switch action {
	case "", "add", "check", "snapshot", "changes":
		return name, action, name != ""
	}
	return "", "", false
}

func checkName(name string) error {
	ok := len(name) <= maxNameBytes
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0
	}
	if !ok {
		return errorf(http.StatusBadRequest, "invalid_name", "a filter name is 1 to %d of A-Z a-z 0-9 - _ . and does not start with a dot", maxNameBytes)
	}
	return nil
}

// The bodies the API takes, as its errors name them.
const (
	createShape = `{"capacity": integer, "errorRate": number, "shards": integer, "canonicalize": boolean}`
	keysShape   = `{"keys": [string, ...]}`
)

// readJSON reads a body of at most maxBodyBytes and decodes it strictly
// into v, a pointer to a struct: the body must be the JSON object shape
// describes. Its bytes are made valid UTF-8 first (validUTF8), so every key
// is hashed as the text a JS runtime decodes from the same bytes.
func readJSON(r *http.Request, v any, shape string) error {
	if r.ContentLength > maxBodyBytes {
		return errorf(http.StatusRequestEntityTooLarge, "body_too_large", "the body is %d bytes; the limit is %d", r.ContentLength, maxBodyBytes)
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return errorf(http.StatusRequestEntityTooLarge, "body_too_large", "the body is over the limit of %d bytes", maxBodyBytes)
	} else if err != nil {
		return internalError(http.StatusBadRequest, "invalid_json", "the body could not be read", err)
	}
	body = validUTF8(body)
	// null decodes into a struct without an error, and an array or a
	// string fails with a message naming Go types: check the shape first.
	if first := bytes.TrimLeft(body, " \t\r\n"); len(first) == 0 || first[0] != '{' {
		return errorf(http.StatusBadRequest, "invalid_json", "the body must be a JSON object %s; got %s", shape, jsonKind(first))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, shape)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errorf(http.StatusBadRequest, "invalid_json", "data after the JSON object; the body must be %s", shape)
	}
	return nil
}

// jsonKind names the JSON value that b starts with.
func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "an empty body"
	}
	switch c := b[0]; {
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	return "no JSON value"
}

// jsonError turns an error of encoding/json into a 400 that speaks of JSON
// and the expected shape, never of Go types.
func jsonError(err error, shape string) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return errorf(http.StatusBadRequest, "invalid_json", "the body is not valid JSON: %s (at byte %d); the body must be %s", syntax.Error(), syntax.Offset, shape)
	case errors.As(err, &typ):
		field := "the body"
		if typ.Field != "" {
			field = strconv.Quote(typ.Field)
		}
		return errorf(http.StatusBadRequest, "invalid_json", "%s holds %s where %s belongs; the body must be %s",
			field, article(typ.Value), jsonTypeOf(typ.Type), shape)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, "invalid_json", "the body ends inside its JSON value; the body must be %s", shape)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return errorf(http.StatusBadRequest, "invalid_json", "%s; the body must be %s", strings.TrimPrefix(err.Error(), "json: "), shape)
	}
	return internalError(http.StatusBadRequest, "invalid_json", "the body is not the JSON object "+shape, err)
}

// article names a JSON value kind as encoding/json reports it ("array",
// "number", "number 1.5", ...).
func article(v string) string {
	switch {
	case strings.HasPrefix(v, "array"), strings.HasPrefix(v, "object"):
		return "an " + v
	case v == "null":
		return v
	}
	return "a " + v
}

// jsonTypeOf names the JSON kind that decodes into a Go type.
func jsonTypeOf(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a value"
}

// validUTF8 returns b with every ill-formed UTF-8 sequence replaced by
// U+FFFD the way the WHATWG Encoding Standard's decoder (TextDecoder, and
// so every JS runtime reading the same bytes) replaces it: one U+FFFD for
// each maximal subpart of an ill-formed sequence (Unicode 16, §3.9.6), so
// "e\xE2\x82z" becomes "e\uFFFDz" and "\xED\xA0\x80" (a surrogate
// encoded as UTF-8) three U+FFFD. encoding/json alone would replace byte
// by byte, which differs from JS for a truncated sequence. A JSON escape of
// a lone surrogate ("\ud800") becomes U+FFFD in encoding/json, as in
// TextEncoder. b itself is returned when it is valid.
func validUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+len(b)/2)
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			out = append(out, b[i])
			i++
			continue
		}
		if r, size := utf8.DecodeRune(b[i:]); r != utf8.RuneError || size > 1 {
			out = append(out, b[i:i+size]...)
			i += size
			continue
		}
		out = utf8.AppendRune(out, utf8.RuneError)
		i += illFormedLen(b[i:])
	}
	return out
}

// illFormedLen returns the length of the maximal subpart of the ill-formed
// sequence that b starts with: its lead byte and the continuation bytes
// that could still have completed it (Unicode 16, Table 3-7).
func illFormedLen(b []byte) int {
	lo, hi := byte(0x80), byte(0xBF)
	need := 0
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	}
	n := 1
	for n <= need && n < len(b) && b[n] >= lo && b[n] <= hi {
		n++
		lo, hi = 0x80, 0xBF
	}
	return n
}

// shardCapacity is the capacity of each shard: the filter's, split evenly.
func shardCapacity(p filterParams) uint64 {
	return (p.Capacity + uint64(p.Shards) - 1) / uint64(p.Shards)
}

// shardParamsOf returns the X-Edgebloom-Shard header of shard i.
func shardParamsOf(name string, p filterParams, i int) http.Header {
	b, _ := json.Marshal(shardParams{Filter: name, Index: i, Capacity: shardCapacity(p), ErrorRate: p.ErrorRate, Generation: p.Generation})
	return http.Header{shardHeader: {string(b)}, "Content-Type": {"application/json"}}
}

func (s *Server) create(ctx context.Context, w http.ResponseWriter, r *http.Request, name string) error {
	var req struct {
		Capacity     *float64 `json:"capacity"`
		ErrorRate    *float64 `json:"errorRate"`
		Shards       *float64 `json:"shards"`
		Canonicalize bool     `json:"canonicalize"`
	}
	if err := readJSON(r, &req, createShape); err != nil {
		return err
	}
	p, err := validParams(req.Capacity, req.ErrorRate, req.Shards)
	if err != nil {
		return err
	}
	p.Canonicalize = req.Canonicalize
	body, _ := json.Marshal(p)
	// Answered only once every shard of a deleted generation of the name
	// refuses it (metaCall): no late request of an older filter is
	// acknowledged after this one is.
	status, got, _, err := s.metaCall(ctx, name, "PUT", body)
	if err != nil {
		return err
	}
	s.remember(name, &got)
	return describe(w, status, name, got)
}

func validParams(capacity, errorRate, shards *float64) (filterParams, error) {
	bad := func(format string, args ...any) (filterParams, error) {
		return filterParams{}, errorf(http.StatusBadRequest, "invalid_params", format, args...)
	}
	n := 1.0
	if shards != nil {
		n = *shards
	}
	switch {
	case capacity == nil || *capacity < 1 || *capacity > 1<<53 || *capacity != math.Trunc(*capacity):
		return bad(`"capacity" must be an integer from 1 to 2^53`)
	case errorRate == nil || !(*errorRate > 0 && *errorRate < 1):
		return bad(`"errorRate" must be a number between 0 and 1 (exclusive)`)
	case n < 1 || n > maxShards || n != math.Trunc(n):
		return bad(`"shards" must be an integer from 1 to %d`, maxShards)
	}
	p := filterParams{Capacity: uint64(*capacity), ErrorRate: *errorRate, Shards: int(n)}
	m, _, err := bloom.Optimal(shardCapacity(p), p.ErrorRate)
	if err != nil {
		return bad("%v", err)
	}
	if m > maxShardBits {
		need := (float64(m)*float64(p.Shards) + maxShardBits - 1) / maxShardBits
		return bad("each of %d shards would need %d bits, more than the %d a shard may hold; use at least %d shards", p.Shards, m, maxShardBits, int(need))
	}
	return p, nil
}

// describe writes a filter's parameters and per-shard sizes.
func describe(w http.ResponseWriter, status int, name string, p filterParams) error {
	m, k, _ := bloom.Optimal(shardCapacity(p), p.ErrorRate)
	writeJSON(w, status, map[string]any{
		"name": name, "capacity": p.Capacity, "errorRate": p.ErrorRate, "shards": p.Shards, "canonicalize": p.Canonicalize,
		"shardCapacity": shardCapacity(p), "shardBits": m, "hashes": k, "bits": m * uint64(p.Shards),
	})
	return nil
}

// call sends one internal request and turns transport failures into 502.
func (s *Server) call(ctx context.Context, object, method, path string, header http.Header, body []byte) (*http.Response, error) {
	if header == nil {
		header = http.Header{}
	}
	if body != nil {
		header.Set("Content-Type", "application/json")
	}
	if id := requestID(ctx); id != "" {
		header.Set(requestIDHeader, id)
	}
	res, err := s.Objects.Fetch(ctx, object, method, path, header, body)
	if err != nil {
		return nil, internalError(http.StatusBadGateway, "shard_unavailable", "the Durable Object "+object+" could not be reached", err)
	}
	return res, nil
}

// decodeResponse decodes a 2xx JSON answer into v, or returns the error the
// object answered with.
func decodeResponse(res *http.Response, v any) error {
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return internalError(http.StatusBadGateway, "shard_unavailable", "reading an internal response failed", err)
	}
	if res.StatusCode >= 300 {
		return objectError(res.StatusCode, body)
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return internalError(http.StatusBadGateway, "shard_protocol", "an internal response is not the expected JSON", err)
	}
	return nil
}

func objectError(status int, body []byte) error {
	var e struct {
		Error *struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == nil {
		return internalError(http.StatusBadGateway, "shard_protocol", fmt.Sprintf("an internal request failed with status %d", status),
			fmt.Errorf("%.500s", body))
	}
	return errorf(status, e.Error.Code, "%s", e.Error.Message)
}

// params returns the parameters of an existing filter, or 404: from the
// cache, or from the meta object when fresh is set or nothing is cached.
func (s *Server) params(ctx context.Context, name string, fresh bool) (filterParams, error) {
	if !fresh {
		s.metaMu.Lock()
		p, ok := s.metas[name]
		s.metaMu.Unlock()
		if ok {
			return p, nil
		}
	}
	status, p, _, err := s.metaCall(ctx, name, "GET", nil)
	if err != nil {
		return p, err
	}
	if status == http.StatusNotFound {
		s.remember(name, nil)
		return p, errorf(http.StatusNotFound, "not_found", "no filter named %q", name)
	}
	s.remember(name, &p)
	return p, nil
}

// metaCall sends method /meta (with body) to the meta object of name and
// returns its status (2xx or 404) and parameters, and the clean-up it
// carried, done (see Objects). Its answer is used only after the clean-up:
// until then a shard could still acknowledge a request of a deleted
// generation. A shard that cannot be told fails the call, and the next
// answer of meta carries the clean-up again.
func (s *Server) metaCall(ctx context.Context, name, method string, body []byte) (int, filterParams, *cleanup, error) {
	var ans metaAnswer
	res, err := s.call(ctx, metaObject(name), method, "/meta", nil, body)
	if err != nil {
		return 0, ans.filterParams, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, ans.filterParams, nil, internalError(http.StatusBadGateway, "shard_unavailable", "reading an internal response failed", err)
	}
	if res.StatusCode >= 300 && res.StatusCode != http.StatusNotFound {
		return 0, ans.filterParams, nil, objectError(res.StatusCode, b)
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		return 0, ans.filterParams, nil, internalError(http.StatusBadGateway, "shard_protocol", "an internal response is not the expected JSON", err)
	}
	if ans.Cleanup != nil {
		if err := s.cleanUp(ctx, name, *ans.Cleanup); err != nil {
			return 0, ans.filterParams, nil, err
		}
	}
	return res.StatusCode, ans.filterParams, ans.Cleanup, nil
}

// cleanUp tells shards 0 to c.Shards-1 of name that generation
// c.Generation, and every older one, is deleted, then tells meta it is done.
// A shard that already holds a newer generation refuses as stale: it has
// moved on, which is what was asked.
func (s *Server) cleanUp(ctx context.Context, name string, c cleanup) error {
	err := fanOut(c.Shards, func(sh int) error {
		b, _ := json.Marshal(shardParams{Filter: name, Index: sh, Generation: c.Generation})
		res, err := s.call(ctx, shardObject(name, sh), "DELETE", "/shard", http.Header{shardHeader: {string(b)}}, nil)
		if err != nil {
			return err
		}
		if err := decodeResponse(res, nil); !isStale(err) {
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	body, _ := json.Marshal(c)
	res, err := s.call(ctx, metaObject(name), "POST", "/cleanup", nil, body)
	if err == nil {
		err = decodeResponse(res, nil)
	}
	if err != nil {
		// The shards refuse the deleted generations, which is what counts;
		// meta keeps the clean-up and the next front to read it does it again.
		log.Printf("edgebloom: request %s: the shards of %q refuse generation %d, but telling meta failed: %v", requestID(ctx), name, c.Generation, err)
	}
	return nil
}

// remember caches p as the parameters of name, or forgets name when p is
// nil. A generation never moves back: an answer older than what is cached
// (two requests that read meta across a PUT) does not replace it.
func (s *Server) remember(name string, p *filterParams) {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	if p == nil {
		delete(s.metas, name)
		return
	}
	if have, ok := s.metas[name]; ok && have.Generation > p.Generation {
		return
	}
	if s.metas == nil || len(s.metas) >= maxCachedMetas {
		s.metas = make(map[string]filterParams)
	}
	s.metas[name] = *p
}

// staleGeneration is the code a shard refuses a request with when the
// request's generation is older than the shard's own.
const staleGeneration = "stale_generation"

func isStale(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Code == staleGeneration
}

// withParams runs op with the parameters of filter name. If a shard refused
// op's request as being of an older generation (the filter was deleted or
// made again since the parameters were read, here or in another instance),
// it reads the parameters from the meta object and runs op once more. op
// must not have written the response when it fails.
func (s *Server) withParams(ctx context.Context, name string, op func(p filterParams) error) error {
	p, err := s.params(ctx, name, false)
	if err != nil {
		return err
	}
	if err = op(p); !isStale(err) {
		return err
	}
	s.remember(name, nil)
	if p, err = s.params(ctx, name, true); err != nil {
		return err
	}
	return op(p)
}

// fanOut runs do for shards 0..n-1 concurrently and returns the first error.
func fanOut(n int, do func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A panic here would end the Go program; ServeHTTP's recover
			// sees only its own goroutine.
			defer func() {
				if v := recover(); v != nil {
					errs[i] = internalError(http.StatusInternalServerError, "internal", "the service failed to serve the request",
						fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
				}
			}()
			errs[i] = do(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) keys(ctx context.Context, w http.ResponseWriter, r *http.Request, name, action string) error {
	var req struct {
		Keys *[]string `json:"keys"`
	}
	if err := readJSON(r, &req, keysShape); err != nil {
		return err
	}
	switch {
	case req.Keys == nil:
		return errorf(http.StatusBadRequest, "invalid_params", "the body must be %s", keysShape)
	case len(*req.Keys) > maxKeys:
		return errorf(http.StatusRequestEntityTooLarge, "too_many_keys", "%d keys; the limit is %d a request", len(*req.Keys), maxKeys)
	}
	keys := *req.Keys
	for i, k := range keys {
		if len(k) > maxKeyBytes {
			return errorf(http.StatusBadRequest, "key_too_long", "key %d is %d bytes; the limit is %d", i, len(k), maxKeyBytes)
		}
	}
	return s.withParams(ctx, name, func(p filterParams) error {
		keys := keys
		if p.Canonicalize {
			var err error
			if keys, err = canonicalKeys(keys); err != nil {
				return err
			}
		}
		return s.route(ctx, w, name, action, p, keys)
	})
}

// route sends each key to its shard and writes the answers in key order.
func (s *Server) route(ctx context.Context, w http.ResponseWriter, name, action string, p filterParams, keys []string) error {
	// Group the keys by shard, remembering where each came from.
	router := snapshot.Router(p.Shards)
	groups := make([][]int, p.Shards)
	for i, k := range keys {
		sh := snapshot.Route(router, k)
		groups[sh] = append(groups[sh], i)
	}
	results := make([]bool, len(keys))
	field := map[string]string{"add": "added", "check": "present"}[action]
	err := fanOut(p.Shards, func(sh int) error {
		if len(groups[sh]) == 0 {
			return nil
		}
		sub := make([]string, len(groups[sh]))
		for j, i := range groups[sh] {
			sub[j] = keys[i]
		}
		body, _ := json.Marshal(map[string][]string{"keys": sub})
		res, err := s.call(ctx, shardObject(name, sh), "POST", "/"+action, shardParamsOf(name, p, sh), body)
		if err != nil {
			return err
		}
		var out map[string][]bool
		if err := decodeResponse(res, &out); err != nil {
			return err
		}
		if len(out[field]) != len(sub) {
			return errorf(http.StatusBadGateway, "shard_protocol", "shard %d answered %d results for %d keys", sh, len(out[field]), len(sub))
		}
		for j, i := range groups[sh] {
			results[i] = out[field][j]
		}
		return nil
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string][]bool{field: results})
	return nil
}

// canonicalKeys maps each key to its canonical URL (package urlkey) for a
// filter made with "canonicalize": true. The first key that is no URL
// urlkey accepts, or whose canonical form is over maxKeyBytes, fails the
// request with the key's index.
func canonicalKeys(keys []string) ([]string, error) {
	out := make([]string, len(keys))
	for i, k := range keys {
		c, err := urlkey.Canonical(k, urlkey.Options{})
		if err != nil {
			e := errorf(http.StatusBadRequest, "invalid_url", "key %d: %v", i, err)
			e.Index = &i
			return nil, e
		}
		if len(c) > maxKeyBytes {
			e := errorf(http.StatusBadRequest, "key_too_long", "key %d is %d bytes once canonicalized; the limit is %d", i, len(c), maxKeyBytes)
			e.Index = &i
			return nil, e
		}
		out[i] = c
	}
	return out, nil
}

func (s *Server) shardStats(ctx context.Context, name string, p filterParams) ([]shardStats, error) {
	stats := make([]shardStats, p.Shards)
	err := fanOut(p.Shards, func(sh int) error {
		res, err := s.call(ctx, shardObject(name, sh), "GET", "/stats", shardParamsOf(name, p, sh), nil)
		if err != nil {
			return err
		}
		return decodeResponse(res, &stats[sh])
	})
	return stats, err
}

func (s *Server) stats(ctx context.Context, w http.ResponseWriter, name string) error {
	return s.withParams(ctx, name, func(p filterParams) error {
		stats, err := s.shardStats(ctx, name, p)
		if err != nil {
			return err
		}
		writeStats(w, name, p, stats)
		return nil
	})
}

// writeStats writes a filter's parameters, its totals and each shard's
// statistics.
func writeStats(w http.ResponseWriter, name string, p filterParams, stats []shardStats) {
	type shardOut struct {
		Index    int    `json:"index"`
		Capacity uint64 `json:"capacity"`
		shardStats
	}
	var total shardStats
	var est float64
	per := make([]shardOut, len(stats))
	for i, st := range stats {
		per[i] = shardOut{Index: i, Capacity: shardCapacity(p), shardStats: st}
		total.Bits += st.Bits
		total.Hashes = st.Hashes
		total.Count += st.Count
		total.SetBits += st.SetBits
		total.ByteLength += st.ByteLength
		if st.EstimatedCount == nil {
			est = math.Inf(1)
		} else {
			est += *st.EstimatedCount
		}
		// A key never added goes to one shard, each as likely: the filter's
		// false-positive rate is the mean of the shards'.
		total.EstimatedErrorRate += st.EstimatedErrorRate / float64(len(stats))
	}
	if !math.IsInf(est, 1) {
		total.EstimatedCount = &est
	}
	if total.Bits > 0 {
		total.FillRatio = float64(total.SetBits) / float64(total.Bits)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"name": name, "capacity": p.Capacity, "errorRate": p.ErrorRate, "shards": p.Shards, "canonicalize": p.Canonicalize,
		"total": total, "perShard": per,
	})
}

func (s *Server) remove(ctx context.Context, w http.ResponseWriter, name string) error {
	s.remember(name, nil)
	// Meta forgets the parameters and answers them with the clean-up,
	// which metaCall does: each shard of this generation (and of any
	// deleted one whose clean-up is not known to be done) is told, so that
	// it refuses every later request of it. A DELETE that failed part way
	// and is sent again finds no filter but the clean-up, finishes it and
	// answers 204.
	status, _, done, err := s.metaCall(ctx, name, "DELETE", nil)
	if err != nil {
		return err
	}
	if status == http.StatusNotFound && done == nil {
		return errorf(http.StatusNotFound, "not_found", "no filter named %q", name)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// encodedSize is the length of a shard's plain encoding, known from the
// parameters alone.
func encodedSize(p filterParams) uint64 {
	m, _, _ := bloom.Optimal(shardCapacity(p), p.ErrorRate)
	return bloom.HeaderSize + 8*((m+63)/64) + 8
}

// shardSnapshot opens shard sh's snapshot: the response body, once the
// shard has answered 200.
func (s *Server) shardSnapshot(ctx context.Context, name string, p filterParams, sh int) (io.ReadCloser, error) {
	res, err := s.call(ctx, shardObject(name, sh), "GET", "/snapshot", shardParamsOf(name, p, sh), nil)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 300 {
		return nil, decodeResponse(res, nil)
	}
	// The length header, when the shard sends one (syumai/workers leaves
	// res.ContentLength 0), is checked before anything is written.
	if n, want := res.Header.Get("Content-Length"), strconv.FormatUint(encodedSize(p), 10); n != "" && n != want {
		res.Body.Close()
		return nil, errorf(http.StatusBadGateway, "shard_protocol", "shard %d's snapshot is %s bytes, want %s", sh, n, want)
	}
	return res.Body, nil
}

// copyShard streams a shard's snapshot to w: exactly encodedSize(p) bytes,
// so the front never holds a shard (up to maxShardBits/8 bytes) in memory.
// A shard that sends another length is an error; the bytes sent by then
// make the response shorter than its Content-Length, a visible failure.
func copyShard(w io.Writer, body io.ReadCloser, p filterParams, sh int) error {
	defer body.Close()
	want := int64(encodedSize(p))
	n, err := io.Copy(w, io.LimitReader(body, want))
	if err == nil && n == want {
		var extra [1]byte
		if m, _ := body.Read(extra[:]); m == 0 {
			return nil
		}
	}
	return internalError(http.StatusBadGateway, "shard_protocol", fmt.Sprintf("shard %d's snapshot is not %d bytes", sh, want), err)
}

// snapshot writes the plain encoding of a one-shard filter, or a sharded
// container (package snapshot), streamed shard by shard.
func (s *Server) snapshot(ctx context.Context, w http.ResponseWriter, name string) error {
	var p filterParams
	var first io.ReadCloser
	err := s.withParams(ctx, name, func(q filterParams) error {
		var err error
		p = q
		first, err = s.shardSnapshot(ctx, name, p, 0)
		return err
	})
	if err != nil {
		return err
	}
	return s.writeSnapshot(ctx, w, name, p, first)
}

// writeSnapshot streams the snapshot whose shard 0 is first.
func (s *Server) writeSnapshot(ctx context.Context, w http.ResponseWriter, name string, p filterParams, first io.ReadCloser) error {
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="`+name+`.ebloom"`)
	if p.Shards == 1 {
		h.Set("X-Edgebloom-Format", "filter")
		h.Set("Content-Length", strconv.FormatUint(encodedSize(p), 10))
		w.WriteHeader(http.StatusOK)
		copyShard(w, first, p, 0)
		return nil
	}
	lengths := make([]uint64, p.Shards)
	total := uint64(snapshot.HeaderSize(p.Shards))
	for i := range lengths {
		lengths[i] = encodedSize(p)
		total += lengths[i]
	}
	h.Set("X-Edgebloom-Format", "sharded")
	h.Set("Content-Length", strconv.FormatUint(total, 10))
	w.WriteHeader(http.StatusOK)
	w.Write(snapshot.AppendHeader(nil, lengths))
	// The status is sent: a shard that fails ends the body short, which
	// the length header makes a visible failure for the client.
	if copyShard(w, first, p, 0) != nil {
		return nil
	}
	for sh := 1; sh < p.Shards; sh++ {
		body, err := s.shardSnapshot(ctx, name, p, sh)
		if err != nil || copyShard(w, body, p, sh) != nil {
			return nil
		}
	}
	return nil
}

func itoa(i int) string { return strconv.Itoa(i) }

func methodIn(method, allowed string) bool {
	for _, m := range strings.Split(allowed, ", ") {
		if m == method {
			return true
		}
	}
	return false
}
