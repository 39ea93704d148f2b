//go:build !(js && wasm)

package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// shortClaims makes the claim's wait short for one test.
func shortClaims(t *testing.T, d time.Duration) {
	old := claimWait
	claimWait = d
	t.Cleanup(func() { claimWait = old })
}

// Every way out of lookOrMake and of the cached answer's making gives the
// claim back: the next reader of the key claims it at once, without
// waiting for a maker that is gone.
func TestClaimGivenBackOnEveryPath(t *testing.T) {
	for _, tt := range []struct {
		name string
		// end, when set, ends the request during the first look-up
		end   error
		build func() (*cachedAnswer, error)
		code  string
	}{
		{name: "client gone during the first look-up", end: errClientGone, code: "client_gone"},
		{name: "deadline during the first look-up", end: context.DeadlineExceeded, code: "deadline"},
		{name: "shard error", build: func() (*cachedAnswer, error) {
			return nil, errorf(http.StatusBadGateway, "shard_unavailable", "the shard failed")
		}, code: "shard_unavailable"},
		{name: "panic", build: func() (*cachedAnswer, error) { panic("boom") }, code: "panic"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := cacheKey("claims", 1, tt.name)
			ctx := context.Background()
			var err error
			func() {
				defer func() {
					if v := recover(); v != nil {
						err = errorf(500, "panic", "%v", v)
					}
				}()
				if tt.end != nil {
					ctx, cancel := context.WithCancelCause(ctx)
					var done func()
					_, done, err = lookOrMake(ctx, key, func() bool { cancel(tt.end); return false })
					if done != nil {
						t.Error("a request that ended got a claim to make")
					}
					return
				}
				_, _, err = cached(ctx, key, 60, nil, tt.build)
			}()
			var ae *apiError
			if !errors.As(err, &ae) || ae.Code != tt.code {
				t.Fatalf("got %v; want %s", err, tt.code)
			}
			if beingMade.busy(key) {
				t.Fatalf("after %v the claim is still held: every later reader would wait %v", err, claimWait)
			}
		})
	}
}

// A look-up whose request ends while it looks gives back the claim it
// took, whatever the cache's answer: the case of a request context that
// ends inside match.
func TestClaimGivenBackWhenTheClientLeavesDuringTheLookUp(t *testing.T) {
	key := cacheKey("claims", 1, "leaves")
	ctx, cancel := context.WithCancelCause(context.Background())
	hit, done, err := lookOrMake(ctx, key, func() bool { cancel(errClientGone); return false })
	var ae *apiError
	if hit || done != nil || !errors.As(err, &ae) || ae.Code != "client_gone" {
		t.Fatalf("got hit %v, done %v, err %v; want 499 client_gone", hit, done != nil, err)
	}
	if beingMade.busy(key) {
		t.Fatal("a client that left during the first look-up kept the claim")
	}
	// The next reader claims at once.
	start := time.Now()
	_, done, err = lookOrMake(context.Background(), key, func() bool { return false })
	if err != nil || done == nil || time.Since(start) > claimWait/2 {
		t.Fatalf("next reader: err %v after %v", err, time.Since(start))
	}
	done()
}

// A maker slower than the claim's wait: the waiter takes the claim over,
// and the slow maker, on finishing, releases nothing of it.
func TestSlowMakerReleasesNothingOfTheTakeOver(t *testing.T) {
	shortClaims(t, 50*time.Millisecond)
	key := cacheKey("claims", 1, "slow")
	miss := func() bool { return false }
	_, slowDone, err := lookOrMake(context.Background(), key, miss)
	if err != nil || slowDone == nil {
		t.Fatalf("the first maker: %v", err)
	}
	// The second waits claimWait for the first, then takes over.
	_, takeOverDone, err := lookOrMake(context.Background(), key, miss)
	if err != nil || takeOverDone == nil {
		t.Fatalf("the waiter: %v", err)
	}
	slowDone()
	if !beingMade.busy(key) {
		t.Fatal("the slow maker released the claim of the request that took over")
	}
	// A third reader waits for the one that took over, and finds its
	// answer.
	made := make(chan struct{})
	go func() {
		time.Sleep(5 * time.Millisecond)
		close(made)
		takeOverDone()
	}()
	hit, _, err := lookOrMake(context.Background(), key, func() bool {
		select {
		case <-made:
			return true
		default:
			return false
		}
	})
	if err != nil || !hit {
		t.Fatalf("the third reader: hit %v, err %v; want the take-over's answer", hit, err)
	}
	if beingMade.busy(key) {
		t.Fatal("the claim is held after its holder finished")
	}
}

// countingWriter counts the WriteHeader calls that reach it.
type countingWriter struct {
	*httptest.ResponseRecorder
	headers int
}

func (c *countingWriter) WriteHeader(status int) {
	c.headers++
	c.ResponseRecorder.WriteHeader(status)
}

// A snapshot streamed through the cache's tee sends its status once,
// however many writes its body takes (net/http logs "superfluous
// WriteHeader" for every other).
func TestCacheTeeWritesTheHeaderOnce(t *testing.T) {
	w := &countingWriter{ResponseRecorder: httptest.NewRecorder()}
	w.Header().Set("Content-Length", "6")
	tee := &cacheTee{ResponseWriter: w, ctx: context.Background(), key: cacheKey("tee", 1, "snapshot"), maxAge: 60}
	tee.WriteHeader(http.StatusOK)
	for _, part := range []string{"ab", "cd", "ef"} {
		tee.Write([]byte(part))
	}
	tee.end(true)
	if w.headers != 1 || w.Body.String() != "abcdef" {
		t.Fatalf("WriteHeader reached the client's writer %d times, body %q; want once, abcdef", w.headers, w.Body.String())
	}
	if a := cacheMatch(context.Background(), tee.key); a == nil || string(a.body) != "abcdef" {
		t.Fatal("the whole answer was not kept")
	}
}
