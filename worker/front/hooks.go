// The front's test endpoints under /_test/, served only when the Worker's
// environment sets EDGEBLOOM_TEST_HOOKS=1 and only to the secret's holder:
// they let the workerd tests see one kept Go instance serve many requests,
// and make it exit or panic mid-request to see what the host does then.

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// instanceID names this run of the Go program, and served counts the
// requests it has served: GET /_test/instance shows both, so that a test can
// see one instance serve many requests, and a new one after a stop.
var (
	instanceID = func() string {
		var b [8]byte
		rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}()
	served atomic.Uint64
	// heavyReleases counts POST /_test/heavy/release.
	heavyReleases atomic.Uint64
)

// testHook serves the front's test endpoints, only when s.TestHooks says so
// (EDGEBLOOM_TEST_HOOKS=1 in the Worker's environment), after the token
// check:
//
//	GET  /_test/instance  {"instance": id, "served": n, "memoryBytes": the
//	                      memory Go has taken from the host
//	                      (runtime.MemStats.Sys), "exchanges": requests in
//	                      flight besides this one, "asks": answers Go waits
//	                      for from JS, "goroutines": n, "heavyBytes": the
//	                      expensive work's budget in use, "heavyWaiting":
//	                      requests waiting for it}
//	GET  /_test/echo      the request's X-Echo header, after a round trip
//	                      to a Durable Object, so that concurrent requests
//	                      interleave in the instance; in the body, and in
//	                      the answer's X-Echo header, byte for byte, and in
//	                      X-Echo-Split with a line break and a header line
//	                      after it, as a handler that copies a value
//	                      unchecked would send
//	GET  /_test/hang?ms=N asks JS something it never answers, and waits
//	                      until the request's client goes away, its
//	                      deadline passes, or N ms when given
//	GET  /_test/heavy?bytes=N[&ms=M]  takes N bytes of the budget of
//	                      expensive requests (as they do: waiting in line,
//	                      or 503), holds them M ms, or without ms until the
//	                      budget next refuses a request or
//	                      POST /_test/heavy/release arrives, and answers
//	                      {"held": N}
//	POST /_test/heavy/release  ends the holds of /_test/heavy without ms
//	POST /_test/exit      the Go program exits (os.Exit(3)) mid-request
//	POST /_test/panic     a goroutine panics with no recover: the program
//	                      ends as any uncaught panic ends it
func (s *Server) testHook(w http.ResponseWriter, r *http.Request) error {
	switch r.Method + " " + r.URL.Path {
	case "GET /_test/instance":
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		exchanges, asks := bridgeCounts()
		used, waiting, _ := heavy.load()
		writeJSON(w, http.StatusOK, map[string]any{
			"instance": instanceID, "served": served.Load(), "memoryBytes": ms.Sys,
			"exchanges": max(0, exchanges-1), "asks": asks, "goroutines": runtime.NumGoroutine(),
			"heavyBytes": used, "heavyWaiting": waiting,
		})
		return nil
	case "GET /_test/echo":
		echo := r.Header.Get("X-Echo")
		res, err := s.call(r.Context(), metaObject("_echo"), "GET", "/meta", nil, nil)
		if err != nil {
			return err
		}
		res.Body.Close()
		w.Header().Set("X-Echo", echo)
		w.Header().Set("X-Echo-Split", echo+"\nx-injected\nyes\r\nX-Injected: yes")
		writeJSON(w, http.StatusOK, map[string]string{"echo": echo, "after": r.Header.Get("X-Echo")})
		return nil
	case "GET /_test/hang":
		ctx := r.Context()
		if ms, err := strconv.Atoi(r.URL.Query().Get("ms")); err == nil {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
			defer cancel()
		}
		err := askNothing(ctx)
		return errorf(http.StatusServiceUnavailable, "gave_up", "the question was not answered: %v", err)
	case "GET /_test/heavy":
		q := r.URL.Query()
		n, _ := strconv.ParseInt(q.Get("bytes"), 10, 64)
		ms, _ := strconv.Atoi(q.Get("ms"))
		_, _, refused := heavy.load()
		released := heavyReleases.Load()
		leave, err := heavy.enter(r.Context(), n)
		if err != nil {
			return err
		}
		defer leave()
		if q.Has("ms") {
			if err := pause(r.Context(), time.Duration(ms)*time.Millisecond); err != nil {
				return err
			}
		}
		for _, _, now := heavy.load(); !q.Has("ms") && now == refused && heavyReleases.Load() == released; _, _, now = heavy.load() {
			if err := pause(r.Context(), 10*time.Millisecond); err != nil {
				return err
			}
		}
		writeJSON(w, http.StatusOK, map[string]int64{"held": min(n, heavyBudget)})
		return nil
	case "POST /_test/heavy/release":
		heavyReleases.Add(1)
		writeJSON(w, http.StatusOK, map[string]bool{"released": true})
		return nil
	case "POST /_test/exit":
		exitProgram(3)
	case "POST /_test/panic":
		stop := make(chan struct{})
		go func() { panic("edgebloom: POST /_test/panic") }()
		<-stop
	}
	return errorf(http.StatusNotFound, "not_found", "no such test hook: %s %s", r.Method, r.URL.Path)
}
