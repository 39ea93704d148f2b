package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// keyService answers adds and checks as the service does: for each key
// whether it was new (a set kept here), in order. It records each
// request's keys, the bodies' sizes and how many requests were in flight
// at most; failOn, when set, picks batches (by their first key) to fail.
type keyService struct {
	t        *testing.T
	mu       sync.Mutex
	seen     map[string]bool
	batches  [][]string
	maxBody  int
	inFlight atomic.Int32
	maxIn    atomic.Int32
	failOn   func(keys []string) (status int, body string)
}

func (s *keyService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.maxIn.Load(); n > m && !s.maxIn.CompareAndSwap(m, n); m = s.maxIn.Load() {
	}
	body, _ := io.ReadAll(r.Body)
	var req struct{ Keys []string }
	if err := json.Unmarshal(body, &req); err != nil {
		s.t.Errorf("a body that is no JSON: %v", err)
	}
	if s.failOn != nil {
		if status, msg := s.failOn(req.Keys); status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, msg)
			return
		}
	}
	s.mu.Lock()
	s.batches = append(s.batches, req.Keys)
	s.maxBody = max(s.maxBody, len(body))
	out := make([]bool, len(req.Keys))
	for i, k := range req.Keys {
		if strings.HasSuffix(r.URL.Path, "/add") {
			out[i] = !s.seen[k]
			s.seen[k] = true
		} else {
			out[i] = s.seen[k]
		}
	}
	s.mu.Unlock()
	field := map[bool]string{true: "added", false: "present"}[strings.HasSuffix(r.URL.Path, "/add")]
	b, _ := json.Marshal(map[string][]bool{field: out})
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func newKeyService(t *testing.T, opts ...Option) (*Client, *keyService) {
	t.Helper()
	s := &keyService{t: t, seen: map[string]bool{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, err := New(srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	c.sleep = func(<-chan struct{}, time.Duration) bool { return true }
	return c, s
}

func TestAddSplitsIntoBatchesInOrder(t *testing.T) {
	c, s := newKeyService(t, WithConcurrency(3))
	keys := make([]string, 25_003)
	for i := range keys {
		keys[i] = "https://example.com/" + strconv.Itoa(i)
	}
	// Every third key is there already: its answer must be false, in place.
	var pre []string
	for i := 0; i < len(keys); i += 3 {
		pre = append(pre, keys[i])
	}
	if _, err := c.Add(context.Background(), "crawl", pre...); err != nil {
		t.Fatal(err)
	}
	s.batches = nil
	added, err := c.Add(context.Background(), "crawl", keys...)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range added {
		if a != (i%3 != 0) {
			t.Fatalf("added[%d] = %v; want %v", i, a, i%3 != 0)
		}
	}
	if len(s.batches) != 3 {
		t.Errorf("%d requests for 25,003 keys; want 3", len(s.batches))
	}
	for _, b := range s.batches {
		if len(b) > MaxKeysPerRequest {
			t.Errorf("a request of %d keys", len(b))
		}
	}
	if m := s.maxIn.Load(); m > 3 {
		t.Errorf("%d requests in flight at once; the bound is 3", m)
	}
	present, err := c.Check(context.Background(), "crawl", append(keys[:2:2], "https://example.com/none")...)
	if err != nil || !present[0] || !present[1] || present[2] {
		t.Errorf("Check: %v, %v", present, err)
	}
}

func TestBatchesStayUnderTheBodyLimit(t *testing.T) {
	c, s := newKeyService(t)
	// Keys of 8 KiB whose quotes and control bytes are escaped: a body of
	// 10,000 of them would be about 100 MiB.
	k := strings.Repeat(`a"\`+"\x01", MaxKeyBytes/4)
	keys := make([]string, 400)
	for i := range keys {
		keys[i] = k[:len(k)-4] + fmt.Sprintf("%04d", i)
	}
	added, err := c.Add(context.Background(), "crawl", keys...)
	if err != nil {
		t.Fatal(err)
	}
	if s.maxBody > MaxBodyBytes {
		t.Errorf("a body of %d bytes; the limit is %d", s.maxBody, MaxBodyBytes)
	}
	if len(s.batches) < 2 || len(added) != 400 {
		t.Errorf("%d requests, %d answers", len(s.batches), len(added))
	}
	for i, b := range s.batches {
		for _, key := range b {
			if !strings.HasPrefix(key, k[:len(k)-4]) || len(key) != len(k) {
				t.Fatalf("batch %d: the service read a key of %d bytes, not the one sent", i, len(key))
			}
		}
	}
	// Keys of 8 KiB with nothing to escape go 127 a request (docs/client.md).
	plain := make([]string, 300)
	for i := range plain {
		plain[i] = fmt.Sprintf("%08d", i) + strings.Repeat("p", MaxKeyBytes-8)
	}
	s.batches = nil
	if _, err := c.Add(context.Background(), "crawl", plain...); err != nil || len(s.batches) != 3 {
		t.Fatalf("keys of 8 KiB: %d requests (%v)", len(s.batches), err)
	}
	if most := max(len(s.batches[0]), len(s.batches[1]), len(s.batches[2])); most != 127 {
		t.Errorf("keys of 8 KiB: %d in a request at most; want 127", most)
	}
	if _, err := c.Add(context.Background(), "crawl", strings.Repeat("x", MaxKeyBytes+1)); err == nil ||
		!strings.Contains(err.Error(), "key 0 is 8193 bytes") {
		t.Errorf("a key over the limit: %v", err)
	}
}

func TestKeysAreSentAsTheirBytes(t *testing.T) {
	// A key that is not UTF-8 reaches the service byte for byte (its
	// TextDecoder then reads it), where encoding/json would send U+FFFD.
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"added":[true,true]}`)
	}))
	defer srv.Close()
	c, _ := New(srv.URL)
	if _, err := c.Add(context.Background(), "crawl", "caf\xe9", "tab\there \"q\" \u2028"); err != nil {
		t.Fatal(err)
	}
	want := "{\"keys\":[\"caf\xe9\",\"tab\\there \\\"q\\\" \u2028\"]}"
	if !bytes.Equal(got, []byte(want)) {
		t.Errorf("body %q\nwant %q", got, want)
	}
}

func TestAFailedBatchStopsTheRest(t *testing.T) {
	c, s := newKeyService(t, WithConcurrency(1), WithBatchKeys(10))
	s.failOn = func(keys []string) (int, string) {
		if keys[0] == "k10" { // the second batch: its fourth key is refused
			return 400, `{"error":{"code":"key_too_long","message":"key 3 is long","index":3}}`
		}
		return 0, ""
	}
	keys := make([]string, 35)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	_, err := c.Add(context.Background(), "crawl", keys...)
	var be *BatchError
	var e *Error
	if !errors.As(err, &be) || !errors.As(err, &e) || !errors.Is(err, ErrKeyTooLong) {
		t.Fatalf("err %v; want a *BatchError of an *Error key_too_long", err)
	}
	if e.Index != 13 {
		t.Errorf("Index %d; want 13, the key's index among those given to Add", e.Index)
	}
	for i := range keys {
		if be.Answered[i] != (i < 10) || be.Results[i] != (i < 10) {
			t.Fatalf("key %d: answered %v, result %v; want both %v", i, be.Answered[i], be.Results[i], i < 10)
		}
	}
	if len(s.batches) != 1 {
		t.Errorf("%d batches answered; after the second failed, none was to be sent", len(s.batches))
	}
	if !strings.Contains(err.Error(), "(10 of 35 keys answered)") {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestNoKeysNoRequest(t *testing.T) {
	c, s := newKeyService(t)
	got, err := c.Add(context.Background(), "crawl")
	if err != nil || len(got) != 0 || len(s.batches) != 0 {
		t.Errorf("Add of no keys: %v, %v, %d requests", got, err, len(s.batches))
	}
}

func TestBatchesGoInParallel(t *testing.T) {
	// Each request waits until three are in flight: with WithConcurrency(3)
	// the batches of one Add get there; one at a time they would not.
	all := make(chan struct{})
	var once sync.Once
	c, s := newKeyService(t, WithConcurrency(3), WithBatchKeys(10))
	s.failOn = func(keys []string) (int, string) {
		if s.inFlight.Load() >= 3 {
			once.Do(func() { close(all) })
		}
		select {
		case <-all:
		case <-time.After(10 * time.Second):
			return 500, `{"error":{"code":"internal","message":"no three requests in flight in 10 s"}}`
		}
		return 0, ""
	}
	keys := make([]string, 40)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	added, err := c.Add(context.Background(), "crawl", keys...)
	if err != nil || len(added) != 40 {
		t.Fatalf("Add: %v", err)
	}
	if m := s.maxIn.Load(); m != 3 {
		t.Errorf("%d requests in flight at most; want 3", m)
	}
}
