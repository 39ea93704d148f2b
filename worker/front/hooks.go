// The front's test endpoints under /_test/, served only when the Worker's
// environment sets EDGEBLOOM_TEST_HOOKS=1 and only to the secret's holder:
// they let the workerd tests see one kept Go instance serve many requests,
// and make it exit or panic mid-request to see what the host does then.

package main

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"runtime"
	"sync/atomic"
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
)

// testHook serves the front's test endpoints, only when s.TestHooks says so
// (EDGEBLOOM_TEST_HOOKS=1 in the Worker's environment), after the token
// check:
//
//	GET  /_test/instance  {"instance": id, "served": n, "memoryBytes": the
//	                      memory Go has taken from the host (runtime.MemStats.Sys)}
//	GET  /_test/echo      the request's X-Echo header, after a round trip
//	                      to a Durable Object, so that concurrent requests
//	                      interleave in the instance
//	POST /_test/exit      the Go program exits (os.Exit(3)) mid-request
//	POST /_test/panic     a goroutine panics with no recover: the program
//	                      ends as any uncaught panic ends it
func (s *Server) testHook(w http.ResponseWriter, r *http.Request) error {
	switch r.Method + " " + r.URL.Path {
	case "GET /_test/instance":
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		writeJSON(w, http.StatusOK, map[string]any{"instance": instanceID, "served": served.Load(), "memoryBytes": ms.Sys})
		return nil
	case "GET /_test/echo":
		echo := r.Header.Get("X-Echo")
		res, err := s.call(r.Context(), metaObject("_echo"), "GET", "/meta", nil, nil)
		if err != nil {
			return err
		}
		res.Body.Close()
		writeJSON(w, http.StatusOK, map[string]string{"echo": echo, "after": r.Header.Get("X-Echo")})
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
