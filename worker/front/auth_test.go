//go:build !(js && wasm)

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/token"
)

// countingObjects counts the requests that reach the Durable Objects.
type countingObjects struct {
	Objects
	n atomic.Int64
}

func (c *countingObjects) Fetch(ctx context.Context, object, method, path string, header http.Header, body []byte) (*http.Response, error) {
	c.n.Add(1)
	return c.Objects.Fetch(ctx, object, method, path, header, body)
}

// authServer is a front whose secrets and allowed origins a test changes
// as it goes, as an operator changes the Worker's environment.
type authServer struct {
	mu                        sync.Mutex
	secret, previous, origins string
	objects                   *countingObjects
	url                       string
}

func newAuthServer(t *testing.T, secret, previous, origins string) *authServer {
	t.Helper()
	a := &authServer{secret: secret, previous: previous, origins: origins, objects: &countingObjects{Objects: newMemoryObjects()}}
	get := func(p *string) func() string {
		return func() string { a.mu.Lock(); defer a.mu.Unlock(); return *p }
	}
	srv := httptest.NewServer(&Server{Token: get(&a.secret), PreviousToken: get(&a.previous), AllowedOrigins: get(&a.origins), Objects: a.objects})
	t.Cleanup(srv.Close)
	a.url = srv.URL
	return a
}

func (a *authServer) set(secret, previous, origins string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.secret, a.previous, a.origins = secret, previous, origins
}

type answer struct {
	status int
	code   string
	body   []byte
	header http.Header
}

// send sends a request with Authorization: Bearer bearer (none when
// bearer is "") and the header pairs given.
func (a *authServer) send(t *testing.T, method, path, bearer, body string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, a.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var e struct{ Error struct{ Code string } }
	json.Unmarshal(b, &e)
	return answer{res.StatusCode, e.Error.Code, b, res.Header}
}

// mintVia asks POST /v1/tokens for a token with the secret.
func (a *authServer) mintVia(t *testing.T, secret, scope, filter string, expiresIn int) string {
	t.Helper()
	body := fmt.Sprintf(`{"scope": %q, "filter": %q, "expiresIn": %d}`, scope, filter, expiresIn)
	got := a.send(t, "POST", "/v1/tokens", secret, body)
	var out struct{ Token, Expires, Scope, Filter string }
	if err := json.Unmarshal(got.body, &out); got.status != 200 || err != nil {
		t.Fatalf("POST /v1/tokens %s: %d %s", body, got.status, got.body)
	}
	exp, err := time.Parse(time.RFC3339, out.Expires)
	if err != nil || time.Until(exp) > time.Duration(expiresIn)*time.Second || time.Until(exp) < time.Duration(expiresIn)*time.Second-time.Minute {
		t.Fatalf("POST /v1/tokens: expires %q, want about %d s from now", out.Expires, expiresIn)
	}
	if out.Scope != scope || out.Filter != filter || !token.IsToken(out.Token) {
		t.Fatalf("POST /v1/tokens: got %s", got.body)
	}
	return out.Token
}

// endpoint is one request of the API on a filter, with the operation it is.
type endpoint struct {
	op           token.Operation
	method, path string // path after /v1/filters/{name}
	body         string
}

var filterEndpoints = []endpoint{
	{token.Stats, "GET", "", ""},
	{token.Check, "POST", "/check", `{"keys": ["https://a.example/1"]}`},
	{token.Snapshot, "GET", "/snapshot", ""},
	{token.Changes, "GET", "/changes", ""},
	{token.Changes, "GET", "/checkpoints/latest", ""},
	{token.Add, "POST", "/add", `{"keys": ["https://a.example/2"]}`},
	{token.Create, "PUT", "", `{"capacity": 1000, "errorRate": 0.01, "shards": 2}`},
	{token.Delete, "DELETE", "", ""},
}

// TestTokenMatrix sends every kind of bad, tampered and scoped token to
// every endpoint: a refused request reaches no Durable Object, each refusal
// has its code, and a read token changes nothing.
func TestTokenMatrix(t *testing.T) {
	const secret, previous = "the-service-secret", "the-secret-before"
	a := newAuthServer(t, secret, previous, "")
	filters := []string{"crawl", "crawl-2026", "other"}
	for _, f := range filters {
		if got := a.send(t, "PUT", "/v1/filters/"+f, secret, `{"capacity": 1000, "errorRate": 0.01, "shards": 2}`); got.status != 201 {
			t.Fatalf("PUT %s: %d %s", f, got.status, got.body)
		}
		a.send(t, "POST", "/v1/filters/"+f+"/add", secret, keysBody(urls(f, 50)))
	}
	snapshots := func() map[string][]byte {
		out := map[string][]byte{}
		for _, f := range filters {
			out[f] = a.send(t, "GET", "/v1/filters/"+f+"/snapshot", secret, "").body
		}
		return out
	}
	before := snapshots()

	exp := time.Now().Add(time.Hour)
	readCrawl := a.mintVia(t, secret, "read", "crawl", 3600)
	offline := func(sec string, c token.Claims) string {
		tok, err := token.Mint([]byte(sec), c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	body64, sig64, _ := strings.Cut(strings.TrimPrefix(readCrawl, token.Prefix), ".")
	payload, _ := base64.RawURLEncoding.DecodeString(body64)
	reSigned := func(p []byte) string {
		return token.Prefix + base64.RawURLEncoding.EncodeToString(p) + "." + sig64
	}
	// Another base64url character in the signature (not the last one,
	// whose low bits may be padding).
	flip := []byte(readCrawl)
	if flip[len(flip)-5] == 'A' {
		flip[len(flip)-5] = 'B'
	} else {
		flip[len(flip)-5] = 'A'
	}

	// Tokens every request refuses, whatever it asks.
	refused := []struct {
		name, bearer string
		status       int
		code         string
	}{
		{"no credential", "", 401, "unauthorized"},
		{"a wrong secret", "the-service-secreT", 401, "unauthorized"},
		{"the secret with a suffix", secret + "x", 401, "unauthorized"},
		{"expired", offline(secret, token.Claims{Scope: token.Read, Filter: "crawl", Expires: time.Now().Add(-time.Second)}), 401, "token_expired"},
		{"expired write of every filter", offline(secret, token.Claims{Scope: token.Write, Filter: "*", Expires: time.Now().Add(-time.Hour)}), 401, "token_expired"},
		{"signed with another secret", offline("another-secret", token.Claims{Scope: token.Read, Filter: "crawl", Expires: exp}), 401, "token_bad_signature"},
		{"signed with the secret as a string of another case", offline(strings.ToUpper(secret), token.Claims{Scope: token.Read, Filter: "crawl", Expires: exp}), 401, "token_bad_signature"},
		{"scope changed to write", reSigned(bytes.Replace(payload, []byte(`"read"`), []byte(`"write"`), 1)), 401, "token_bad_signature"},
		{"filter changed to every filter", reSigned(bytes.Replace(payload, []byte(`"crawl"`), []byte(`"*"`), 1)), 401, "token_bad_signature"},
		{"filter changed to another", reSigned(bytes.Replace(payload, []byte(`"crawl"`), []byte(`"other"`), 1)), 401, "token_bad_signature"},
		{"expiry moved", reSigned(bytes.Replace(payload, []byte(`"exp":1`), []byte(`"exp":2`), 1)), 401, "token_bad_signature"},
		{"a character of the signature changed", string(flip), 401, "token_bad_signature"},
		{"the signature of another token", token.Prefix + body64 + "." + strings.Split(a.mintVia(t, secret, "read", "other", 3600), ".")[2], 401, "token_bad_signature"},
		{"no signature", token.Prefix + body64, 401, "token_malformed"},
		{"signature cut short", readCrawl[:len(readCrawl)-3], 401, "token_malformed"},
		{"not base64", token.Prefix + body64 + "." + sig64[:20] + "*" + sig64[21:], 401, "token_malformed"},
		{"another version", "eb2." + body64 + "." + sig64, 401, "unauthorized"},
		{"only the prefix", token.Prefix, 401, "token_malformed"},
		{"too long", token.Prefix + strings.Repeat("A", token.MaxLength) + "." + sig64, 401, "token_malformed"},
	}
	paths := []struct{ method, path, body string }{
		{"POST", "/v1/tokens", `{"scope": "write", "filter": "*", "expiresIn": 60}`},
		{"GET", "/v1/filters/nope", ""},
		{"GET", "/v2/elsewhere", ""},
	}
	for _, f := range filters {
		for _, e := range filterEndpoints {
			paths = append(paths, struct{ method, path, body string }{e.method, "/v1/filters/" + f + e.path, e.body})
		}
	}
	for _, tt := range refused {
		for _, p := range paths {
			n := a.objects.n.Load()
			got := a.send(t, p.method, p.path, tt.bearer, p.body)
			if got.status != tt.status || got.code != tt.code {
				t.Errorf("%s: %s %s: got %d %s (%s); want %d %s", tt.name, p.method, p.path, got.status, got.code, got.body, tt.status, tt.code)
			}
			if got.header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: %s %s: 401 without WWW-Authenticate", tt.name, p.method, p.path)
			}
			if d := a.objects.n.Load() - n; d != 0 {
				t.Errorf("%s: %s %s: %d Durable Object requests for a refused token", tt.name, p.method, p.path, d)
			}
		}
	}

	// Scoped tokens: what each allows answers 2xx, the rest 403 with the
	// reason, before any Durable Object is reached.
	type scoped struct {
		name, bearer string
		scope        token.Scope
		filter       string
	}
	tokens := []scoped{
		{"read crawl (POST /v1/tokens)", readCrawl, token.Read, "crawl"},
		{"read crawl* (POST /v1/tokens)", a.mintVia(t, secret, "read", "crawl*", 60), token.Read, "crawl*"},
		{"read * (offline)", offline(secret, token.Claims{Scope: token.Read, Filter: "*", Expires: exp}), token.Read, "*"},
		{"read crawl (the previous secret)", offline(previous, token.Claims{Scope: token.Read, Filter: "crawl", Expires: exp}), token.Read, "crawl"},
		{"write crawl (POST /v1/tokens)", a.mintVia(t, secret, "write", "crawl", 60), token.Write, "crawl"},
		{"write crawl-* (offline)", offline(secret, token.Claims{Scope: token.Write, Filter: "crawl-*", Expires: exp}), token.Write, "crawl-*"},
	}
	// Read tokens first: nothing they are allowed may change a filter.
	for _, tok := range tokens {
		claims := token.Claims{Scope: tok.scope, Filter: tok.filter}
		for _, f := range filters {
			for _, e := range filterEndpoints {
				n := a.objects.n.Load()
				got := a.send(t, e.method, "/v1/filters/"+f+e.path, tok.bearer, e.body)
				want, code := 200, ""
				switch {
				case !claims.Matches(f):
					want, code = 403, "token_other_filter"
				case claims.Allow(e.op, f) != nil:
					want, code = 403, "token_not_allowed"
				}
				if got.status != want || got.code != code {
					t.Errorf("%s: %s %s%s: got %d %s (%s); want %d %s", tok.name, e.method, f, e.path, got.status, got.code, got.body, want, code)
				}
				if want == 403 && a.objects.n.Load() != n {
					t.Errorf("%s: %s %s%s: refused after reaching a Durable Object", tok.name, e.method, f, e.path)
				}
			}
		}
		for _, p := range []struct{ method, path, body string }{
			{"POST", "/v1/tokens", `{"scope": "read", "filter": "crawl", "expiresIn": 60}`},
			{"PUT", "/v1/filters/new", `{"capacity": 1000, "errorRate": 0.01}`},
		} {
			if got := a.send(t, p.method, p.path, tok.bearer, p.body); got.status != 403 || got.code != "token_not_allowed" && got.code != "token_other_filter" {
				t.Errorf("%s: %s %s: got %d %s; want 403", tok.name, p.method, p.path, got.status, got.body)
			}
		}
		if tok.scope == token.Read {
			after := snapshots()
			for _, f := range filters {
				if !bytes.Equal(after[f], before[f]) {
					t.Errorf("%s: filter %s changed", tok.name, f)
				}
			}
		}
	}
	// The write tokens added their key where they were allowed, and only there.
	present := func(f string) bool {
		got := a.send(t, "POST", "/v1/filters/"+f+"/check", secret, `{"keys": ["https://a.example/2"]}`)
		return strings.Contains(string(got.body), "true")
	}
	for f, want := range map[string]bool{"crawl": true, "crawl-2026": true, "other": false} {
		if present(f) != want {
			t.Errorf("after the write tokens, https://a.example/2 in %s: %v; want %v", f, !want, want)
		}
	}
	for _, f := range filters {
		if got := a.send(t, "GET", "/v1/filters/"+f, secret, ""); got.status != 200 {
			t.Errorf("filter %s after every token: %d", f, got.status)
		}
	}
}

func TestMintTokenErrors(t *testing.T) {
	const secret = "the-service-secret"
	a := newAuthServer(t, secret, "", "")
	for _, tt := range []struct {
		name, method, body string
		status             int
		code               string
	}{
		{"GET", "GET", "", 405, "method_not_allowed"},
		{"empty body", "POST", "", 400, "invalid_json"},
		{"array", "POST", `[]`, 400, "invalid_json"},
		{"unknown field", "POST", `{"scope": "read", "filter": "a", "expiresIn": 60, "admin": true}`, 400, "invalid_json"},
		{"no scope", "POST", `{"filter": "a", "expiresIn": 60}`, 400, "invalid_params"},
		{"admin scope", "POST", `{"scope": "admin", "filter": "a", "expiresIn": 60}`, 400, "invalid_params"},
		{"scope a number", "POST", `{"scope": 1, "filter": "a", "expiresIn": 60}`, 400, "invalid_json"},
		{"no filter", "POST", `{"scope": "read", "expiresIn": 60}`, 400, "invalid_params"},
		{"bad filter", "POST", `{"scope": "read", "filter": ".a", "expiresIn": 60}`, 400, "invalid_params"},
		{"star inside", "POST", `{"scope": "read", "filter": "a*b", "expiresIn": 60}`, 400, "invalid_params"},
		{"filter too long", "POST", `{"scope": "read", "filter": "` + strings.Repeat("a", 65) + `", "expiresIn": 60}`, 400, "invalid_params"},
		{"no expiry", "POST", `{"scope": "read", "filter": "a"}`, 400, "invalid_params"},
		{"expiry 0", "POST", `{"scope": "read", "filter": "a", "expiresIn": 0}`, 400, "invalid_params"},
		{"expiry negative", "POST", `{"scope": "read", "filter": "a", "expiresIn": -5}`, 400, "invalid_params"},
		{"expiry fraction", "POST", `{"scope": "read", "filter": "a", "expiresIn": 1.5}`, 400, "invalid_params"},
		{"expiry over a year", "POST", `{"scope": "read", "filter": "a", "expiresIn": 31622401}`, 400, "invalid_params"},
		{"expiry with an exponent", "POST", `{"scope": "read", "filter": "a", "expiresIn": 1e3}`, 400, "invalid_params"},
		{"expiry with a fraction of zero", "POST", `{"scope": "read", "filter": "a", "expiresIn": 60.0}`, 400, "invalid_params"},
		{"expiry with a leading zero", "POST", `{"scope": "read", "filter": "a", "expiresIn": 060}`, 400, "invalid_json"},
		{"expiry a string", "POST", `{"scope": "read", "filter": "a", "expiresIn": "60"}`, 400, "invalid_json"},
	} {
		got := a.send(t, tt.method, "/v1/tokens", secret, tt.body)
		if got.status != tt.status || got.code != tt.code {
			t.Errorf("%s: got %d %s (%s); want %d %s", tt.name, got.status, got.code, got.body, tt.status, tt.code)
		}
	}
	a.mintVia(t, secret, "read", "a", int(token.MaxLifetime/time.Second))
	if n := a.objects.n.Load(); n != 0 {
		t.Errorf("making tokens reached the Durable Objects %d times", n)
	}
}

// TestRotation rotates the secret: while EDGEBLOOM_TOKEN_PREVIOUS holds the
// old one, the old secret and its tokens keep working; once it is removed,
// they are refused.
func TestRotation(t *testing.T) {
	const oldSecret, newSecret = "old-secret", "new-secret"
	a := newAuthServer(t, oldSecret, "", "")
	a.send(t, "PUT", "/v1/filters/crawl", oldSecret, `{"capacity": 1000, "errorRate": 0.01}`)
	oldRead := a.mintVia(t, oldSecret, "read", "crawl", 3600)
	stats := func(bearer string) answer { return a.send(t, "GET", "/v1/filters/crawl", bearer, "") }

	a.set(newSecret, oldSecret, "")
	newRead := a.mintVia(t, newSecret, "read", "crawl", 3600)
	for name, bearer := range map[string]string{"the old secret": oldSecret, "the new secret": newSecret, "a token of the old secret": oldRead, "a token of the new secret": newRead} {
		if got := stats(bearer); got.status != 200 {
			t.Errorf("during the rotation, %s: %d %s", name, got.status, got.body)
		}
	}
	// Tokens are signed with the current secret only.
	if got := a.send(t, "POST", "/v1/tokens", oldSecret, `{"scope": "read", "filter": "crawl", "expiresIn": 60}`); got.status != 200 {
		t.Fatalf("minting with the previous secret: %d", got.status)
	} else {
		var out struct{ Token string }
		json.Unmarshal(got.body, &out)
		if _, err := token.NewVerifier([]byte(newSecret)).Verify(out.Token, time.Now()); err != nil {
			t.Errorf("a token minted during the rotation is not signed with the new secret: %v", err)
		}
	}

	a.set(newSecret, "", "")
	for name, want := range map[string]answer{
		oldSecret: {status: 401, code: "unauthorized"}, oldRead: {status: 401, code: "token_bad_signature"},
		newSecret: {status: 200}, newRead: {status: 200},
	} {
		if got := stats(name); got.status != want.status || got.code != want.code {
			t.Errorf("after the rotation, %.20s...: got %d %s; want %d %s", name, got.status, got.code, want.status, want.code)
		}
	}
}

// TestTokenExpires waits (on the clock, with a deadline) for a token of
// one second to expire.
func TestTokenExpires(t *testing.T) {
	const secret = "the-service-secret"
	a := newAuthServer(t, secret, "", "")
	a.send(t, "PUT", "/v1/filters/crawl", secret, `{"capacity": 1000, "errorRate": 0.01}`)
	got := a.send(t, "POST", "/v1/tokens", secret, `{"scope": "read", "filter": "crawl", "expiresIn": 1}`)
	var out struct{ Token, Expires string }
	json.Unmarshal(got.body, &out)
	exp, _ := time.Parse(time.RFC3339, out.Expires)
	if got := a.send(t, "GET", "/v1/filters/crawl", out.Token, ""); got.status != 200 {
		t.Fatalf("a fresh token: %d %s", got.status, got.body)
	}
	time.Sleep(time.Until(exp))
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := a.send(t, "GET", "/v1/filters/crawl", out.Token, "")
		if got.status == 401 && got.code == "token_expired" {
			if !strings.Contains(string(got.body), out.Expires) {
				t.Errorf("the message does not say when it expired: %s", got.body)
			}
			break
		}
		if got.status != 200 || time.Now().After(deadline) {
			t.Fatalf("after its expiry %s: got %d %s", out.Expires, got.status, got.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestCORS(t *testing.T) {
	const secret = "the-service-secret"
	const page = "https://app.example"
	a := newAuthServer(t, secret, "", " https://app.example/ ,http://127.0.0.1:8080")
	a.send(t, "PUT", "/v1/filters/crawl", secret, `{"capacity": 1000, "errorRate": 0.01, "shards": 2}`)
	read := a.mintVia(t, secret, "read", "crawl", 3600)
	preflight := func(origin, method, path string) answer {
		return a.send(t, "OPTIONS", path, "", "", "Origin", origin, "Access-Control-Request-Method", method,
			"Access-Control-Request-Headers", "authorization,content-type")
	}
	n := a.objects.n.Load()
	for _, tt := range []struct {
		origin, method, path string
		ok                   bool
	}{
		{page, "GET", "/v1/filters/crawl", true},
		{page, "GET", "/v1/filters/crawl/snapshot", true},
		{page, "GET", "/v1/filters/crawl/changes", true},
		{page, "POST", "/v1/filters/crawl/check", true},
		{page, "GET", "/v1/filters/crawl/checkpoints/latest", true},
		{page, "GET", "/v1/filters/crawl/checkpoints/7/3/delta", true},
		{page, "POST", "/v1/filters/crawl/checkpoints/latest", false},
		{"http://127.0.0.1:8080", "GET", "/v1/filters/crawl/changes", true},
		{"HTTPS://APP.EXAMPLE", "GET", "/v1/filters/anything/changes", true},
		{page, "POST", "/v1/filters/crawl/add", false},
		{page, "PUT", "/v1/filters/crawl", false},
		{page, "DELETE", "/v1/filters/crawl", false},
		{page, "POST", "/v1/tokens", false},
		{page, "GET", "/v1/filters/crawl/check", false},
		{page, "POST", "/v1/filters/crawl/changes", false},
		{"https://evil.example", "GET", "/v1/filters/crawl/changes", false},
		{"https://app.example.evil.example", "GET", "/v1/filters/crawl/changes", false},
		{"http://app.example", "GET", "/v1/filters/crawl/changes", false},
		{"null", "GET", "/v1/filters/crawl/changes", false},
	} {
		got := preflight(tt.origin, tt.method, tt.path)
		h := got.header
		if tt.ok {
			if got.status != 204 || h.Get("Access-Control-Allow-Origin") != tt.origin || h.Get("Access-Control-Allow-Methods") != tt.method ||
				!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") || h.Get("Access-Control-Max-Age") == "" {
				t.Errorf("preflight %s %s from %s: got %d %v", tt.method, tt.path, tt.origin, got.status, h)
			}
		} else if got.status != 403 || got.code != "cors_not_allowed" || h.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight %s %s from %s: got %d %s %v; want 403 cors_not_allowed and no Access-Control-Allow-Origin", tt.method, tt.path, tt.origin, got.status, got.body, h)
		}
		if strings.HasPrefix(tt.path, "/v1/filters/") && !strings.Contains(tt.path, "/add") && tt.method != "PUT" && tt.method != "DELETE" && h.Get("Vary") != "Origin" {
			t.Errorf("preflight %s %s: Vary %q; want Origin", tt.method, tt.path, h.Get("Vary"))
		}
	}
	if d := a.objects.n.Load() - n; d != 0 {
		t.Errorf("preflights made %d Durable Object requests; want none", d)
	}

	// The request itself: readable from the page, its headers exposed.
	got := a.send(t, "GET", "/v1/filters/crawl/changes", read, "", "Origin", page)
	h := got.header
	if got.status != 200 || h.Get("Access-Control-Allow-Origin") != page || h.Get("Vary") != "Origin" {
		t.Fatalf("GET /changes from %s: %d %v", page, got.status, h)
	}
	exposed := strings.Split(h.Get("Access-Control-Expose-Headers"), ", ")
	for name := range h {
		if strings.HasPrefix(name, "X-Edgebloom-") && !contains(exposed, name) {
			t.Errorf("%s is sent but not in Access-Control-Expose-Headers %v", name, exposed)
		}
	}
	for _, name := range []string{"X-Edgebloom-Cursor", "X-Edgebloom-Format", "Content-Disposition"} {
		if !contains(exposed, name) {
			t.Errorf("Access-Control-Expose-Headers %v lacks %s", exposed, name)
		}
	}
	got = a.send(t, "GET", "/v1/filters/crawl/changes?since="+h.Get("X-Edgebloom-Cursor"), read, "", "Origin", page)
	if got.status != 200 || got.header.Get("X-Edgebloom-Format") != "delta" || !strings.Contains(got.header.Get("Access-Control-Expose-Headers"), "X-Edgebloom-Cursor") {
		t.Errorf("GET /changes?since from %s: %d %v", page, got.status, got.header)
	}
	// Errors are readable from the page too, and carry their own code.
	for _, tt := range []struct {
		bearer, method, path, code string
	}{
		{"", "GET", "/v1/filters/crawl/changes", "unauthorized"},
		{read, "GET", "/v1/filters/other/changes", "token_other_filter"},
		{read, "GET", "/v1/filters/crawl/nope", "not_found"},
	} {
		got := a.send(t, tt.method, tt.path, tt.bearer, "", "Origin", page)
		if got.code != tt.code || tt.code != "not_found" && got.header.Get("Access-Control-Allow-Origin") != page {
			t.Errorf("%s %s from %s: %d %s %v", tt.method, tt.path, page, got.status, got.body, got.header)
		}
	}
	// Not to the write endpoints (a PUT or DELETE shares its path with a
	// read), whatever their answer, nor from other origins.
	a.send(t, "PUT", "/v1/filters/gone", secret, `{"capacity": 1000, "errorRate": 0.01}`)
	for _, tt := range []struct {
		origin, method, path, body string
		status                     int
	}{
		{page, "POST", "/v1/filters/crawl/add", `{"keys": ["x"]}`, 200},
		{page, "POST", "/v1/tokens", `{"scope": "read", "filter": "crawl", "expiresIn": 60}`, 200},
		{page, "PUT", "/v1/filters/crawl", `{"capacity": 1000, "errorRate": 0.01, "shards": 2}`, 200},
		{page, "PUT", "/v1/filters/crawl", `{"capacity": 5}`, 400},
		{page, "DELETE", "/v1/filters/gone", "", 204},
		{page, "DELETE", "/v1/filters/gone", "", 404},
		{page, "OPTIONS", "/v1/filters/crawl", "", 405},
		{"https://evil.example", "GET", "/v1/filters/crawl/changes", "", 200},
	} {
		got := a.send(t, tt.method, tt.path, secret, tt.body, "Origin", tt.origin)
		if got.status != tt.status || got.header.Get("Access-Control-Allow-Origin") != "" || got.header.Get("Access-Control-Expose-Headers") != "" {
			t.Errorf("%s %s from %s: %d, Access-Control-Allow-Origin %q; want %d and none", tt.method, tt.path, tt.origin,
				got.status, got.header.Get("Access-Control-Allow-Origin"), tt.status)
		}
	}

	// None by default; "*" is any origin but "null".
	a.set(secret, "", "")
	if got := preflight(page, "GET", "/v1/filters/crawl/changes"); got.status != 403 {
		t.Errorf("with no origin set, a preflight: %d", got.status)
	}
	if got := a.send(t, "GET", "/v1/filters/crawl/changes", read, "", "Origin", page); got.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("with no origin set: Access-Control-Allow-Origin %q", got.header.Get("Access-Control-Allow-Origin"))
	}
	a.set(secret, "", "*")
	if got := preflight("https://any.example", "GET", "/v1/filters/crawl/changes"); got.status != 204 || got.header.Get("Access-Control-Allow-Origin") != "https://any.example" {
		t.Errorf(`with "*", a preflight: %d %v`, got.status, got.header)
	}
	if got := preflight("null", "GET", "/v1/filters/crawl/changes"); got.status != 403 {
		t.Errorf(`with "*", a preflight from origin null: %d`, got.status)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestNameRulesAgree(t *testing.T) {
	if token.MaxNameBytes != maxNameBytes {
		t.Fatalf("token.MaxNameBytes %d; the front's maxNameBytes %d", token.MaxNameBytes, maxNameBytes)
	}
	for _, name := range []string{"a", "crawl-2026", "A_b.c", ".a", "a/b", "a*", strings.Repeat("x", 64), strings.Repeat("x", 65), "é"} {
		if (checkName(name) == nil) != (token.ValidFilter(name) == nil && !strings.HasSuffix(name, "*")) {
			t.Errorf("%q: checkName %v, token.ValidFilter %v", name, checkName(name), token.ValidFilter(name))
		}
	}
}

// BenchmarkAuthenticate is what checking a credential costs the front, by
// kind: the secret (three SHA-256 digests), a scoped token (an HMAC-SHA256
// and its JSON payload), and a token whose signature does not match.
//
//	go test -run '^$' -bench Authenticate .
func BenchmarkAuthenticate(b *testing.B) {
	const secret = "the-service-secret-0123456789abc"
	s := &Server{Token: func() string { return secret }, PreviousToken: func() string { return "" }}
	tok, _ := token.Mint([]byte(secret), token.Claims{Scope: token.Read, Filter: "crawl", Expires: time.Now().Add(time.Hour)})
	other, _ := token.Mint([]byte("another"), token.Claims{Scope: token.Read, Filter: "crawl", Expires: time.Now().Add(time.Hour)})
	for _, bb := range []struct{ name, bearer string }{{"secret", secret}, {"token", tok}, {"bad signature", other}} {
		b.Run(bb.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/v1/filters/crawl/changes", nil)
			r.Header.Set("Authorization", "Bearer "+bb.bearer)
			for b.Loop() {
				a, err := s.authenticate(r)
				if err == nil {
					err = a.allow(token.Changes, "crawl")
				}
				if (err == nil) != (bb.name != "bad signature") {
					b.Fatal(err)
				}
			}
		})
	}
}
