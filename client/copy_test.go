package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/snapshot"
)

// checkpointService serves a one-shard filter's checkpoints: latest says
// generation gen, checkpoint n; a snapshot of them is a filter holding the
// key "gen-<gen>". It records the paths asked.
type checkpointService struct {
	mu    sync.Mutex
	gen   uint64
	n     uint64
	paths []string
}

func (s *checkpointService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	gen, n := s.gen, s.n
	s.paths = append(s.paths, r.URL.Path)
	s.mu.Unlock()
	cursor := snapshot.Cursor{Generation: gen, Shards: []snapshot.ShardPosition{{Epoch: 1, Position: n}}}.Text()
	switch {
	case strings.HasSuffix(r.URL.Path, "/checkpoints/latest"):
		fmt.Fprintf(w, `{"generation":%d,"checkpoint":%d,"cursor":%q,"oldest":1,"published":"2026-01-01T00:00:00Z","interval":1}`, gen, n, cursor)
	case r.URL.Path == fmt.Sprintf("/v1/filters/crawl/checkpoints/%d/%d/snapshot", gen, n):
		f, _ := bloom.New(1000, 0.01)
		f.AddString(fmt.Sprintf("gen-%d", gen))
		data, _ := f.MarshalBinary()
		w.Header().Set("X-Edgebloom-Cursor", cursor)
		w.Write(data)
	default:
		w.WriteHeader(http.StatusGone)
		fmt.Fprintf(w, `{"error":{"code":"checkpoint_gone","message":"%s"}}`, r.URL.Path)
	}
}

func (s *checkpointService) set(gen, n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen, s.n, s.paths = gen, n, nil
}

func TestCheckpointCopyGenerations(t *testing.T) {
	s := &checkpointService{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, _ := New(srv.URL)
	cp, err := c.NewCopy("crawl", CopyOptions{Mode: Checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s.set(5, 3)
	if r, err := cp.Sync(ctx); err != nil || !r.Snapshot || r.Generation != 5 || r.Checkpoint != 3 || !cp.HasString("gen-5") {
		t.Fatalf("the first sync: %+v, %v", r, err)
	}
	// A latest of the generation before (an edge cache a few seconds
	// behind): nothing is asked beyond it, and the copy stays.
	s.set(4, 9)
	if r, err := cp.Sync(ctx); err != nil || r.Changed || len(s.paths) != 1 || cp.Generation() != 5 {
		t.Fatalf("a stale latest: %+v, %v, asked %v", r, err, s.paths)
	}
	// The filter made again: the copy is replaced whole, never given the
	// new generation's delta over the old bits.
	s.set(6, 1)
	r, err := cp.Sync(ctx)
	if err != nil || !r.Snapshot || r.Resync != "generation" || cp.Generation() != 6 || !cp.HasString("gen-6") || cp.HasString("gen-5") {
		t.Fatalf("a new generation: %+v, %v", r, err)
	}
	for _, p := range s.paths {
		if strings.HasSuffix(p, "/delta") {
			t.Errorf("asked %s across generations", p)
		}
	}
}

func TestRunEndsOnlyOnWhatWaitingCannotCure(t *testing.T) {
	var mu sync.Mutex
	status := 404
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"code":"%s","message":"m"}}`, map[int]string{404: "not_found", 401: "token_expired"}[status])
	}))
	defer srv.Close()
	c, _ := New(srv.URL)
	syncs := 0
	c.sleep = func(<-chan struct{}, time.Duration) bool { return true } // the intervals pass at once
	cp, _ := c.NewCopy("crawl", CopyOptions{})
	err := cp.Run(context.Background(), time.Minute, func(_ SyncResult, err error) {
		syncs++
		if syncs == 3 {
			// No filter for three syncs: Run went on. Now the token expires.
			mu.Lock()
			status = 401
			mu.Unlock()
		}
		if syncs < 4 && !errors.Is(err, ErrNotFound) {
			t.Errorf("sync %d: %v; want ErrNotFound", syncs, err)
		}
	})
	if !errors.Is(err, ErrTokenExpired) || syncs != 4 {
		t.Fatalf("Run: %v after %d syncs; want ErrTokenExpired after 4", err, syncs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.sleep = sleepCtx
	if err := cp.Run(ctx, time.Minute, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with its context ended: %v", err)
	}
}

// changesService serves /changes of a one-shard filter of generation 1 at
// epoch 1: without since, the snapshot (holding "snap-<k>" for the k-th)
// and the cursor at position 10; with since, the answer its field gives.
type changesService struct {
	mu    sync.Mutex
	snaps int
	since func(w http.ResponseWriter) // nil: answer as without since
}

func (s *changesService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.URL.Query().Has("since") && s.since != nil {
		s.since(w)
		return
	}
	s.writeSnapshot(w)
}

// writeSnapshot answers the next snapshot; s.mu is held.
func (s *changesService) writeSnapshot(w http.ResponseWriter) {
	s.snaps++
	f, _ := bloom.New(1000, 0.01)
	f.AddString(fmt.Sprintf("snap-%d", s.snaps))
	data, _ := f.MarshalBinary()
	w.Header().Set("X-Edgebloom-Cursor", snapshot.Cursor{Generation: 1, Shards: []snapshot.ShardPosition{{Epoch: 1, Position: 10}}}.Text())
	w.Header().Set("X-Edgebloom-Format", "filter")
	w.Write(data)
}

func TestChangesCopyResyncs(t *testing.T) {
	f, _ := bloom.New(1000, 0.01)
	delta := func(epoch uint32, from uint64) []byte {
		return snapshot.EncodeDelta(&snapshot.Delta{Generation: 1, M: f.NumBits(), K: f.NumHashes(), Shards: 1,
			Records: []snapshot.DeltaRecord{{Shard: 0, Epoch: epoch, From: from, To: from + 1, Count: 2, Positions: f.Locations([]byte("added"))}}})
	}
	s := &changesService{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c, _ := New(srv.URL)
	cp, _ := c.NewCopy("crawl", CopyOptions{})
	ctx := context.Background()
	if r, err := cp.Sync(ctx); err != nil || !r.Snapshot || !cp.HasString("snap-1") {
		t.Fatalf("the first sync: %+v, %v", r, err)
	}
	sendDelta := func(d []byte) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("X-Edgebloom-Format", "delta")
			w.Header().Set("X-Edgebloom-Cursor", "ignored")
			w.Write(d)
		}
	}
	s.since = sendDelta(delta(1, 10)) // fits: applied in place
	if r, err := cp.Sync(ctx); err != nil || r.Snapshot || !r.Changed || !cp.HasString("added") || !cp.HasString("snap-1") {
		t.Fatalf("a delta that fits: %+v, %v", r, err)
	}
	for _, tc := range []struct {
		what  string
		since func(w http.ResponseWriter)
	}{
		{"a delta of another epoch", sendDelta(delta(2, 11))},
		{"a delta with a gap", sendDelta(delta(1, 12))},
		{"a cursor the service does not know", func(w http.ResponseWriter) {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":{"code":"invalid_params","message":"since must be the X-Edgebloom-Cursor of an earlier answer"}}`)
		}},
	} {
		s.mu.Lock()
		s.since = tc.since
		want := fmt.Sprintf("snap-%d", s.snaps+1)
		s.mu.Unlock()
		r, err := cp.Sync(ctx)
		if err != nil || !r.Snapshot || r.Resync != "mismatch" || !cp.HasString(want) || cp.HasString("added") {
			t.Errorf("%s: %+v, %v; want the snapshot again, Resync mismatch", tc.what, r, err)
		}
	}
	// The service says why it sends the snapshot: the copy says it too.
	s.since = func(w http.ResponseWriter) {
		w.Header().Set("X-Edgebloom-Resync", "gone")
		s.writeSnapshot(w)
	}
	if r, err := cp.Sync(ctx); err != nil || !r.Snapshot || r.Resync != "gone" {
		t.Errorf("a snapshot for a cursor whose changes are gone: %+v, %v", r, err)
	}
}
