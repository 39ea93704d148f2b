//go:build !(js && wasm)

package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/edgebloom/edgebloom/snapshot"
)

const testToken = "test-token"

type client struct {
	t   *testing.T
	url string
}

func newTestServer(t *testing.T) (*client, *memoryObjects) {
	t.Helper()
	objs := newMemoryObjects()
	srv := httptest.NewServer(&Server{Token: func() string { return testToken }, Objects: objs})
	t.Cleanup(srv.Close)
	return &client{t, srv.URL}, objs
}

// do sends a request with the test token and returns status and body.
func (c *client) do(method, path, body string, header ...string) (int, []byte, http.Header) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b, res.Header
}

func (c *client) json(method, path string, body any, want int) map[string]any {
	c.t.Helper()
	b, _ := json.Marshal(body)
	status, out, _ := c.do(method, path, string(b))
	if status != want {
		c.t.Fatalf("%s %s: got status %d; want %d (%s)", method, path, status, want, out)
	}
	var v map[string]any
	json.Unmarshal(out, &v)
	return v
}

func keysBody(keys []string) string {
	b, _ := json.Marshal(map[string][]string{"keys": keys})
	return string(b)
}

func TestErrors(t *testing.T) {
	c, _ := newTestServer(t)
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 1000, "errorRate": 0.01}, 201)
	long := strings.Repeat("k", maxKeyBytes+1)
	many := make([]string, maxKeys+1)
	tests := []struct {
		name, method, path, body string
		header                   []string
		status                   int
		code                     string
	}{
		{"no token", "GET", "/v1/filters/f", "", []string{"Authorization", ""}, 401, "unauthorized"},
		{"wrong token", "GET", "/v1/filters/f", "", []string{"Authorization", "Bearer test-tokem"}, 401, "unauthorized"},
		{"not bearer", "GET", "/v1/filters/f", "", []string{"Authorization", "Basic " + testToken}, 401, "unauthorized"},
		{"unknown path", "GET", "/v2/x", "", nil, 404, "not_found"},
		{"unknown action", "POST", "/v1/filters/f/union", "{}", nil, 404, "not_found"},
		{"unknown filter", "GET", "/v1/filters/nope", "", nil, 404, "not_found"},
		{"unknown filter add", "POST", "/v1/filters/nope/add", `{"keys":["a"]}`, nil, 404, "not_found"},
		{"unknown filter delete", "DELETE", "/v1/filters/nope", "", nil, 404, "not_found"},
		{"unknown filter snapshot", "GET", "/v1/filters/nope/snapshot", "", nil, 404, "not_found"},
		{"wrong method filter", "POST", "/v1/filters/f", "{}", nil, 405, "method_not_allowed"},
		{"wrong method add", "GET", "/v1/filters/f/add", "", nil, 405, "method_not_allowed"},
		{"wrong method snapshot", "DELETE", "/v1/filters/f/snapshot", "", nil, 405, "method_not_allowed"},
		{"bad name", "PUT", "/v1/filters/.x", `{"capacity":1,"errorRate":0.1}`, nil, 400, "invalid_name"},
		{"invalid json", "PUT", "/v1/filters/g", `{"capacity":`, nil, 400, "invalid_json"},
		{"trailing data", "PUT", "/v1/filters/g", `{"capacity":1,"errorRate":0.1} {}`, nil, 400, "invalid_json"},
		{"unknown field", "PUT", "/v1/filters/g", `{"capacity":1,"errorRate":0.1,"x":1}`, nil, 400, "invalid_json"},
		{"capacity missing", "PUT", "/v1/filters/g", `{"errorRate":0.1}`, nil, 400, "invalid_params"},
		{"capacity zero", "PUT", "/v1/filters/g", `{"capacity":0,"errorRate":0.1}`, nil, 400, "invalid_params"},
		{"capacity fraction", "PUT", "/v1/filters/g", `{"capacity":1.5,"errorRate":0.1}`, nil, 400, "invalid_params"},
		{"capacity string", "PUT", "/v1/filters/g", `{"capacity":"5","errorRate":0.1}`, nil, 400, "invalid_json"},
		{"error rate 1", "PUT", "/v1/filters/g", `{"capacity":5,"errorRate":1}`, nil, 400, "invalid_params"},
		{"error rate 0", "PUT", "/v1/filters/g", `{"capacity":5,"errorRate":0}`, nil, 400, "invalid_params"},
		{"shards 0", "PUT", "/v1/filters/g", `{"capacity":5,"errorRate":0.1,"shards":0}`, nil, 400, "invalid_params"},
		{"shards too many", "PUT", "/v1/filters/g", `{"capacity":5,"errorRate":0.1,"shards":65}`, nil, 400, "invalid_params"},
		{"shard too large", "PUT", "/v1/filters/g", `{"capacity":100000000,"errorRate":0.01,"shards":2}`, nil, 400, "invalid_params"},
		{"keys missing", "POST", "/v1/filters/f/add", `{}`, nil, 400, "invalid_params"},
		{"keys not strings", "POST", "/v1/filters/f/add", `{"keys":[1]}`, nil, 400, "invalid_json"},
		{"keys a string", "POST", "/v1/filters/f/add", `{"keys":"a"}`, nil, 400, "invalid_json"},
		{"keys an object", "POST", "/v1/filters/f/check", `{"keys":{"a":1}}`, nil, 400, "invalid_json"},
		{"keys null", "POST", "/v1/filters/f/check", `{"keys":null}`, nil, 400, "invalid_params"},
		{"add body array", "POST", "/v1/filters/f/add", `[]`, nil, 400, "invalid_json"},
		{"add body null", "POST", "/v1/filters/f/add", `null`, nil, 400, "invalid_json"},
		{"add body string", "POST", "/v1/filters/f/add", `"x"`, nil, 400, "invalid_json"},
		{"check body number", "POST", "/v1/filters/f/check", ` 12`, nil, 400, "invalid_json"},
		{"check body empty", "POST", "/v1/filters/f/check", ``, nil, 400, "invalid_json"},
		{"put body array", "PUT", "/v1/filters/g", `[]`, nil, 400, "invalid_json"},
		{"put body null", "PUT", "/v1/filters/g", `null`, nil, 400, "invalid_json"},
		{"put body string", "PUT", "/v1/filters/g", `"x"`, nil, 400, "invalid_json"},
		{"put body true", "PUT", "/v1/filters/g", `true`, nil, 400, "invalid_json"},
		{"shards a string", "PUT", "/v1/filters/g", `{"capacity":5,"errorRate":0.1,"shards":"2"}`, nil, 400, "invalid_json"},
		{"canonicalize a number", "PUT", "/v1/filters/g", `{"capacity":5,"errorRate":0.1,"canonicalize":1}`, nil, 400, "invalid_json"},
		{"key too long", "POST", "/v1/filters/f/add", keysBody([]string{"a", long}), nil, 400, "key_too_long"},
		{"key too long check", "POST", "/v1/filters/f/check", keysBody([]string{long}), nil, 400, "key_too_long"},
		{"too many keys", "POST", "/v1/filters/f/add", keysBody(many), nil, 413, "too_many_keys"},
		{"body too large", "POST", "/v1/filters/f/check", `{"keys":["` + strings.Repeat("a", maxBodyBytes) + `"]}`, nil, 413, "body_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, header := c.do(tt.method, tt.path, tt.body, tt.header...)
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(body, &e); err != nil {
				t.Fatalf("body %q is not JSON: %v", body, err)
			}
			if status != tt.status || e.Error.Code != tt.code || e.Error.Message == "" {
				t.Errorf("got %d %q (%s); want %d %q", status, e.Error.Code, e.Error.Message, tt.status, tt.code)
			}
			// Messages speak of JSON and the API, never of Go.
			for _, leak := range []string{"Go ", "struct", "[]string", "float64", "*", "json:", "main.", ".go"} {
				if strings.Contains(e.Error.Message, leak) {
					t.Errorf("message %q contains %q", e.Error.Message, leak)
				}
			}
			if tt.code == "invalid_json" && tt.path != "/v1/filters/g" && !strings.Contains(e.Error.Message, keysShape) {
				t.Errorf("message %q does not name the shape %s", e.Error.Message, keysShape)
			}
			if tt.code == "invalid_json" && tt.path == "/v1/filters/g" && tt.name != "unknown field" && tt.name != "invalid json" && !strings.Contains(e.Error.Message, createShape) {
				t.Errorf("message %q does not name the shape %s", e.Error.Message, createShape)
			}
			if status == 405 && header.Get("Allow") == "" {
				t.Errorf("405 without Allow")
			}
			if status == 401 && header.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		})
	}
}

func TestAuthScheme(t *testing.T) {
	c, _ := newTestServer(t)
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 1000, "errorRate": 0.01}, 201)
	for _, tt := range []struct {
		header string
		want   int
	}{
		{"Bearer " + testToken, 200},
		{"bearer " + testToken, 200}, // RFC 9110 §11.1: the scheme is case-insensitive
		{"BEARER " + testToken, 200},
		{"BeArEr   " + testToken, 200}, // 1*SP between scheme and token
		{"Bearer", 401},
		{"Bearer ", 401},
		{"Bearer" + testToken, 401},
		{"Bearerx " + testToken, 401},
		{"Basic " + testToken, 401},
		{testToken, 401},
		{"bearer " + strings.ToUpper(testToken), 401}, // the token itself is case-sensitive
	} {
		status, body, _ := c.do("GET", "/v1/filters/f", "", "Authorization", tt.header)
		if status != tt.want {
			t.Errorf("Authorization %q: got %d (%s); want %d", tt.header, status, body, tt.want)
		}
	}
}

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

func TestNoTokenConfigured(t *testing.T) {
	srv := httptest.NewServer(&Server{Token: func() string { return "" }, Objects: newMemoryObjects()})
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/v1/filters/f", nil)
	req.Header.Set("Authorization", "Bearer ")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 500 {
		t.Errorf("got %d; want 500 when EDGEBLOOM_TOKEN is empty", res.StatusCode)
	}
	serverError(t, body, "not_configured")
}

func TestCreate(t *testing.T) {
	c, _ := newTestServer(t)
	p := map[string]any{"capacity": 10000, "errorRate": 0.001, "shards": 4}
	got := c.json("PUT", "/v1/filters/f", p, 201)
	if got["shards"] != 4.0 || got["shardCapacity"] != 2500.0 || got["hashes"] != 10.0 {
		t.Errorf("PUT: got %v", got)
	}
	c.json("PUT", "/v1/filters/f", p, 200)
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 10000, "errorRate": 0.001, "shards": 2}, 409)
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 10001, "errorRate": 0.001, "shards": 4}, 409)
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 10000, "errorRate": 0.01, "shards": 4}, 409)
}

func urls(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("https://example.com/%s/%d?q=é", prefix, i)
	}
	return out
}

func TestAddCheckStatsSnapshotDelete(t *testing.T) {
	for _, shards := range []int{1, 3} {
		t.Run(fmt.Sprint(shards, " shards"), func(t *testing.T) {
			c, _ := newTestServer(t)
			c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 5000, "errorRate": 0.01, "shards": shards}, 201)
			keys := urls("a", 2000)
			added := c.json("POST", "/v1/filters/f/add", map[string]any{"keys": append(keys, keys[0])}, 200)["added"].([]any)
			fresh := 0
			for _, a := range added[:len(keys)] {
				if a == true {
					fresh++
				}
			}
			if added[len(keys)] != false || fresh < len(keys)-20 {
				t.Errorf("add: %d of %d new, repeated key added=%v", fresh, len(keys), added[len(keys)])
			}
			present := c.json("POST", "/v1/filters/f/check", map[string]any{"keys": keys}, 200)["present"].([]any)
			for i, p := range present {
				if p != true {
					t.Fatalf("check(%q): got %v; want true", keys[i], p)
				}
			}
			absent := c.json("POST", "/v1/filters/f/check", map[string]any{"keys": urls("b", 2000)}, 200)["present"].([]any)
			fp := 0
			for _, p := range absent {
				if p == true {
					fp++
				}
			}
			if fp > 60 { // 1% of 2000 expected at capacity, and the filter is under it
				t.Errorf("%d false positives in 2000", fp)
			}

			st := c.json("GET", "/v1/filters/f", nil, 200)
			total := st["total"].(map[string]any)
			per := st["perShard"].([]any)
			if len(per) != shards || total["count"] != float64(fresh) {
				t.Errorf("stats: %d shards, count %v; want %d, %d", len(per), total["count"], shards, fresh)
			}
			for _, f := range []string{"bits", "hashes", "count", "estimatedCount", "fillRatio", "estimatedErrorRate"} {
				if _, ok := total[f]; !ok {
					t.Errorf("stats: total has no %q", f)
				}
			}

			status, snap, header := c.do("GET", "/v1/filters/f/snapshot", "")
			if status != 200 {
				t.Fatalf("snapshot: %d %s", status, snap)
			}
			wantFormat := map[bool]string{true: "filter", false: "sharded"}[shards == 1]
			if header.Get("X-Edgebloom-Format") != wantFormat {
				t.Errorf("snapshot format %q; want %q", header.Get("X-Edgebloom-Format"), wantFormat)
			}
			set, err := snapshot.Load(snap, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range keys {
				if !set.HasString(k) {
					t.Fatalf("snapshot HasString(%q): got false; want true", k)
				}
			}
			for i, k := range urls("b", 2000) {
				if set.HasString(k) != (absent[i] == true) {
					t.Fatalf("snapshot and service disagree on %q", k)
				}
			}

			if status, body, _ := c.do("DELETE", "/v1/filters/f", ""); status != 204 || len(body) != 0 {
				t.Errorf("DELETE: %d %q; want 204 and no body", status, body)
			}
			c.json("GET", "/v1/filters/f", nil, 404)
			// Made again, it starts empty.
			c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 5000, "errorRate": 0.01, "shards": shards}, 201)
			present = c.json("POST", "/v1/filters/f/check", map[string]any{"keys": keys[:100]}, 200)["present"].([]any)
			for _, p := range present {
				if p == true {
					t.Fatal("a deleted filter's keys are present in its successor")
				}
			}
		})
	}
}

func TestShardFailure(t *testing.T) {
	c, objs := newTestServer(t)
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 100, "errorRate": 0.01, "shards": 2}, 201)
	objs.fail = func(o string) bool { return strings.HasPrefix(o, "shard:") }
	got := c.json("POST", "/v1/filters/f/add", map[string]any{"keys": []string{"a", "b", "c"}}, 502)
	if got["error"].(map[string]any)["code"] != "shard_unavailable" {
		t.Errorf("got %v", got)
	}
}

func TestEmptyKeys(t *testing.T) {
	c, _ := newTestServer(t)
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 100, "errorRate": 0.01, "shards": 2}, 201)
	got := c.json("POST", "/v1/filters/f/add", map[string]any{"keys": []string{}}, 200)
	if a, ok := got["added"].([]any); !ok || len(a) != 0 {
		t.Errorf("add of no keys: got %v; want an empty list", got)
	}
	if status, body, _ := c.do("POST", "/v1/filters/f/add", `{"keys":[""]}`); status != 200 || !bytes.Contains(body, []byte("true")) {
		t.Errorf("empty key: %d %s", status, body)
	}
}

func TestCanonicalize(t *testing.T) {
	c, _ := newTestServer(t)
	got := c.json("PUT", "/v1/filters/urls", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 3, "canonicalize": true}, 201)
	if got["canonicalize"] != true {
		t.Errorf("PUT: got %v; want canonicalize true", got)
	}
	c.json("PUT", "/v1/filters/urls", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 3, "canonicalize": true}, 200)
	c.json("PUT", "/v1/filters/urls", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 3}, 409)
	c.json("PUT", "/v1/filters/plain", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 3}, 201)
	c.json("PUT", "/v1/filters/plain", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 3, "canonicalize": true}, 409)

	spellings := []string{
		"https://例子.测试/新闻?id=1&utm_source=x",
		"HTTPS://xn--fsqu00a.xn--0zwm56d:443/%E6%96%B0%E9%97%BB?id=1#top",
		"https://user@例子.测试/a/../新闻?id=1&fbclid=2",
	}
	added := c.json("POST", "/v1/filters/urls/add", map[string]any{"keys": spellings}, 200)["added"].([]any)
	if added[0] != true || added[1] != false || added[2] != false {
		t.Errorf("add of three spellings of one URL: got %v; want [true false false]", added)
	}
	present := c.json("POST", "/v1/filters/urls/check", map[string]any{"keys": []string{"https://xn--fsqu00a.xn--0zwm56d/%E6%96%B0%E9%97%BB?id=1", "https://例子.测试/新闻?id=2"}}, 200)["present"].([]any)
	if present[0] != true || present[1] != false {
		t.Errorf("check: got %v; want [true false]", present)
	}
	// Without canonicalize, spellings are different keys.
	added = c.json("POST", "/v1/filters/plain/add", map[string]any{"keys": spellings}, 200)["added"].([]any)
	if added[0] != true || added[1] != true || added[2] != true {
		t.Errorf("plain filter: got %v; want [true true true]", added)
	}
	if st := c.json("GET", "/v1/filters/urls", nil, 200); st["canonicalize"] != true || st["total"].(map[string]any)["count"] != 1.0 {
		t.Errorf("stats: canonicalize %v, count %v; want true, 1", st["canonicalize"], st["total"].(map[string]any)["count"])
	}

	// The snapshot holds the canonical keys.
	_, snap, _ := c.do("GET", "/v1/filters/urls/snapshot", "")
	set, err := snapshot.Load(snap, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if !set.HasString("https://xn--fsqu00a.xn--0zwm56d/%E6%96%B0%E9%97%BB?id=1") {
		t.Error("snapshot: the canonical key is absent")
	}

	for _, tt := range []struct {
		keys  []string
		index int
		code  string
	}{
		{[]string{"https://ok.example/", "ftp://no.example/"}, 1, "invalid_url"},
		{[]string{"not a url"}, 0, "invalid_url"},
		{[]string{"https://a.example/", "https://b.example/", "http://[::1/"}, 2, "invalid_url"},
		{[]string{"https://a.example/" + strings.Repeat("é", 3000)}, 0, "key_too_long"},
	} {
		for _, action := range []string{"add", "check"} {
			status, body, _ := c.do("POST", "/v1/filters/urls/"+action, keysBody(tt.keys))
			var e struct {
				Error struct {
					Code, Message string
					Index         *int
				}
			}
			json.Unmarshal(body, &e)
			if status != 400 || e.Error.Code != tt.code || e.Error.Index == nil || *e.Error.Index != tt.index ||
				!strings.Contains(e.Error.Message, fmt.Sprintf("key %d", tt.index)) {
				t.Errorf("%s %q: got %d %s; want 400 %s naming key %d", action, tt.keys, status, body, tt.code, tt.index)
			}
		}
	}
	// A rejected request adds nothing.
	if st := c.json("GET", "/v1/filters/urls", nil, 200); st["total"].(map[string]any)["count"] != 1.0 {
		t.Errorf("count after rejected adds: %v; want 1", st["total"].(map[string]any)["count"])
	}
}

// TestValidUTF8 checks validUTF8 against the WHATWG decoder itself: Node's
// TextDecoder decodes the same random byte strings (rich in lead bytes,
// continuation bytes and bytes that are never UTF-8), and both must give
// the same text.
func TestValidUTF8(t *testing.T) {
	alphabet := []byte{'a', '"', 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef,
		0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf7, 0xf8, 0xfe, 0xff}
	rng := rand.New(rand.NewPCG(17, 17))
	inputs := [][]byte{
		nil, []byte("plain"), []byte("e\xe2\x82z"), []byte("\xed\xa0\x80"), []byte("\xf0\x9f\x98"), []byte("é😀"), []byte("\xc0\xaf"),
		[]byte("\xf4\x90\x80\x80"), []byte("\xe0\x80\x80"), []byte("\xef\xbf\xbd"), []byte("a\xffb"),
	}
	for range 5000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		inputs = append(inputs, b)
	}
	var in bytes.Buffer
	for _, b := range inputs {
		in.WriteString(hex.EncodeToString(b) + "\n")
	}
	cmd := exec.Command("node", "-e", `
const lines = require('fs').readFileSync(0, 'latin1').split('\n').slice(0, -1);
const dec = new TextDecoder(), enc = new TextEncoder();
process.stdout.write(lines.map((h) => Buffer.from(enc.encode(dec.decode(Buffer.from(h, 'hex')))).toString('hex')).join('\n') + '\n');
`)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node (the reference decoder) failed: %v", err)
	}
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(want) != len(inputs) {
		t.Fatalf("node answered %d lines for %d inputs", len(want), len(inputs))
	}
	for i, b := range inputs {
		got := validUTF8(b)
		if hex.EncodeToString(got) != want[i] {
			t.Errorf("validUTF8(%q) = %q; TextDecoder gives %s", b, got, want[i])
		}
		if !utf8.Valid(got) {
			t.Errorf("validUTF8(%q) = %q is not valid UTF-8", b, got)
		}
	}
}

// TestStaleMetaCache runs two fronts on one set of objects, as two isolates
// would be: one deletes a filter the other has cached and makes it again
// with other parameters. The other's next requests answer for the new
// filter (its shards refuse the old generation, and the front reads meta
// again and retries once), and a request of the old generation sent
// straight to a shard changes nothing.
func TestStaleMetaCache(t *testing.T) {
	objs := newMemoryObjects()
	front := func() *client {
		srv := httptest.NewServer(&Server{Token: func() string { return testToken }, Objects: objs})
		t.Cleanup(srv.Close)
		return &client{t, srv.URL}
	}
	a, b := front(), front()
	a.json("PUT", "/v1/filters/f", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 201)
	old := []string{"old-1", "old-2", "old-3"}
	a.json("POST", "/v1/filters/f/add", map[string]any{"keys": old}, 200)
	oldGen := objs.meta["f"].Generation

	b.json("DELETE", "/v1/filters/f", nil, 204)
	b.json("PUT", "/v1/filters/f", map[string]any{"capacity": 3000, "errorRate": 0.001, "shards": 3}, 201)
	if objs.meta["f"].Generation <= oldGen {
		t.Fatalf("generation %d after %d: generations must move forward", objs.meta["f"].Generation, oldGen)
	}
	fresh := []string{"new-1", "new-2", "new-3", "new-4"}
	b.json("POST", "/v1/filters/f/add", map[string]any{"keys": fresh[:2]}, 200)

	got := a.json("POST", "/v1/filters/f/add", map[string]any{"keys": fresh[2:]}, 200)
	if fmt.Sprint(got["added"]) != "[true true]" {
		t.Errorf("add through the stale front: %v; want both new", got)
	}
	st := a.json("GET", "/v1/filters/f", nil, 200)
	if st["shards"] != 3.0 || st["total"].(map[string]any)["count"] != 4.0 {
		t.Errorf("stats through the stale front: shards %v, count %v; want 3 and 4", st["shards"], st["total"].(map[string]any)["count"])
	}
	present := a.json("POST", "/v1/filters/f/check", map[string]any{"keys": append(fresh, old...)}, 200)["present"]
	if fmt.Sprint(present) != "[true true true true false false false]" {
		t.Errorf("check through the stale front: %v", present)
	}

	// A late request of the old generation, straight to a shard.
	for sh := range 3 {
		wantLateAddRefused(t, objs, "f", oldGen, sh)
	}
	if st := b.json("GET", "/v1/filters/f", nil, 200); st["total"].(map[string]any)["count"] != 4.0 {
		t.Errorf("after the late requests: count %v; want 4", st["total"].(map[string]any)["count"])
	}

	// Deleted through b, a's cache is stale again: a answers 404.
	b.json("DELETE", "/v1/filters/f", nil, 204)
	a.json("POST", "/v1/filters/f/check", map[string]any{"keys": fresh}, 404)
}

// newFront starts a front of its own (its own meta cache) on objs, as
// another isolate would be.
func newFront(t *testing.T, objs Objects) *client {
	srv := httptest.NewServer(&Server{Token: func() string { return testToken }, Objects: objs})
	t.Cleanup(srv.Close)
	return &client{t, srv.URL}
}

// wantLateAddRefused sends an add of generation gen (of a filter of two
// shards) straight to shard sh of name, as a request that read the
// parameters long ago would reach it, and wants it refused as stale.
func wantLateAddRefused(t *testing.T, objs Objects, name string, gen uint64, sh int) {
	t.Helper()
	h := shardParamsOf(name, filterParams{Capacity: 1000, ErrorRate: 0.01, Shards: 2, Generation: gen}, sh)
	res, err := objs.Fetch(context.Background(), shardObject(name, sh), "POST", "/add", h, []byte(keysBody([]string{"late"})))
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusConflict || !bytes.Contains(body, []byte(staleGeneration)) {
		t.Errorf("shard %d: a late add of generation %d answered %d %s; want 409 %s", sh, gen, res.StatusCode, body, staleGeneration)
	}
}

// heldObjects holds the requests that match until release is closed, as a
// network that delays them would: arrived gets one value for each request
// held, before it waits.
type heldObjects struct {
	Objects
	match   func(object, method, path string) bool
	arrived chan string
	release chan struct{}
}

func (h *heldObjects) Fetch(ctx context.Context, object, method, path string, header http.Header, body []byte) (*http.Response, error) {
	if h.match(object, method, path) {
		h.arrived <- object
		<-h.release
	}
	return h.Objects.Fetch(ctx, object, method, path, header, body)
}

// TestDeleteAndPutLoseNoAdd runs the race of a front whose cached
// parameters a DELETE and a PUT through another front made stale: the
// DELETE's clean-up of the shards is still on its way (held) or failed part
// way (a shard unreachable), the PUT is acknowledged, and then the stale
// front adds 50 keys. Every key it acknowledges is in the new filter, for a
// new filter of as many shards as the old one, of more and of fewer.
func TestDeleteAndPutLoseNoAdd(t *testing.T) {
	for _, mode := range []string{"held", "unreachable"} {
		for _, shards := range []int{2, 3, 1} {
			t.Run(fmt.Sprintf("%s/2-to-%d-shards", mode, shards), func(t *testing.T) {
				objs := newMemoryObjects()
				held := &heldObjects{
					Objects: objs,
					match: func(object, method, path string) bool {
						return mode == "held" && method == "DELETE" && path == "/shard"
					},
					arrived: make(chan string, 2),
					release: make(chan struct{}),
				}
				// a caches the filter's parameters; b deletes it through
				// held, c makes it again.
				a, b, c := newFront(t, objs), newFront(t, held), newFront(t, objs)
				a.json("PUT", "/v1/filters/f", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 201)
				a.json("POST", "/v1/filters/f/add", map[string]any{"keys": []string{"old-1", "old-2", "old-3"}}, 200)
				oldGen := objs.meta["f"].Generation

				deleted := make(chan int, 1)
				switch mode {
				case "held":
					go func() {
						status, _, _ := b.do("DELETE", "/v1/filters/f", "")
						deleted <- status
					}()
					// Both shards' clean-up is on its way: meta has
					// forgotten the filter.
					<-held.arrived
					<-held.arrived
				case "unreachable":
					objs.setFail(func(o string) bool { return o == shardObject("f", 1) })
					if status, body, _ := b.do("DELETE", "/v1/filters/f", ""); status != http.StatusBadGateway {
						t.Fatalf("DELETE with shard 1 unreachable: %d %s; want 502", status, body)
					}
					objs.setFail(nil)
				}
				c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": shards}, 201)

				// One key a request, as a crawler adds what it finds: a
				// request whose keys all go to a shard that still holds the
				// old filter is the one that can be lost.
				keys := make([]string, 50)
				for i := range keys {
					keys[i] = fmt.Sprintf("https://late.example/%d", i)
					got := a.json("POST", "/v1/filters/f/add", map[string]any{"keys": keys[i : i+1]}, 200)
					if fmt.Sprint(got["added"]) != "[true]" {
						t.Fatalf("add of %s through the stale front: %v; want it new", keys[i], got)
					}
				}
				wantAll := func(when string) {
					t.Helper()
					present := c.json("POST", "/v1/filters/f/check", map[string]any{"keys": keys}, 200)["present"].([]any)
					n := 0
					for _, p := range present {
						if p == true {
							n++
						}
					}
					st := c.json("GET", "/v1/filters/f", nil, 200)
					if count := st["total"].(map[string]any)["count"]; n != len(keys) || count != float64(len(keys)) || st["shards"] != float64(shards) {
						t.Errorf("%s: %d of %d acknowledged keys present, total.count %v, %v shards; want all, %d, %d",
							when, n, len(keys), count, st["shards"], len(keys), shards)
					}
				}
				wantAll("after the stale front's adds")
				if mode == "held" {
					close(held.release)
					if status := <-deleted; status != http.StatusNoContent {
						t.Errorf("the held DELETE answered %d; want 204", status)
					}
					wantAll("once the held clean-up reached the shards")
				}
				// Every shard the old filter had, and every one the new
				// filter has, refuses a late request of the old generation.
				for sh := range max(2, shards) {
					wantLateAddRefused(t, objs, "f", oldGen, sh)
				}
			})
		}
	}
}

// TestDeleteRetried: a DELETE that could not reach every shard answers 502,
// and sent again it finishes the clean-up (204); a PUT meanwhile is not
// acknowledged while a shard of the deleted filter cannot be told, and
// sent again once it can, it is.
func TestDeleteRetried(t *testing.T) {
	c, objs := newTestServer(t)
	stale := newFront(t, objs)
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 201)
	stale.json("POST", "/v1/filters/f/add", map[string]any{"keys": []string{"old"}}, 200)
	objs.setFail(func(o string) bool { return o == shardObject("f", 1) })
	c.json("DELETE", "/v1/filters/f", nil, 502)
	objs.setFail(nil)
	c.json("DELETE", "/v1/filters/f", nil, 204)
	c.json("DELETE", "/v1/filters/f", nil, 404)
	c.json("POST", "/v1/filters/f/check", map[string]any{"keys": []string{"old"}}, 404)

	// Deleted part way again, then made again while the shard is down.
	c.json("PUT", "/v1/filters/g", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 201)
	stale.json("POST", "/v1/filters/g/add", map[string]any{"keys": []string{"old"}}, 200)
	objs.setFail(func(o string) bool { return o == shardObject("g", 1) })
	c.json("DELETE", "/v1/filters/g", nil, 502)
	c.json("PUT", "/v1/filters/g", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 502)
	objs.setFail(nil)
	c.json("PUT", "/v1/filters/g", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 200)
	keys := make([]string, 20)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
		stale.json("POST", "/v1/filters/g/add", map[string]any{"keys": keys[i : i+1]}, 200)
	}
	present := c.json("POST", "/v1/filters/g/check", map[string]any{"keys": append(keys, "old")}, 200)["present"]
	if want := strings.TrimSuffix(strings.Repeat("true ", len(keys)), " ") + " false"; fmt.Sprint(present) != "["+want+"]" {
		t.Errorf("after the retried PUT: %v; want every key the stale front added, and not the old filter's", present)
	}
}

// TestDeleteAndPutUnderConcurrentAdds: four fronts with the parameters
// cached keep adding, each from four clients, while another front deletes
// the filter (its clean-up held on the way) and a third makes it again
// with three shards. Every add sent after the PUT was answered and
// acknowledged is in the new filter, and the held clean-up, landing
// later, changes nothing.
func TestDeleteAndPutUnderConcurrentAdds(t *testing.T) {
	objs := newMemoryObjects()
	held := &heldObjects{
		Objects: objs,
		match:   func(object, method, path string) bool { return method == "DELETE" && path == "/shard" },
		arrived: make(chan string, 2),
		release: make(chan struct{}),
	}
	b, c := newFront(t, held), newFront(t, objs)
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 100000, "errorRate": 0.01, "shards": 2}, 201)
	stale := make([]*client, 4)
	for i := range stale {
		stale[i] = newFront(t, objs)
		stale[i].json("POST", "/v1/filters/f/add", map[string]any{"keys": []string{fmt.Sprintf("warm-%d", i)}}, 200)
	}

	var putDone atomic.Bool
	var mu sync.Mutex
	var after []string // acknowledged adds sent after the PUT was answered
	enough := make(chan struct{})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i, a := range stale {
		for j := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					sentAfter := putDone.Load()
					key := fmt.Sprintf("https://c%d-%d.example/%d", i, j, n)
					status, body, _ := a.do("POST", "/v1/filters/f/add", keysBody([]string{key}))
					if status == http.StatusOK && sentAfter {
						if !bytes.Contains(body, []byte("true")) {
							t.Errorf("%s: %s; want it new", key, body)
						}
						mu.Lock()
						if after = append(after, key); len(after) == 400 {
							close(enough)
						}
						mu.Unlock()
					}
				}
			}()
		}
	}
	deleted := make(chan int, 1)
	go func() {
		status, _, _ := b.do("DELETE", "/v1/filters/f", "")
		deleted <- status
	}()
	<-held.arrived
	<-held.arrived
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 100000, "errorRate": 0.01, "shards": 3}, 201)
	putDone.Store(true)
	select {
	case <-enough:
	case <-time.After(time.Minute):
		t.Fatal("fewer than 400 adds acknowledged in a minute after the PUT")
	}
	close(held.release)
	if status := <-deleted; status != http.StatusNoContent {
		t.Errorf("the held DELETE answered %d; want 204", status)
	}
	close(stop)
	wg.Wait()

	present := c.json("POST", "/v1/filters/f/check", map[string]any{"keys": after}, 200)["present"].([]any)
	lost := 0
	for _, p := range present {
		if p != true {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d adds acknowledged after the PUT was answered are not in the filter", lost, len(after))
	}
}
