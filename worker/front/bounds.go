// What bounds a kept front whatever it is sent: expensive requests (those
// that read every shard's changes, or stream a snapshot) take a share of a
// memory budget before they start, and wait for it in a bounded line or
// are answered 503 with Retry-After; a request whose client left, or that
// ran past its deadline, stops waiting for JS (bridge_js.go); and every
// goroutine the front starts recovers (spawn).

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/snapshot"
)

// The budget of expensive work in one front. Go's memory in a front stays
// under about baseline + 2 × heavyBudget whatever the burst (Go's heap may
// grow to twice what is live before it collects): worker/test/soak.test.js
// holds it with 1,500 abandoned checkpoint snapshots.
const (
	heavyBudget = 24 << 20
	// maxHeavyWaiting requests wait for a share at most; the next gets 503.
	maxHeavyWaiting = 256
	// heavyWait is the longest a request waits for a share before 503.
	heavyWait = 10 * time.Second
	// heavyRetrySeconds is the Retry-After of such a 503.
	heavyRetrySeconds = 1
	// waitTick is how often a waiting request looks at the budget again:
	// it waits on a timer of its own, never for a signal from the request
	// that gives a share back (see pause).
	waitTick = 20 * time.Millisecond
)

// What an expensive request may hold at once, from its filter's
// parameters: a snapshot streams a shard at a time (the first megabyte of
// a shard's body, a megabyte held before the answer streams, the chunk in
// flight).
func snapshotWeight(p filterParams) int64 {
	return min(3*int64(encodedSize(p))*int64(p.Shards), 3<<20) + 64<<10
}

// deltaWeight is what making the delta over spans consecutive checkpoints
// holds. One consecutive delta: each shard's record (its Rice-coded
// positions, at most abi.DeltaLimit of the shard's payload, or the shard
// answers changes_gone), the delta made of them and the cache's copy. A
// merge of more reads one consecutive delta at a time (made as above, or
// the cache's copy) and sets its positions into a bitset of each shard
// (snapshot.MergeBytes), then codes the merged delta from the bitsets
// (snapshot.MergedDeltaBytes, and the cache's copy of it).
func deltaWeight(p filterParams, spans uint64) int64 {
	m, _, _ := bloom.Optimal(shardCapacity(p), p.ErrorRate)
	payload := int((m + 7) / 8)
	one := 3 * int64(p.Shards) * int64(abi.DeltaRecordHeader+2+abi.DeltaLimit(payload))
	if spans <= 1 {
		return one + 64<<10
	}
	return one + int64(snapshot.MergeBytes(m, p.Shards)) + 2*int64(snapshot.MergedDeltaBytes(m, p.Shards)) + 64<<10
}

// enterHeavy takes the share of the front's budget of an expensive request
// on filter name (weight says how much, from its parameters). A filter
// whose parameters cannot be read takes the least share: its request
// answers what withParams answers (404, 502), or what the edge cache
// holds.
func (s *Server) enterHeavy(ctx context.Context, name string, weight func(p filterParams) int64) (func(), error) {
	p, err := s.params(ctx, name, anyAge)
	if err != nil {
		return heavy.enter(ctx, 64<<10)
	}
	return heavy.enter(ctx, weight(p))
}

// A gate shares a budget among the requests that enter it, first come,
// first served: a request enters at once only when nobody waits and its
// share is free; else it joins the end of the line, and enters once it is
// first in line and its share is free. A small request never passes a large
// one that waits before it.
type gate struct {
	mu      sync.Mutex
	budget  int64
	used    int64
	line    []*int64 // the weights of the requests waiting, first come first
	refused int      // the requests answered errBusy
}

var heavy = newGate(heavyBudget)

func newGate(budget int64) *gate { return &gate{budget: budget} }

// errBusy answers a request that found the front's budget taken.
func errBusy() error {
	e := errorf(http.StatusServiceUnavailable, "busy", "the service is busy with other expensive requests; ask again in %d s", heavyRetrySeconds)
	e.RetryAfter = heavyRetrySeconds
	return e
}

// enter takes weight of g's budget (all of it, at most) and returns the
// function that gives it back. When the budget is taken, or others wait, it
// waits its turn, while fewer than maxHeavyWaiting others do and for
// heavyWait at most, else it answers errBusy; it stops waiting when ctx's
// request ends.
func (g *gate) enter(ctx context.Context, weight int64) (func(), error) {
	weight = max(1, min(weight, g.budget))
	leave := func() {
		g.mu.Lock()
		g.used -= weight
		g.mu.Unlock()
	}
	g.mu.Lock()
	if len(g.line) == 0 && g.used+weight <= g.budget {
		g.used += weight
		g.mu.Unlock()
		return leave, nil
	}
	if len(g.line) >= maxHeavyWaiting {
		g.refused++
		g.mu.Unlock()
		return nil, errBusy()
	}
	me := &weight
	g.line = append(g.line, me)
	g.mu.Unlock()
	// out takes the request out of the line, wherever it is.
	out := func() {
		if i := slices.Index(g.line, me); i >= 0 {
			g.line = slices.Delete(g.line, i, i+1)
		}
	}
	for deadline := time.Now().Add(heavyWait); ; {
		g.mu.Lock()
		if g.line[0] == me && g.used+weight <= g.budget {
			g.used += weight
			out()
			g.mu.Unlock()
			return leave, nil
		}
		late := !time.Now().Before(deadline)
		if late {
			g.refused++
			out()
		}
		g.mu.Unlock()
		if late {
			return nil, errBusy()
		}
		if err := pause(ctx, waitTick); err != nil {
			g.mu.Lock()
			out()
			g.mu.Unlock()
			return nil, err
		}
	}
}

// load reports the budget in use, the requests waiting and those refused
// so far, for the test endpoints.
func (g *gate) load() (used int64, waiting, refused int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.used, len(g.line), g.refused
}

// errClientGone is the cause of a request's context when its client went
// away (request.signal's abort, in workerd).
var errClientGone = errors.New("the client went away")

// endedError is what a request whose context ended answers, or nil while
// it runs: 499 client_gone (logged nowhere: nobody reads it) or 503
// deadline.
func endedError(ctx context.Context) error {
	switch cause := context.Cause(ctx); {
	case cause == nil:
		return nil
	case errors.Is(cause, errClientGone):
		return errorf(499, "client_gone", "the client went away")
	case errors.Is(cause, context.DeadlineExceeded):
		return internalError(http.StatusServiceUnavailable, "deadline", "the request ran out of time", cause)
	default:
		return internalError(http.StatusServiceUnavailable, "canceled", "the request was canceled", cause)
	}
}

// panicError is the 500 of a recovered panic: its value and stack go to
// the log, never to the client.
func panicError(v any) error {
	return internalError(http.StatusInternalServerError, "internal", "the service failed to serve the request",
		fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
}

// spawn runs fn in a goroutine of its own and sends its error on the
// channel it returns; a panic in fn is recovered into a 500 (panicError).
// An unrecovered panic in any goroutine ends the Go program, and with it
// every request the instance serves: the front starts goroutines only
// through spawn.
func spawn(fn func() error) <-chan error {
	done := make(chan error, 1)
	go func() {
		var err error
		defer func() {
			if v := recover(); v != nil {
				err = panicError(v)
			}
			done <- err
		}()
		err = fn()
	}()
	return done
}
