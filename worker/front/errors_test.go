//go:build !(js && wasm)

// Server errors as a client and an operator see them: a code and the
// request id in the answer, the detail only in the log under that id.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// serverError decodes a 5xx answer and checks what every one carries: its
// code, a message and the request id, and nothing of the detail.
func serverError(t *testing.T, body []byte, code string, detail ...string) string {
	t.Helper()
	var e struct {
		Error struct{ Code, Message, RequestID string }
	}
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("body %q is not JSON: %v", body, err)
	}
	if e.Error.Code != code || e.Error.Message == "" || len(e.Error.RequestID) < 16 {
		t.Errorf("got %s; want code %q, a message and a request id", body, code)
	}
	for _, d := range append(detail, "goroutine", ".go:", "panic") {
		if bytes.Contains(body, []byte(d)) {
			t.Errorf("the answer %s carries %q", body, d)
		}
	}
	return e.Error.RequestID
}

// captureLog sends the standard logger's output to a buffer for the test.
func captureLog(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	log.SetOutput(&buf)
	t.Cleanup(func() { log.SetOutput(os.Stderr) })
	return &buf
}

// panicObjects stands in for Durable Objects whose binding panics.
type panicObjects struct{ Objects }

func (p panicObjects) Fetch(ctx context.Context, object, method, path string, header http.Header, body []byte) (*http.Response, error) {
	if strings.HasPrefix(object, "shard:") {
		_ = object[len(object)] // out of range: a real runtime panic
	}
	return p.Objects.Fetch(ctx, object, method, path, header, body)
}

func TestServerErrorsCarryCodeAndRequestID(t *testing.T) {
	logs := captureLog(t)
	objs := newMemoryObjects()
	srv := httptest.NewServer(&Server{Token: func() string { return testToken }, Objects: panicObjects{objs}})
	t.Cleanup(srv.Close)
	c := &client{t, srv.URL}
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 100, "errorRate": 0.01, "shards": 2}, 201)

	// A panic in a shard call's goroutine, and one in the handler's own.
	status, body, _ := c.do("POST", "/v1/filters/f/add", `{"keys":["a","b","c"]}`)
	if status != 500 {
		t.Fatalf("add with a panicking binding: got %d %s; want 500", status, body)
	}
	id := serverError(t, body, "internal", "index out of range", "runtime error")
	if !strings.Contains(logs.String(), id) || !strings.Contains(logs.String(), "index out of range") {
		t.Errorf("the log does not have the panic under request id %s:\n%s", id, logs)
	}
	status, body, _ = c.do("GET", "/v1/filters/f", "")
	if status != 500 {
		t.Fatalf("stats with a panicking binding: got %d %s; want 500", status, body)
	}
	if serverError(t, body, "internal") == id {
		t.Error("two requests got the same request id")
	}

	// An unreachable object: 502 without the transport error's text.
	logs.Reset()
	c2, mem := newTestServer(t)
	c2.json("PUT", "/v1/filters/f", map[string]any{"capacity": 100, "errorRate": 0.01, "shards": 2}, 201)
	mem.fail = func(o string) bool { return strings.HasPrefix(o, "shard:") }
	status, body, _ = c2.do("POST", "/v1/filters/f/check", `{"keys":["a"]}`)
	if status != 502 {
		t.Fatalf("unreachable shard: got %d %s; want 502", status, body)
	}
	id = serverError(t, body, "shard_unavailable", io.ErrUnexpectedEOF.Error())
	if !strings.Contains(logs.String(), id) || !strings.Contains(logs.String(), io.ErrUnexpectedEOF.Error()) {
		t.Errorf("the log does not have the transport error under request id %s:\n%s", id, logs)
	}

	// Cloudflare's ray id is the request id when there is one.
	status, body, _ = c2.do("POST", "/v1/filters/f/check", `{"keys":["a"]}`, "Cf-Ray", "8f1e2d3c4b5a6978-AMS")
	if got := serverError(t, body, "shard_unavailable"); status != 502 || got != "8f1e2d3c4b5a6978-AMS" {
		t.Errorf("with Cf-Ray: got %d, request id %q", status, got)
	}
}
