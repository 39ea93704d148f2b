//go:build workerd

// The client against the real Worker in workerd. worker/test/go-client.test.js
// builds the Worker, serves it on 127.0.0.1 (Miniflare, a checkpoint every
// second) and runs these tests with the tag workerd and
// EDGEBLOOM_SERVICE_URL, EDGEBLOOM_SERVICE_TOKEN (the secret) and
// EDGEBLOOM_SERVICE_CONTROL (testkit/serve-worker.js's server of the Durable
// Objects' test hooks) set: bash build.sh test-worker, or
// node --test worker/test/go-client.test.js.

package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/client"
	"github.com/edgebloom/edgebloom/token"
)

type service struct {
	url, secret, control string
}

func serviceOf(t *testing.T) service {
	t.Helper()
	s := service{os.Getenv("EDGEBLOOM_SERVICE_URL"), os.Getenv("EDGEBLOOM_SERVICE_TOKEN"), os.Getenv("EDGEBLOOM_SERVICE_CONTROL")}
	if s.url == "" || s.secret == "" || s.control == "" {
		t.Fatal("these tests run against the Worker that worker/test/go-client.test.js serves: node --test worker/test/go-client.test.js")
	}
	return s
}

func (s service) client(t *testing.T, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(s.url, append([]client.Option{client.WithToken(s.secret)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// hook calls a Durable Object's test hook (worker/shard/test-hooks.js). It
// may be called from any goroutine: a failure is t.Error.
func (s service) hook(t *testing.T, object, path, body string) {
	t.Helper()
	res, err := http.Post(s.control+"/hook/"+object+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return
	}
	res.Body.Close()
	if res.StatusCode != 204 {
		t.Errorf("hook %s %s: %d", object, path, res.StatusCode)
	}
}

func urls(prefix string, n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("https://%s.example/%d", prefix, i)
	}
	return keys
}

func all(bs []bool, want bool) bool {
	for _, b := range bs {
		if b != want {
			return false
		}
	}
	return true
}

func TestServiceAPI(t *testing.T) {
	s := serviceOf(t)
	c := s.client(t)
	ctx := context.Background()
	p := client.Params{Capacity: 100_000, ErrorRate: 0.001, Shards: 4}
	f, err := c.Create(ctx, "go-api", p)
	if err != nil || !f.Created || f.Shards != 4 || f.Hashes == 0 {
		t.Fatalf("Create: %+v, %v", f, err)
	}
	if f, err = c.Create(ctx, "go-api", p); err != nil || f.Created {
		t.Fatalf("Create again: %+v, %v; want Created false", f, err)
	}
	if _, err := c.Create(ctx, "go-api", client.Params{Capacity: 5, ErrorRate: 0.01}); !errors.Is(err, client.ErrConflict) {
		t.Fatalf("Create with other parameters: %v; want ErrConflict", err)
	}

	keys := urls("api", 25_000) // three batches
	added, err := c.Add(ctx, "go-api", keys...)
	if err != nil || len(added) != len(keys) || !all(added, true) {
		t.Fatalf("Add: %d answers, %v", len(added), err)
	}
	again, err := c.Add(ctx, "go-api", append(keys[:3:3], "https://api.example/new")...)
	if err != nil || again[0] || again[1] || again[2] || !again[3] {
		t.Fatalf("Add again: %v, %v", again, err)
	}
	present, err := c.Check(ctx, "go-api", keys...)
	if err != nil || !all(present, true) {
		t.Fatalf("Check: %v", err)
	}
	st, err := c.Stats(ctx, "go-api")
	if err != nil || st.Total.Count != uint64(len(keys))+1 || len(st.PerShard) != 4 || st.Capacity != p.Capacity {
		t.Fatalf("Stats: %+v, %v", st, err)
	}

	set, err := c.Snapshot(ctx, "go-api")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !set.HasString(k) {
			t.Fatalf("the snapshot lacks %s", k)
		}
	}
	var buf bytes.Buffer
	if n, err := c.WriteSnapshot(ctx, "go-api", &buf); err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteSnapshot: %d, %v", n, err)
	}
	if b, _ := set.(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary(); !bytes.Equal(b, buf.Bytes()) {
		t.Error("Snapshot and WriteSnapshot differ")
	}

	// Scoped tokens: a reader checks and reads, a writer adds.
	read, err := c.MintToken(ctx, token.Read, "go-api", time.Hour)
	if err != nil || read.Scope != token.Read || read.Filter != "go-api" || time.Until(read.Expires) < 59*time.Minute {
		t.Fatalf("MintToken: %+v, %v", read, err)
	}
	reader := s.client(t, client.WithToken(read.Token))
	if got, err := reader.Check(ctx, "go-api", keys[0]); err != nil || !got[0] {
		t.Errorf("a read token's Check: %v, %v", got, err)
	}
	if _, err := reader.Add(ctx, "go-api", "x"); !errors.Is(err, client.ErrForbidden) {
		t.Errorf("a read token's Add: %v; want ErrForbidden", err)
	}
	write, err := c.MintToken(ctx, token.Write, "go-*", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	writer := s.client(t, client.WithToken(write.Token))
	if got, err := writer.Add(ctx, "go-api", "https://api.example/w"); err != nil || !got[0] {
		t.Errorf("a write token's Add: %v, %v", got, err)
	}
	if _, err := writer.Stats(ctx, "go-api"); !errors.Is(err, client.ErrForbidden) {
		t.Errorf("a write token's Stats: %v; want ErrForbidden", err)
	}
	if _, err := writer.MintToken(ctx, token.Read, "go-api", time.Hour); !errors.Is(err, client.ErrForbidden) {
		t.Errorf("a write token's MintToken: %v; want ErrForbidden", err)
	}
	stranger := s.client(t, client.WithToken("not-the-secret"))
	var e *client.Error
	if _, err := stranger.Check(ctx, "go-api", "x"); !errors.Is(err, client.ErrUnauthorized) || !errors.As(err, &e) || e.Code != "unauthorized" {
		t.Errorf("a wrong secret: %v; want ErrUnauthorized, unauthorized", err)
	}

	if err := c.Delete(ctx, "go-api"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "go-api"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("Delete again: %v; want ErrNotFound", err)
	}
	if _, err := c.Check(ctx, "go-api", "x"); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("Check of a deleted filter: %v; want ErrNotFound", err)
	}
}

// onFirst502 is a Transport that calls f once, when the first 502 answer
// comes through.
type onFirst502 struct {
	seen atomic.Int32
	f    func()
}

func (o *onFirst502) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && res.StatusCode == 502 && o.seen.Add(1) == 1 {
		o.f()
	}
	return res, err
}

func TestServiceShardUnavailable(t *testing.T) {
	s := serviceOf(t)
	c := s.client(t)
	ctx := context.Background()
	if _, err := c.Create(ctx, "go-502", client.Params{Capacity: 10_000, ErrorRate: 0.01, Shards: 2}); err != nil {
		t.Fatal(err)
	}
	keys := urls("fail", 200) // keys of both shards
	s.hook(t, "shard:go-502:1", "/_test/unreachable", `{"on":true}`)

	// The retries run out: the error says which shard code, with the
	// request id the service logged it under.
	short := s.client(t, client.WithRetry(client.RetryPolicy{Attempts: 2, MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond}))
	_, err := short.Add(ctx, "go-502", keys...)
	var be *client.BatchError
	var e *client.Error
	if !errors.As(err, &be) || !errors.As(err, &e) || !errors.Is(err, client.ErrShardUnavailable) {
		t.Fatalf("Add with shard 1 unreachable: %v; want a *BatchError of ErrShardUnavailable", err)
	}
	if e.Status != 502 || e.RequestID == "" || be.Answered[0] {
		t.Errorf("%+v; answered %v", e, be.Answered[0])
	}

	// The shard comes back while the client backs off: Add succeeds, and
	// every key is in the filter.
	o := &onFirst502{f: func() { s.hook(t, "shard:go-502:1", "/_test/unreachable", `{"on":false}`) }}
	patient := s.client(t, client.WithHTTPClient(&http.Client{Transport: o}))
	if _, err := patient.Add(ctx, "go-502", keys...); err != nil {
		t.Fatalf("Add while the shard comes back: %v", err)
	}
	if o.seen.Load() == 0 {
		t.Fatal("no 502 was seen: the shard was not unreachable")
	}
	present, err := c.Check(ctx, "go-502", keys...)
	if err != nil || !all(present, true) {
		t.Fatalf("Check after: %v", err)
	}
	if err := c.Delete(ctx, "go-502"); err != nil {
		t.Fatal(err)
	}
}
