package redisfilter_test

import (
	"context"
	"fmt"
	"log"

	"github.com/edgebloom/edgebloom/redisfilter"
	"github.com/redis/go-redis/v9"
)

func crawl(url string) { fmt.Println("crawl", url) }

// Example shows a crawler of a fleet sharing its seen-set in Redis. It
// needs a Redis server, so go test compiles it without running it; the
// tests run the same calls against a real redis-server.
func Example() {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})  // or NewClusterClient, NewFailoverClient
	f, err := redisfilter.New(ctx, client, "crawl", 100_000_000, 0.01) // every crawler: the same name and arguments
	if err != nil {
		log.Fatal(err)
	}
	isNew, err := f.Add(ctx, "https://example.com/") // test-and-add: one round trip, atomic
	if err != nil {
		log.Fatal(err) // an error is no answer: the key may or may not be there
	}
	if isNew {
		crawl("https://example.com/") // of all the crawlers adding it, exactly one gets here
	}
	seen, err := f.HasMany(ctx, []string{"https://example.com/", "https://example.com/other"}) // pipelined
	fmt.Println(seen, err)                                                                     // [true false] <nil>: probably seen, certainly not

	data, err := f.Snapshot(ctx) // the portable format: bloom.Decode reads it (snapshot.Load when sharded)
	if err != nil {
		log.Fatal(err)
	}
	g, err := redisfilter.Restore(ctx, client, "crawl-copy", data, 1<<33) // a file back into Redis
	fmt.Println(g.NumBits(), err)
}

// The README's quick start: one crawler of a fleet. (Compiled, not run: it
// needs a Redis server.)
func ExampleFilter_Add() {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})  // or NewClusterClient, NewFailoverClient
	f, err := redisfilter.New(ctx, client, "crawl", 100_000_000, 0.01) // every crawler: the same name and arguments
	if err != nil {
		log.Fatal(err)
	}
	isNew, err := f.Add(ctx, "https://example.com/") // test-and-add: one round trip, atomic
	if err != nil {
		log.Fatal(err) // an error is no answer: the key may or may not be there
	}
	fmt.Println("new:", isNew) // true for one of all the crawlers adding it
}
