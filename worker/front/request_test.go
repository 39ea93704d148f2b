//go:build !(js && wasm)

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// bodyEndpoints are the endpoints that read a body, each with a body it
// takes.
var bodyEndpoints = []struct{ method, path, body string }{
	{"PUT", "/v1/filters/made", `{"capacity":1000,"errorRate":0.01}`},
	{"POST", "/v1/filters/f/add", `{"keys":["a"]}`},
	{"POST", "/v1/filters/f/check", `{"keys":["a"]}`},
	{"POST", "/v1/tokens", `{"scope":"read","filter":"f","expiresIn":60}`},
}

// TestOneReading: a body has one reading. encoding/json takes the last of
// duplicate names and matches names without case; the front refuses both,
// with a 400 that names the field, and does nothing of what the body asks.
func TestOneReading(t *testing.T) {
	c, _ := newTestServer(t)
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 1000, "errorRate": 0.01}, 201)
	for _, tt := range []struct {
		method, path, body, field string
	}{
		{"POST", "/v1/tokens", `{"scope":"read","scope":"write","filter":"f","expiresIn":60}`, `"scope"`},
		{"POST", "/v1/tokens", `{"scope":"read","filter":"f","filter":"*","expiresIn":60}`, `"filter"`},
		{"POST", "/v1/tokens", `{"scope":"read","filter":"f","expiresIn":60,"expiresIn":31622400}`, `"expiresIn"`},
		{"POST", "/v1/tokens", `{"Scope":"write","filter":"f","expiresIn":60}`, `"Scope"`},
		{"POST", "/v1/tokens", `{"scope":"read","FILTER":"*","expiresIn":60}`, `"FILTER"`},
		{"POST", "/v1/tokens", `{"scope":"read","sc\u006fpe":"write","filter":"f","expiresIn":60}`, `"scope"`},
		{"POST", "/v1/filters/f/add", `{"keys":["a"],"keys":["b"]}`, `"keys"`},
		{"POST", "/v1/filters/f/add", `{"KEYS":["a"]}`, `"KEYS"`},
		{"POST", "/v1/filters/f/add", `{"Keys":["a"]}`, `"Keys"`},
		{"POST", "/v1/filters/f/check", `{"keys":[],"keys":["a"]}`, `"keys"`},
		{"PUT", "/v1/filters/g", `{"capacity":1000,"errorRate":0.01,"capacity":10}`, `"capacity"`},
		{"PUT", "/v1/filters/g", `{"capacity":1000,"ErrorRate":0.01}`, `"ErrorRate"`},
		{"PUT", "/v1/filters/g", `{"capacity":1000,"errorRate":0.01,"canonicalize":false,"canonicalize":true}`, `"canonicalize"`},
	} {
		status, body, _ := c.do(tt.method, tt.path, tt.body)
		var e struct {
			Error struct{ Code, Message string }
		}
		json.Unmarshal(body, &e)
		if status != 400 || e.Error.Code != "invalid_json" || !strings.Contains(e.Error.Message, tt.field) {
			t.Errorf("%s %s %s: got %d %s; want 400 invalid_json naming %s", tt.method, tt.path, tt.body, status, body, tt.field)
		}
	}
	if status, _, _ := c.do("GET", "/v1/filters/g", ""); status != 404 {
		t.Errorf("a refused PUT made the filter: GET %d", status)
	}
	check := c.json("POST", "/v1/filters/f/check", map[string]any{"keys": []string{"a", "b"}}, 200)
	if got := check["present"].([]any); got[0] != false || got[1] != false {
		t.Errorf("a refused add added: check %v", got)
	}
}

// failingReader fails the test that reads it.
type failingReader struct{ t *testing.T }

func (f failingReader) Read([]byte) (int, error) {
	f.t.Error("the body was read")
	return 0, io.EOF
}

// countingReader is n bytes of JSON-ish filler that counts what is read.
type countingReader struct{ n, read int }

func (c *countingReader) Read(p []byte) (int, error) {
	if c.read >= c.n {
		return 0, io.EOF
	}
	k := min(len(p), c.n-c.read)
	for i := range p[:k] {
		p[i] = ' '
	}
	c.read += k
	return k, nil
}

// TestContentLength: a Content-Length that gives no length, or one over
// the limit, is refused before the body is read, with the service's error
// JSON; a body without Content-Length is read to one byte past the limit
// at most. (net/http's server refuses a malformed Content-Length itself, so
// the requests go to the handler as workerd's bridge hands them over.)
func TestContentLength(t *testing.T) {
	s := &Server{Token: func() string { return testToken }, Objects: newMemoryObjects()}
	serve := func(method, path string, body io.Reader, length ...string) (int, string) {
		r := httptest.NewRequest(method, path, body)
		r.ContentLength = -1
		r.Header.Set("Authorization", "Bearer "+testToken)
		for _, v := range length {
			r.Header.Add("Content-Length", v)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		var e struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: %q is not the service's error JSON", method, path, w.Body)
		}
		return w.Code, e.Error.Code
	}
	if code, _ := serve("PUT", "/v1/filters/f", strings.NewReader(`{"capacity":1000,"errorRate":0.01}`), "34"); code != 201 {
		t.Fatalf("PUT with its length: %d", code)
	}
	for _, tt := range []struct {
		name   string
		length []string
		status int
		code   string
	}{
		{"empty", []string{""}, 411, "length_required"},
		{"spaces", []string{"  "}, 411, "length_required"},
		{"negative", []string{"-1"}, 400, "invalid_length"},
		{"negative large", []string{"-99999999999"}, 400, "invalid_length"},
		{"a sign", []string{"+12"}, 400, "invalid_length"},
		{"not a number", []string{"abc"}, 400, "invalid_length"},
		{"a fraction", []string{"1.5"}, 400, "invalid_length"},
		{"an exponent", []string{"1e3"}, 400, "invalid_length"},
		{"a space first", []string{" 12"}, 400, "invalid_length"},
		{"two values joined", []string{"12, 12"}, 400, "invalid_length"},
		{"two headers", []string{"12", "12"}, 400, "invalid_length"},
		{"over the limit", []string{"1048577"}, 413, "body_too_large"},
		{"past int64", []string{"99999999999999999999"}, 413, "body_too_large"},
	} {
		for _, e := range bodyEndpoints {
			status, code := serve(e.method, e.path, failingReader{t}, tt.length...)
			if status != tt.status || code != tt.code {
				t.Errorf("%s: %s %s: got %d %s; want %d %s", tt.name, e.method, e.path, status, code, tt.status, tt.code)
			}
		}
	}
	// No Content-Length: read to one byte past the limit, then refused.
	for _, e := range bodyEndpoints {
		body := &countingReader{n: 50 << 20}
		status, code := serve(e.method, e.path, body)
		if status != 413 || code != "body_too_large" || body.read > maxBodyBytes+1<<16 {
			t.Errorf("%s %s, 50 MiB without Content-Length: got %d %s, %d bytes read; want 413 body_too_large, about %d read", e.method, e.path, status, code, body.read, maxBodyBytes)
		}
	}
	// Everything works after.
	if status, _ := serve("POST", "/v1/filters/f/add", strings.NewReader(`{"keys":["a"]}`), "14"); status != http.StatusOK {
		t.Errorf("an add after the refusals: %d", status)
	}
}
