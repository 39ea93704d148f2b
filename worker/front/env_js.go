//go:build js && wasm

// The front in workerd: syumai/workers hands it each request, and the
// SHARDS Durable Object binding reaches the shards. The environment and the
// binding exist only inside a request, so both are looked up per call.

package main

import (
	"bytes"
	"context"
	"net/http"
	"os"

	"github.com/syumai/workers"
	"github.com/syumai/workers/cloudflare"
)

// serve registers s with syumai/workers and keeps the program running:
// worker.mjs (front.js) starts it once per isolate and hands it every
// request through syumai/workers' handleRequest, so a request no longer
// pays Go's start. workers.Ready tells front.js the handler is set.
func serve(s *Server) {
	workers.ServeNonBlock(s)
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
// idFromName, through the stub's fetch.
type durableObjects struct{ binding string }

func (d durableObjects) Fetch(ctx context.Context, object, method, path string, header http.Header, body []byte) (*http.Response, error) {
	ns, err := cloudflare.NewDurableObjectNamespace(d.binding)
	if err != nil {
		return nil, err
	}
	stub, err := ns.Get(ns.IdFromName(object))
	if err != nil {
		return nil, err
	}
	var req *http.Request
	if body == nil {
		// A GET with a body, even an empty one, is refused by workerd.
		req, err = http.NewRequestWithContext(ctx, method, "https://shard"+path, nil)
	} else {
		req, err = http.NewRequestWithContext(ctx, method, "https://shard"+path, bytes.NewReader(body))
	}
	if err != nil {
		return nil, err
	}
	req.Header = header
	res, err := stub.Fetch(req)
	if err == nil && res.StatusCode == http.StatusNoContent {
		// A 204 has a null body, which syumai/workers cannot read.
		res.Body = http.NoBody
	}
	return res, err
}

// exitProgram ends the Go program, for the front's test hook.
func exitProgram(code int) { os.Exit(code) }
