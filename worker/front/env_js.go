//go:build js && wasm

// The front in workerd: syumai/workers hands it each request, and the
// SHARDS Durable Object binding reaches the shards. The environment and the
// binding exist only inside a request, so both are looked up per call.

package main

import (
	"context"
	"net/http"
	"os"

	"github.com/syumai/workers"
	"github.com/syumai/workers/cloudflare"
)

// serve sets the front's transport (bridge_js.go) and keeps the program
// running: worker.mjs (front.js) starts it once per isolate and hands it
// every request, so a request does not pay Go's start. workers.Ready tells
// front.js the handler is set.
func serve(s *Server) {
	startBridge(s)
	workers.Ready()
	select {}
}

// newServer reads the secrets and the allowed origins from the Worker's
// environment (secrets or vars) and reaches the shards through the SHARDS
// Durable Object binding. Both exist only inside a request, so they are
// looked up per call.
func newServer() *Server {
	return &Server{
		Token:          func() string { return cloudflare.Getenv("EDGEBLOOM_TOKEN") },
		PreviousToken:  func() string { return cloudflare.Getenv("EDGEBLOOM_TOKEN_PREVIOUS") },
		AllowedOrigins: func() string { return cloudflare.Getenv("EDGEBLOOM_ALLOWED_ORIGINS") },
		Objects:        durableObjects{binding: "SHARDS"},
		TestHooks:      func() bool { return cloudflare.Getenv("EDGEBLOOM_TEST_HOOKS") == "1" },
	}
}

// durableObjects sends internal requests to Durable Objects named by
// idFromName, through the stub's fetch, made by front.js on behalf of the
// request in flight (fetchObject).
type durableObjects struct{ binding string }

func (d durableObjects) Fetch(ctx context.Context, object, method, path string, header http.Header, body []byte) (*http.Response, error) {
	return fetchObject(ctx, d.binding, object, method, "https://shard"+path, header, body)
}

// exitProgram ends the Go program, for the front's test hook.
func exitProgram(code int) { os.Exit(code) }
