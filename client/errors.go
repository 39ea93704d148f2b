package client

import (
	"fmt"
	"strings"
	"time"
)

// An Error is an error answer of the service: its HTTP status and the
// service's machine-readable code, message and, for a server error (5xx),
// the request id under which the service logged what failed (worker/README.md,
// "Errors"). Compare it with the sentinels below through errors.Is, or read
// it with errors.As:
//
//	if errors.Is(err, client.ErrNotFound) { ... }
//	var e *client.Error
//	if errors.As(err, &e) { log.Printf("%s (request %s)", e.Code, e.RequestID) }
type Error struct {
	// Status is the HTTP status of the answer, 400 to 599.
	Status int
	// Code is the service's code: "not_found", "shard_unavailable", ...
	// An answer that carries no code of the service's shape (a proxy's
	// error page) has the code "http_<status>".
	Code string
	// Message says what went wrong, in the service's words.
	Message string
	// RequestID is the id the service logged a server error under
	// ("requestId"), empty for a client error (4xx).
	RequestID string
	// Index is the key the error is about (key_too_long, invalid_url),
	// counted in the keys given to Add or Check, or -1.
	Index int
	// RetryAfter is the answer's Retry-After, or 0.
	RetryAfter time.Duration
	// Method and Path name the request: "POST /v1/filters/crawl/add".
	Method, Path string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "client: %s %s: %d %s", e.Method, e.Path, e.Status, e.Code)
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request " + e.RequestID + ")")
	}
	return b.String()
}

// Is reports whether target is a sentinel of this package that e matches:
// one with a code matches an error of that code, one with a status alone
// (ErrUnauthorized, ErrForbidden) every error of that status.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t.Method != "" {
		return false
	}
	if t.Code != "" {
		return t.Code == e.Code
	}
	return t.Status != 0 && t.Status == e.Status
}

// Sentinels for errors.Is. They match *Error values by code (or, for
// ErrUnauthorized and ErrForbidden, by status); never change them.
var (
	// ErrNotFound: no such filter (404 not_found).
	ErrNotFound = &Error{Code: "not_found"}
	// ErrConflict: a PUT with other parameters than the filter's (409 conflict).
	ErrConflict = &Error{Code: "conflict"}
	// ErrStaleGeneration: the filter was deleted and made again twice while
	// the request was served (409 stale_generation). The client sends such
	// a request again before it returns this.
	ErrStaleGeneration = &Error{Code: "stale_generation"}
	// ErrUnauthorized: any 401, no credential or a token that is not
	// valid (unauthorized, token_malformed, token_bad_signature, token_expired).
	ErrUnauthorized = &Error{Status: 401}
	// ErrTokenExpired: the token is past its expiry (401 token_expired).
	ErrTokenExpired = &Error{Code: "token_expired"}
	// ErrForbidden: any 403, a token of another filter or scope.
	ErrForbidden = &Error{Status: 403}
	// ErrBusy: the front's budget for snapshots and changes is taken (503 busy).
	ErrBusy = &Error{Code: "busy"}
	// ErrRateLimited: 429, from whatever stands in front of the service.
	ErrRateLimited = &Error{Status: 429}
	// ErrShardUnavailable: a shard could not be reached (502 shard_unavailable).
	ErrShardUnavailable = &Error{Code: "shard_unavailable"}
	// ErrCheckpointPending: the filter's first checkpoint is being
	// published (503 checkpoint_pending).
	ErrCheckpointPending = &Error{Code: "checkpoint_pending"}
	// ErrCheckpointGone: the checkpoint is no longer kept, or of an earlier
	// generation (410 checkpoint_gone).
	ErrCheckpointGone = &Error{Code: "checkpoint_gone"}
	// ErrKeyTooLong: a key over 8 KiB, as the service counts it (400 key_too_long).
	ErrKeyTooLong = &Error{Code: "key_too_long"}
	// ErrInvalidURL: a key that is no URL, for a filter made with
	// Canonicalize (400 invalid_url).
	ErrInvalidURL = &Error{Code: "invalid_url"}
)

// A BatchError is the error of an Add or Check whose keys took several
// requests, some of which were answered: Results holds the answers of the
// answered ones, and Answered tells which. It wraps the first failure, so
// errors.Is(err, ErrShardUnavailable) and errors.As(err, &e) with e an
// *Error see through it.
//
// For an Add it means: every key i with Answered[i] is in the filter
// (Results[i] says whether it was new); a key without may be in it or not (a
// request that failed may have reached some of its shards before it failed);
// adding it again is safe, and may then report it as not new.
type BatchError struct {
	Err      error
	Results  []bool // one a key, in the order given; meaningful where Answered
	Answered []bool
}

func (e *BatchError) Error() string {
	n := 0
	for _, a := range e.Answered {
		if a {
			n++
		}
	}
	return fmt.Sprintf("%v (%d of %d keys answered)", e.Err, n, len(e.Answered))
}

// Unwrap returns the first failure.
func (e *BatchError) Unwrap() error { return e.Err }
