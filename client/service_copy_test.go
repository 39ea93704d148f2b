//go:build workerd

package client_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/client"
	"github.com/edgebloom/edgebloom/snapshot"
)

type report struct {
	client.SyncResult
	err error
}

// waitCopy reads the reports of a running copy until cond holds after one,
// for at most a minute, and returns the reports it read.
func waitCopy(t *testing.T, reports <-chan report, what string, cond func() bool) []report {
	t.Helper()
	var seen []report
	deadline := time.After(time.Minute)
	for {
		select {
		case r := <-reports:
			seen = append(seen, r)
			if cond() {
				return seen
			}
		case <-deadline:
			last := report{}
			if len(seen) > 0 {
				last = seen[len(seen)-1]
			}
			t.Fatalf("%s: not after a minute (%d syncs, the last %+v)", what, len(seen), last)
		}
	}
}

func holdsAll(cp *client.Copy, keys []string) bool {
	for _, k := range keys {
		if !cp.HasString(k) {
			return false
		}
	}
	return true
}

// sameAsService reports whether the copy's bytes are the service's snapshot's.
func sameAsService(t *testing.T, c *client.Client, cp *client.Copy, name string) bool {
	t.Helper()
	var mine, theirs bytes.Buffer
	if _, err := cp.WriteTo(&mine); err != nil {
		return false
	}
	if _, err := c.WriteSnapshot(context.Background(), name, &theirs); err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(mine.Bytes(), theirs.Bytes())
}

// TestServiceCopyDeletePut runs a copy while its filter is deleted and made
// again, of the same shape and of another: each time the copy goes over to
// the new generation with a snapshot (never a delta across generations),
// never goes back, and ends byte for byte the service's snapshot.
func TestServiceCopyDeletePut(t *testing.T) {
	for _, mode := range []client.SyncMode{client.Changes, client.Checkpoints} {
		t.Run(mode.String(), func(t *testing.T) { copyDeletePut(t, mode) })
	}
}

func copyDeletePut(t *testing.T, mode client.SyncMode) {
	s := serviceOf(t)
	c := s.client(t)
	ctx := context.Background()
	name := "go-copy-" + mode.String()
	params := client.Params{Capacity: 10_000, ErrorRate: 0.01, Shards: 2}
	if _, err := c.Create(ctx, name, params); err != nil {
		t.Fatal(err)
	}
	a := urls("a-"+name, 300)
	if _, err := c.Add(ctx, name, a...); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "copy.ebloom")
	cp, err := c.NewCopy(name, client.CopyOptions{Mode: mode, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	reports := make(chan report, 100_000)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- cp.Run(runCtx, 20*time.Millisecond, func(r client.SyncResult, err error) { reports <- report{r, err} })
	}()
	stopRun := sync.OnceValue(func() error {
		stop()
		return <-done
	})
	defer stopRun()

	waitCopy(t, reports, "the copy holds the first keys", func() bool { return holdsAll(cp, a) })
	gen := cp.Generation()
	more := urls("a2-"+name, 100)
	if _, err := c.Add(ctx, name, more...); err != nil {
		t.Fatal(err)
	}
	seen := waitCopy(t, reports, "the copy holds keys added later", func() bool { return holdsAll(cp, more) })
	delta := false
	for _, r := range seen {
		delta = delta || (r.err == nil && r.Changed && !r.Snapshot)
	}
	if !delta {
		t.Errorf("the copy caught up with a snapshot, not a delta: %+v", seen)
	}

	for i, shards := range []int{2, 3} { // the same shape, then another
		if err := c.Delete(ctx, name); err != nil {
			t.Fatal(err)
		}
		params.Shards = shards
		if _, err := c.Create(ctx, name, params); err != nil {
			t.Fatal(err)
		}
		b := urls("b-"+name+"-"+string(rune('0'+i)), 300)
		if _, err := c.Add(ctx, name, b...); err != nil {
			t.Fatal(err)
		}
		seen := waitCopy(t, reports, "the copy holds the new generation's keys", func() bool {
			return cp.Generation() != gen && holdsAll(cp, b)
		})
		seen = append(seen, waitCopy(t, reports, "the copy is the service's snapshot, byte for byte", func() bool {
			return sameAsService(t, c, cp, name)
		})...)
		moved := false
		for _, r := range seen {
			switch {
			case r.err != nil || !r.Changed:
			case r.Generation == gen && moved:
				t.Fatalf("a sync went back to generation %d: %+v", gen, r)
			case r.Generation != gen && !moved:
				moved = true
				if !r.Snapshot || r.Resync != "generation" {
					t.Fatalf("the copy went to generation %d with %+v; want a snapshot, Resync generation", r.Generation, r)
				}
			}
		}
		gen = cp.Generation()
	}
	if err := stopRun(); err != context.Canceled {
		t.Errorf("Run returned %v; want context.Canceled", err)
	}

	// What Run wrote: the snapshot and its cursor, which a new copy loads.
	again, err := c.NewCopy(name, client.CopyOptions{Mode: mode, Path: path})
	if err != nil || !again.Loaded() || again.Cursor() != cp.Cursor() || again.Generation() != gen {
		t.Fatalf("NewCopy from %s: loaded %v, cursor %q (want %q), %v", path, again.Loaded(), again.Cursor(), cp.Cursor(), err)
	}
	if !sameAsService(t, c, again, name) {
		t.Error("the copy loaded from the file is not the service's snapshot")
	}
}

// TestServiceCopyResumes: a copy kept in a file goes on from it with a
// delta, and resyncs when the filter was made again while no copy ran.
func TestServiceCopyResumes(t *testing.T) {
	s := serviceOf(t)
	c := s.client(t)
	ctx := context.Background()
	const name = "go-resume"
	params := client.Params{Capacity: 10_000, ErrorRate: 0.01} // one shard: the plain format
	if _, err := c.Create(ctx, name, params); err != nil {
		t.Fatal(err)
	}
	a := urls("resume-a", 100)
	if _, err := c.Add(ctx, name, a...); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "crawl.ebloom")
	cp, err := c.NewCopy(name, client.CopyOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if !cp.Synced().IsZero() || cp.Loaded() {
		t.Fatal("a new copy says it synced")
	}
	before := time.Now()
	if r, err := cp.Sync(ctx); err != nil || !r.Snapshot || !holdsAll(cp, a) || cp.Synced().Before(before) {
		t.Fatalf("the first Sync: %+v, %v, synced at %v", r, err, cp.Synced())
	}
	// The file is a snapshot any reader of the format loads.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	set, err := snapshot.Load(data, client.MaxShardBits)
	if err != nil || !set.HasString(a[0]) {
		t.Fatalf("snapshot.Load of the copy's file: %v", err)
	}

	b := urls("resume-b", 100)
	if _, err := c.Add(ctx, name, b...); err != nil {
		t.Fatal(err)
	}
	resumed, err := c.NewCopy(name, client.CopyOptions{Path: path})
	if err != nil || !resumed.Loaded() || !holdsAll(resumed, a) {
		t.Fatalf("NewCopy from the file: %v", err)
	}
	if r, err := resumed.Sync(ctx); err != nil || r.Snapshot || !r.Changed || !holdsAll(resumed, b) {
		t.Fatalf("Sync of the resumed copy: %+v, %v; want a delta with the new keys", r, err)
	}
	if r, err := resumed.Sync(ctx); err != nil || r.Changed {
		t.Fatalf("Sync with nothing new: %+v, %v; want no change", r, err)
	}
	if !sameAsService(t, c, resumed, name) {
		t.Fatal("the resumed copy is not the service's snapshot")
	}

	// Made again while no copy ran: the next copy from the file resyncs.
	if err := c.Delete(ctx, name); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, name, params); err != nil {
		t.Fatal(err)
	}
	cc := urls("resume-c", 10)
	if _, err := c.Add(ctx, name, cc...); err != nil {
		t.Fatal(err)
	}
	later, err := c.NewCopy(name, client.CopyOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := later.Sync(ctx); err != nil || !r.Snapshot || r.Resync != "generation" {
		t.Fatalf("Sync after the filter was made again: %+v, %v; want a snapshot, Resync generation", r, err)
	}
	if !holdsAll(later, cc) || !sameAsService(t, c, later, name) {
		t.Fatal("the resynced copy is not the new filter")
	}

	// The file is this filter's copy: another filter's copy may not take it.
	if _, err := c.NewCopy("go-other", client.CopyOptions{Path: path}); err == nil {
		t.Error("NewCopy of another filter took the file")
	}
}
