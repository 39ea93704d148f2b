//go:build !(js && wasm)

// The front on the host ("go run ./front" and the tests): net/http, the
// process's environment, and the shards in memory (memory.go).

package main

import (
	"log"
	"net/http"
	"os"
)

// newServer serves with the shards in memory, for "go run ./front" on the
// host.
func newServer() *Server {
	return &Server{
		Token:          func() string { return os.Getenv("EDGEBLOOM_TOKEN") },
		PreviousToken:  func() string { return os.Getenv("EDGEBLOOM_TOKEN_PREVIOUS") },
		AllowedOrigins: func() string { return os.Getenv("EDGEBLOOM_ALLOWED_ORIGINS") },
		Objects:        newMemoryObjects(),
	}
}

// serve serves s on the host with net/http, on 127.0.0.1 only, port 9900
// or PORT.
func serve(s *Server) {
	port := os.Getenv("PORT")
	if port == "" {
		port = "9900"
	}
	addr := "127.0.0.1:" + port
	log.Printf("edgebloom: serving on http://%s", addr)
	log.Fatal(http.ListenAndServe(addr, s))
}

// exitProgram does nothing on the host: "go run ./front" and the handler
// tests share their process with the caller.
func exitProgram(int) {}
