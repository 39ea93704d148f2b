//go:build !(js && wasm)

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

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
	res := c.send(method, path, body, header...)
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b, res.Header
}

// send sends a request with the test token and header's name, value
// pairs, and returns the response with its body unread.
func (c *client) send(method, path, body string, header ...string) *http.Response {
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
	return res
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
		{"capacity with an exponent", "PUT", "/v1/filters/g", `{"capacity":1e3,"errorRate":0.1}`, nil, 400, "invalid_params"},
		{"capacity with a fraction of zero", "PUT", "/v1/filters/g", `{"capacity":1000.0,"errorRate":0.1}`, nil, 400, "invalid_params"},
		{"shards with a fraction of zero", "PUT", "/v1/filters/g", `{"capacity":5,"errorRate":0.1,"shards":2.0}`, nil, 400, "invalid_params"},
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

// TestVersionHeader checks that every answer, an error's too, names the
// service's version, the one of version.txt, and that a page on an allowed
// origin can read it.
func TestVersionHeader(t *testing.T) {
	v, err := os.ReadFile("../../version.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(v))
	objs := newMemoryObjects()
	srv := httptest.NewServer(&Server{Token: func() string { return testToken }, Objects: objs, AllowedOrigins: func() string { return "https://app.example" }})
	t.Cleanup(srv.Close)
	c := &client{t, srv.URL}
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 1000, "errorRate": 0.01}, 201)
	for _, r := range []struct {
		method, path, origin string
		status               int
	}{
		{"GET", "/v1/filters/f", "", 200},
		{"POST", "/v1/filters/f/check", "https://app.example", 200},
		{"GET", "/v1/filters/missing", "", 404},
		{"GET", "/v2/filters/f", "", 404},
	} {
		status, body, h := c.do(r.method, r.path, keysBody([]string{"https://example.com/"}), "Origin", r.origin)
		if status != r.status {
			t.Errorf("%s %s: status %d; want %d (%s)", r.method, r.path, status, r.status, body)
		}
		if got := h.Get("X-Edgebloom-Version"); got != want {
			t.Errorf("%s %s: X-Edgebloom-Version %q; want %q (version.txt)", r.method, r.path, got, want)
		}
		if exposed := h.Get("Access-Control-Expose-Headers"); r.origin != "" && !strings.Contains(exposed, "X-Edgebloom-Version") {
			t.Errorf("%s %s from %s: Access-Control-Expose-Headers %q lacks X-Edgebloom-Version", r.method, r.path, r.origin, exposed)
		}
	}
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

// rewriteAnswers passes requests to memory.go and rewrites each answer of
// a shard's add or check with answer.
type rewriteAnswers struct {
	*memoryObjects
	answer func(path string, res *http.Response, results []bool) *http.Response
}

func (o rewriteAnswers) Fetch(ctx context.Context, object, method, path string, header http.Header, body []byte) (*http.Response, error) {
	res, err := o.memoryObjects.Fetch(ctx, object, method, path, header, body)
	if err != nil || (path != "/add" && path != "/check") || res.StatusCode != http.StatusOK {
		return res, err
	}
	var req struct{ Keys []string }
	json.Unmarshal(body, &req)
	results, ok := parseResultsHex(res.Header.Get(resultsHeader), len(req.Keys))
	if !ok {
		return nil, fmt.Errorf("memory.go answered %q", res.Header.Get(resultsHeader))
	}
	return o.answer(path, res, results), nil
}

// TestShardAnswers: the front reads a shard's answers from
// X-Edgebloom-Results, reads the JSON body shards answered before it, and
// refuses an answer that is neither with 502 shard_protocol.
func TestShardAnswers(t *testing.T) {
	for _, tt := range []struct {
		name   string
		answer func(path string, res *http.Response, results []bool) *http.Response
		status int
	}{
		{"the header", func(_ string, res *http.Response, _ []bool) *http.Response { return res }, 200},
		{"a JSON body", func(path string, _ *http.Response, results []bool) *http.Response {
			field := map[string]string{"/add": "added", "/check": "present"}[path]
			rec := httptest.NewRecorder()
			writeJSON(rec, 200, json.RawMessage(appendResultsJSON(nil, field, results)))
			return rec.Result()
		}, 200},
		{"a header of another length", func(_ string, res *http.Response, results []bool) *http.Response {
			res.Header.Set(resultsHeader, string(appendResultsHex(nil, append(results, true, true, true, true))))
			return res
		}, 502},
		{"no header and no body", func(_ string, res *http.Response, _ []bool) *http.Response {
			res.Header.Del(resultsHeader)
			return res
		}, 502},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs := rewriteAnswers{newMemoryObjects(), tt.answer}
			srv := httptest.NewServer(&Server{Token: func() string { return testToken }, Objects: objs})
			defer srv.Close()
			c := &client{t, srv.URL}
			if status, body, _ := c.do("PUT", "/v1/filters/a", `{"capacity":1000,"errorRate":0.01,"shards":2}`); status != 201 {
				t.Fatal(status, string(body))
			}
			keys := `{"keys":["k0","k1","k2","k3","k4","k5","k6"]}`
			status, body, _ := c.do("POST", "/v1/filters/a/add", `{"keys":["k1","k4"]}`)
			if status != tt.status {
				t.Fatalf("add: %d %s; want %d", status, body, tt.status)
			}
			status, body, _ = c.do("POST", "/v1/filters/a/check", keys)
			if status != tt.status {
				t.Fatalf("check: %d %s; want %d", status, body, tt.status)
			}
			if status == 200 {
				if want := `{"present":[false,true,false,false,true,false,false]}`; strings.TrimSpace(string(body)) != want {
					t.Errorf("check: %s; want %s", body, want)
				}
			} else if !strings.Contains(string(body), "shard_protocol") {
				t.Errorf("check: %s; want shard_protocol", body)
			}
		})
	}
}
