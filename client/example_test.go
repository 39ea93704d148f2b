package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/client"
	"github.com/edgebloom/edgebloom/snapshot"
	"github.com/edgebloom/edgebloom/token"
)

func crawl(url string) { fmt.Println("crawl", url) }

var httpClient = &http.Client{Timeout: time.Minute}

// Example shows a crawler adding what it finds to a service filter. It
// needs the service, so go test compiles it without running it;
// client/service_test.go makes the same calls against the Worker in workerd.
func Example() {
	ctx := context.Background()
	c, err := client.New("https://bloom.example", client.WithToken(os.Getenv("EDGEBLOOM_TOKEN"))) // the secret: Create needs it (a write token adds and checks a filter that exists)
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Create(ctx, "crawl", client.Params{Capacity: 10_000_000, ErrorRate: 0.001, Shards: 8}) // 200 when it is there already
	if err != nil && !errors.Is(err, client.ErrConflict) {
		log.Fatal(err)
	}

	found := []string{"https://a.example/", "https://b.example/"} // any number: sent 10,000 keys a request, 4 at a time
	added, err := c.Add(ctx, "crawl", found...)                   // test-and-add: added[i] is true when found[i] was new
	if err != nil {
		log.Fatal(err) // a *client.BatchError: which keys were answered, and the first failure
	}
	for i, url := range found {
		if added[i] {
			crawl(url) // of all the crawlers adding it, one gets here
		}
	}
	present, err := c.Check(ctx, "crawl", "https://a.example/", "https://c.example/") // [true false]
	fmt.Println(present, err)
}

// Example_errors shows the errors of the client.
func Example_errors() {
	ctx := context.Background()
	c, _ := client.New("https://bloom.example", client.WithToken(os.Getenv("EDGEBLOOM_TOKEN")))
	found := []string{"https://a.example/"}

	_, err := c.Add(ctx, "crawl", found...)
	var e *client.Error
	switch {
	case errors.Is(err, client.ErrNotFound): // no filter "crawl"
	case errors.Is(err, client.ErrShardUnavailable): // still 502 after the retries
	case errors.As(err, &e):
		log.Printf("%d %s: %s (request %s)", e.Status, e.Code, e.Message, e.RequestID)
	}
	var be *client.BatchError
	if errors.As(err, &be) {
		for i, url := range found {
			if !be.Answered[i] {
				fmt.Println("add again:", url) // it may be in the filter, or not
			}
		}
	}
}

// Example_options shows a client set up beyond its defaults.
func Example_options() {
	c, err := client.New("https://bloom.example",
		client.WithToken(os.Getenv("EDGEBLOOM_TOKEN")),
		client.WithHTTPClient(httpClient),      // its Transport, proxies, TLS
		client.WithUserAgent("my-crawler/1.0"), // the default names the client and its version
		client.WithConcurrency(8),              // requests of one Add or Check in flight, 4 by default
		client.WithRetry(client.RetryPolicy{Attempts: 10, MinBackoff: 200 * time.Millisecond, MaxBackoff: 10 * time.Second, MaxRetryAfter: time.Minute}),
	)
	fmt.Println(c != nil, err)
}

// Example_tokens shows a backend handing out scoped tokens.
func Example_tokens() {
	ctx := context.Background()
	c, _ := client.New("https://bloom.example", client.WithToken(os.Getenv("EDGEBLOOM_TOKEN"))) // the secret

	t, err := c.MintToken(ctx, token.Read, "crawl", 24*time.Hour) // for a page or an extension that keeps a copy
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.Token, t.Expires)
	w, err := c.MintToken(ctx, token.Write, "crawl-*", 30*24*time.Hour) // for the crawlers: every filter named crawl-...
	fmt.Println(w, err)
}

// ExampleClient_Snapshot shows a filter downloaded whole.
func ExampleClient_Snapshot() {
	ctx := context.Background()
	c, _ := client.New("https://bloom.example", client.WithToken(os.Getenv("EDGEBLOOM_TOKEN"))) // the secret or a read token

	set, err := c.Snapshot(ctx, "crawl") // a *bloom.Filter (one shard) or a *snapshot.Sharded
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(set.HasString("https://a.example/")) // as Check answers, locally

	f, err := os.Create("crawl.ebloom")
	if err != nil {
		log.Fatal(err)
	}
	n, err := c.WriteSnapshot(ctx, "crawl", f) // streamed to the file: bloom.Decode, snapshot.Load, the CLI and fromBytes read it
	fmt.Println(n, err, f.Close())
}

// ExampleCopy shows a local copy kept in sync in a file.
func ExampleCopy() {
	ctx := context.Background()
	c, _ := client.New("https://bloom.example", client.WithToken(os.Getenv("EDGEBLOOM_READ_TOKEN")))

	cp, err := c.NewCopy("crawl", client.CopyOptions{Mode: client.Checkpoints, Path: "crawl.ebloom"}) // resumes from the file
	if err != nil {
		log.Fatal(err)
	}
	go cp.Run(ctx, time.Minute, func(r client.SyncResult, err error) {
		if err != nil {
			log.Printf("sync: %v", err) // the copy keeps what it holds; the next sync comes in a minute
		}
	})
	if cp.HasString("https://a.example/") { // answered locally, during the syncs too
		fmt.Println("blocked")
	}

	r, err := cp.Sync(ctx) // one sync, now
	fmt.Println(r.Changed, r.Snapshot, r.Resync, r.Generation, err)
}

// ExampleClient_Merge shows keys hashed offline ORed into a service filter
// in one request, where Add would take one a key.
func ExampleClient_Merge() {
	ctx := context.Background()
	c, _ := client.New("https://bloom.example", client.WithToken(os.Getenv("EDGEBLOOM_TOKEN"))) // the secret: Create needs it
	f, err := c.Create(ctx, "blocklist", client.Params{Capacity: 1_000_000, ErrorRate: 0.001})
	if err != nil {
		log.Fatal(err)
	}

	shard, _ := bloom.New(f.ShardCapacity, f.ErrorRate) // the service's shard: its m, k and seed 0
	var positions []uint64
	for _, url := range []string{"https://bad.example/", "https://worse.example/"} {
		if shard.AddString(url) {
			positions = append(positions, shard.Locations([]byte(url))...)
		}
	}
	slices.Sort(positions)
	delta := snapshot.EncodeDelta(&snapshot.Delta{M: f.ShardBits, K: f.Hashes, Shards: 1, Records: []snapshot.DeltaRecord{
		{Shard: 0, To: 1, Count: shard.Count(), Positions: slices.Compact(positions)},
	}})
	m, err := c.Merge(ctx, "blocklist", delta) // at most 1 MiB and 1,048,576 positions a merge
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Set, m.Generation) // the bits that were new; give m.Generation in the next deltas
}
