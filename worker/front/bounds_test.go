package main

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

// A panic in a goroutine the front starts is an error of the request, not
// the end of the program.
func TestSpawnRecovers(t *testing.T) {
	err := <-spawn(func() error { panic("boom") })
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != http.StatusInternalServerError || ae.Code != "internal" {
		t.Fatalf("spawn(panic): got %v; want a 500 internal", err)
	}
	if err := <-spawn(func() error { return nil }); err != nil {
		t.Fatalf("spawn(nil): got %v", err)
	}
	if err := fanOut(3, func(i int) error {
		if i == 1 {
			panic("boom")
		}
		return nil
	}); !errors.As(err, &ae) || ae.Status != http.StatusInternalServerError {
		t.Fatalf("fanOut with a panic: got %v; want a 500", err)
	}
}

// The gate lets in what its budget holds, lines up the rest, and answers
// 503 with Retry-After past its line or its wait; a waiter whose request
// ends stops waiting.
func TestGate(t *testing.T) {
	g := newGate(10)
	ctx := context.Background()
	leave, err := g.enter(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	// More than the budget takes all of it, and waits for it.
	got := make(chan error)
	go func() {
		l, err := g.enter(ctx, 100)
		if err == nil {
			if used, _, _ := g.load(); used != 10 {
				err = errors.New("the big request does not hold the whole budget")
			}
			l()
		}
		got <- err
	}()
	for {
		if _, waiting, _ := g.load(); waiting == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	leave()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if used, waiting, _ := g.load(); used != 0 || waiting != 0 {
		t.Fatalf("after: used %d, waiting %d; want 0, 0", used, waiting)
	}

	// A waiter whose request ends stops waiting with the request's cause.
	full, _ := g.enter(ctx, 10)
	ended, cancel := context.WithCancelCause(ctx)
	go func() { got <- func() error { _, err := g.enter(ended, 1); return err }() }()
	for {
		if _, waiting, _ := g.load(); waiting == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel(errClientGone)
	if err := <-got; !errors.Is(err, errClientGone) {
		t.Fatalf("a waiter whose client left: got %v; want %v", err, errClientGone)
	}

	// Past the line: 503 busy with Retry-After, at once.
	g.line = make([]*int64, maxHeavyWaiting)
	_, err = g.enter(ctx, 1)
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != http.StatusServiceUnavailable || ae.Code != "busy" || ae.RetryAfter != heavyRetrySeconds {
		t.Fatalf("past the line: got %v; want 503 busy with Retry-After", err)
	}
	g.line = nil
	full()
}

// The line is first come, first served: a small request that arrives after
// a large one waits behind it even when its own share is free, so a large
// request is never starved by later small ones.
func TestGateFirstComeFirstServed(t *testing.T) {
	g := newGate(10)
	ctx := context.Background()
	h1, _ := g.enter(ctx, 5)
	h2, _ := g.enter(ctx, 5)
	order := make(chan string, 2)
	waitLine := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			if _, waiting, _ := g.load(); waiting == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the line never reached %d", n)
			}
		}
	}
	enter := func(name string, weight int64) {
		leave, err := g.enter(ctx, weight)
		if err != nil {
			order <- name + ": " + err.Error()
			return
		}
		order <- name
		leave()
	}
	go enter("large", 8)
	waitLine(1)
	go enter("small", 3)
	waitLine(2)
	// The small one's share is free now; the large one's is not.
	h1()
	select {
	case first := <-order:
		t.Fatalf("%q entered while the large request before it waited", first)
	case <-time.After(10 * waitTick):
		// Ten looks of every waiter at the budget: none may enter.
	}
	h2()
	if got := []string{<-order, <-order}; got[0] != "large" || got[1] != "small" {
		t.Fatalf("served %v; want [large small], first come first served", got)
	}
}
