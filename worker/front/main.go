// Command front is the Go half of edgebloom's edge service, a Cloudflare
// Worker on github.com/syumai/workers that keeps named Bloom filters for URL
// de-duplication in Durable Object shards: the HTTP front that
// authenticates, validates and routes each key to its shard. See
// worker/README.md.
//
// Built for GOOS=js GOARCH=wasm (worker/build.sh makes build/app.wasm) it
// serves in workerd, with the shards in the JS Durable Object class of
// shard.js. Built for the host, "go run ./front" in worker/ serves the same
// API on :9900 (PORT) with the shards in memory, for trying the handler
// without wrangler; EDGEBLOOM_TOKEN comes from the environment.
package main

func main() {
	serve(newServer())
}
