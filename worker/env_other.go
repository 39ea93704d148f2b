//go:build !(js && wasm)

package main

import "os"

// newServer serves with the shards in memory, for "go run ." on the host.
func newServer() *Server {
	return &Server{
		Token:   func() string { return os.Getenv("EDGEBLOOM_TOKEN") },
		Objects: newMemoryObjects(),
	}
}
