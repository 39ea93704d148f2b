package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeService answers each request with the next of its answers (the last
// one again when they run out) and records the requests.
type fakeService struct {
	t       *testing.T
	mu      sync.Mutex
	answers []answer
	got     []*http.Request
	bodies  []string
	first   sync.Once
	arrived chan struct{} // closed at the first request, when not nil
}

type answer struct {
	status int
	header map[string]string
	body   string
}

func (f *fakeService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b := new(strings.Builder)
	if r.Body != nil {
		if _, err := io.Copy(b, r.Body); err != nil {
			f.t.Errorf("reading the request: %v", err)
		}
	}
	f.mu.Lock()
	f.got = append(f.got, r)
	f.bodies = append(f.bodies, b.String())
	a := f.answers[min(len(f.got), len(f.answers))-1]
	f.mu.Unlock()
	if f.arrived != nil {
		f.first.Do(func() { close(f.arrived) })
	}
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	if a.body != "" && w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(a.status)
	w.Write([]byte(a.body))
}

func (f *fakeService) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.got)
}

// newTest returns a client of a fake service whose sleeps are recorded,
// not waited, and whose jitter draws r.
func newTest(t *testing.T, r float64, answers ...answer) (*Client, *fakeService, *[]time.Duration) {
	t.Helper()
	f := &fakeService{t: t, answers: answers}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, WithToken("secret"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	c.rand = func() float64 { return r }
	c.sleep = func(done <-chan struct{}, d time.Duration) bool {
		mu.Lock()
		defer mu.Unlock()
		*waits = append(*waits, d)
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	return c, f, waits
}

func errBody(code, msg, id string) string {
	s := `{"error":{"code":"` + code + `","message":"` + msg + `"`
	if id != "" {
		s += `,"requestId":"` + id + `"`
	}
	return s + "}}"
}

const okStats = `{"name":"crawl","capacity":100,"errorRate":0.01,"shards":1,"canonicalize":false,"total":{},"perShard":[]}`

func TestRetryAfterIsWaitedWithJitter(t *testing.T) {
	for _, r := range []float64{0, 0.999} {
		c, f, waits := newTest(t, r,
			answer{503, map[string]string{"Retry-After": "2"}, errBody("busy", "the front is busy", "r1")},
			answer{429, map[string]string{"Retry-After": "1"}, ""},
			answer{200, nil, okStats})
		st, err := c.Stats(context.Background(), "crawl")
		if err != nil {
			t.Fatal(err)
		}
		if st.Capacity != 100 || f.requests() != 3 {
			t.Fatalf("capacity %d after %d requests; want 100 after 3", st.Capacity, f.requests())
		}
		// Never before Retry-After, at most half of it later.
		for i, ra := range []time.Duration{2 * time.Second, time.Second} {
			if w := (*waits)[i]; w < ra || w > ra+ra/2 {
				t.Errorf("jitter %v: wait %d is %v for Retry-After %v; want [%v, %v]", r, i, w, ra, ra, ra+ra/2)
			}
		}
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if got := retryAfter(now.Add(30*time.Second).Format(http.TimeFormat), now); got != 30*time.Second {
		t.Errorf("an HTTP date 30 s on: %v", got)
	}
	for _, v := range []string{"", "soon", "-1", now.Add(-time.Minute).Format(http.TimeFormat)} {
		if got := retryAfter(v, now); got != 0 {
			t.Errorf("Retry-After %q: %v, want 0", v, got)
		}
	}
}

func TestRetryAfterBeyondTheBoundIsReturned(t *testing.T) {
	c, f, _ := newTest(t, 0, answer{503, map[string]string{"Retry-After": "3600"}, errBody("busy", "busy", "r")})
	_, err := c.Stats(context.Background(), "crawl")
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrBusy) || e.RetryAfter != time.Hour || f.requests() != 1 {
		t.Fatalf("err %v after %d requests; want ErrBusy with RetryAfter 1h after 1", err, f.requests())
	}
}

func TestShardUnavailableBacksOff(t *testing.T) {
	c, f, waits := newTest(t, 1,
		answer{502, nil, errBody("shard_unavailable", "shard 1 could not be reached", "a")},
		answer{502, nil, errBody("shard_unavailable", "shard 1 could not be reached", "b")},
		answer{502, nil, "<html>Bad Gateway</html>"}, // a proxy's page: no code
		answer{200, nil, `{"added":[true]}`})
	added, err := c.Add(context.Background(), "crawl", "k")
	if err != nil || len(added) != 1 || !added[0] || f.requests() != 4 {
		t.Fatalf("Add: %v, %v after %d requests", added, err, f.requests())
	}
	// Doubled each time from MinBackoff; rand 1 draws the whole of it.
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}
	if len(*waits) != 3 {
		t.Fatalf("waits %v, want %v", *waits, want)
	}
	for i, w := range want {
		if (*waits)[i] != w {
			t.Errorf("waits %v, want %v", *waits, want)
		}
	}
}

func TestStaleGenerationIsSentAgainAtOnce(t *testing.T) {
	c, f, waits := newTest(t, 0,
		answer{409, nil, errBody("stale_generation", "made again twice", "")},
		answer{200, nil, `{"present":[false,true]}`})
	got, err := c.Check(context.Background(), "crawl", "a", "b")
	if err != nil || got[0] || !got[1] || f.requests() != 2 || (*waits)[0] != 0 {
		t.Fatalf("Check: %v, %v after %d requests, waits %v", got, err, f.requests(), *waits)
	}
}

func TestAttemptsRunOut(t *testing.T) {
	c, f, _ := newTest(t, 0, answer{502, nil, errBody("shard_unavailable", "shard 0 could not be reached", "ray-1")})
	_, err := c.Stats(context.Background(), "crawl")
	var e *Error
	if !errors.As(err, &e) || f.requests() != DefaultRetry.Attempts {
		t.Fatalf("err %v after %d requests; want an *Error after %d", err, f.requests(), DefaultRetry.Attempts)
	}
	if e.Status != 502 || e.Code != "shard_unavailable" || e.RequestID != "ray-1" || e.Message != "shard 0 could not be reached" {
		t.Errorf("%+v", e)
	}
	if want := "client: GET /v1/filters/crawl: 502 shard_unavailable: shard 0 could not be reached (request ray-1)"; e.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", e.Error(), want)
	}
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	for _, tc := range []struct {
		status  int
		code    string
		is, not error
	}{
		{404, "not_found", ErrNotFound, ErrConflict},
		{409, "conflict", ErrConflict, ErrStaleGeneration},
		{401, "token_expired", ErrTokenExpired, ErrForbidden},
		{401, "token_bad_signature", ErrUnauthorized, ErrTokenExpired},
		{403, "token_not_allowed", ErrForbidden, ErrUnauthorized},
		{500, "internal", nil, ErrShardUnavailable},
		{502, "shard_protocol", nil, ErrShardUnavailable},
	} {
		c, f, _ := newTest(t, 0, answer{tc.status, nil, errBody(tc.code, "m", "")})
		_, err := c.Create(context.Background(), "crawl", Params{Capacity: 10, ErrorRate: 0.01})
		var e *Error
		if !errors.As(err, &e) || e.Code != tc.code || e.Status != tc.status || f.requests() != 1 {
			t.Errorf("%d %s: %v after %d requests", tc.status, tc.code, err, f.requests())
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%d %s: not errors.Is %v", tc.status, tc.code, tc.is)
		}
		if errors.Is(err, tc.not) {
			t.Errorf("%d %s: errors.Is %v", tc.status, tc.code, tc.not)
		}
	}
}

func TestDeleteSentAgainFindsItGone(t *testing.T) {
	c, f, _ := newTest(t, 0,
		answer{502, nil, errBody("shard_unavailable", "clean-up", "x")},
		answer{404, nil, errBody("not_found", "no filter", "")})
	if err := c.Delete(context.Background(), "crawl"); err != nil || f.requests() != 2 {
		t.Fatalf("a DELETE whose retry found nothing: %v after %d requests; want nil", err, f.requests())
	}
	c, _, _ = newTest(t, 0, answer{404, nil, errBody("not_found", "no filter", "")})
	if err := c.Delete(context.Background(), "crawl"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a DELETE of nothing: %v, want ErrNotFound", err)
	}
}

func TestContextEndsTheWait(t *testing.T) {
	f := &fakeService{t: t, answers: []answer{{503, map[string]string{"Retry-After": "30"}, errBody("busy", "busy", "r")}},
		arrived: make(chan struct{})}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-f.arrived // then the client waits 30 s, unless the context ends
		cancel()
	}()
	if _, err := c.Stats(ctx, "crawl"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func TestCredentialAndUserAgent(t *testing.T) {
	c, f, _ := newTest(t, 0, answer{200, nil, okStats})
	if _, err := c.Stats(context.Background(), "crawl"); err != nil {
		t.Fatal(err)
	}
	r := f.got[0]
	if r.Header.Get("Authorization") != "Bearer secret" || !strings.HasPrefix(r.Header.Get("User-Agent"), "edgebloom-go-client/") {
		t.Errorf("headers %v", r.Header)
	}
	if _, err := New("ftp://x"); err == nil {
		t.Error("New took an ftp URL")
	}
	if _, err := New("http://x", WithToken("a b")); err == nil {
		t.Error("WithToken took a credential with a space")
	}
	if _, err := c.Stats(context.Background(), "a/b"); err == nil || !strings.Contains(err.Error(), "filter name") {
		t.Errorf("a name with a slash: %v", err)
	}
}

func TestAnAnswerCutShortIsAskedAgain(t *testing.T) {
	// The first answer promises 40 bytes and the connection closes after 12.
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1) == 1 {
			w.Header().Set("Content-Length", "40")
			io.WriteString(w, `{"added":[tr`)
			return
		}
		io.WriteString(w, `{"added":[true]}`)
	}))
	defer srv.Close()
	c, _ := New(srv.URL)
	c.sleep = func(<-chan struct{}, time.Duration) bool { return true }
	added, err := c.Add(context.Background(), "crawl", "k")
	if err != nil || !added[0] || n.Load() != 2 {
		t.Fatalf("Add: %v, %v after %d requests; want [true] after 2", added, err, n.Load())
	}
	// A body that is no answer at all is not asked again.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, `<html>`)
	}))
	defer srv2.Close()
	c, _ = New(srv2.URL)
	n.Store(0)
	if _, err := c.Stats(context.Background(), "crawl"); err == nil || n.Load() != 1 {
		t.Fatalf("Stats of a page: %v after %d requests; want an error after 1", err, n.Load())
	}
}

func TestConnectionsAreKept(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// As the service writes JSON: a newline after it. Long enough that
		// the decoder stops before the end of the body.
		io.WriteString(w, "{\"added\":["+strings.Repeat("true,", MaxKeysPerRequest-1)+"true]}\n")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, _ := New(srv.URL)
	keys := make([]string, MaxKeysPerRequest)
	for range 20 {
		if _, err := c.Add(context.Background(), "crawl", keys...); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("20 adds one after another took %d connections; want 1", n)
	}
}
