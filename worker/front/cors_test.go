package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// A busy answer's Retry-After is readable by a page on a listed origin:
// its retry waits that long (examples/sync), and without the header exposed
// the browser hides it.
func TestExposeRetryAfter(t *testing.T) {
	rec := httptest.NewRecorder()
	w := &exposeWriter{ResponseWriter: rec}
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	if got := rec.Header().Get("Access-Control-Expose-Headers"); got != "Retry-After" {
		t.Fatalf("Access-Control-Expose-Headers = %q, want Retry-After alone", got)
	}
}
