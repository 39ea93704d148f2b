package bloomstorage_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/edgebloom/edgebloom/colly/bloomstorage"
	"github.com/gocolly/colly/v2"
	"github.com/redis/go-redis/v9"
)

// A crawl whose visited set and frontier are files: stopped (MaxRequests,
// Stop, Close) or killed and started again, it fetches every page it had
// not fetched, and none it had; a fetch that failed for a reason that can
// pass is made again, in this run or the next. (Compiled, not run: it
// would reach the internet.)
func Example() {
	store, err := bloomstorage.NewFile("crawl.bloom", 10_000_000, 1e-6) // 34 MiB; opened again on the next run
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close() // durable and unlocked

	c := colly.NewCollector(colly.AllowedDomains("example.com"))
	if err := c.SetStorage(store); err != nil {
		log.Fatal(err)
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		store.AddURL(e.Request.AbsoluteURL(e.Attr("href"))) // ErrVisited for a page already visited, by this run or an earlier one
	})
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched", r.Request.URL) })
	c.OnError(func(r *colly.Response, err error) { fmt.Println("failed", r.Request.URL, err) })              // every failed fetch; Run tries again or gives up
	if err := store.AddURL("https://example.com/"); err != nil && !errors.Is(err, bloomstorage.ErrVisited) { // ErrVisited on a run that resumes
		log.Fatal(err)
	}
	if err := store.Run(c, 8); err != nil { // 8 requests at a time until the frontier is empty
		log.Fatal(err)
	}
	failed, err := store.Failures() // given up on, by this run and earlier ones
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range failed {
		fmt.Println("gave up:", f) // e.g. GET https://example.com/: Not Found after 1 fetch(es)
	}
}

// Fetched again after a failure: 5 fetches in all, the first retry after
// 2 s, each later one after twice as long, up to 5 minutes.
func ExampleStorage_SetRetry() {
	store, err := bloomstorage.NewFile("crawl.bloom", 10_000_000, 1e-6)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if err := store.SetRetry(bloomstorage.Retry{Attempts: 5, Backoff: 2 * time.Second, MaxBackoff: 5 * time.Minute}); err != nil {
		log.Fatal(err)
	}
}

// Collectors on several machines share one visited set and one frontier
// in Redis: of all of them, one fetches each page, and a collector killed
// has its requests made by the others.
func ExampleNewRedis() {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	store, err := bloomstorage.NewRedis(ctx, client, "crawl", 100_000_000, 1e-6) // every collector: the same name and arguments
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	c := colly.NewCollector()
	if err := c.SetStorage(store); err != nil {
		log.Fatal(err)
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		store.AddURL(e.Request.AbsoluteURL(e.Attr("href")))
	})
	store.AddURL("https://example.com/")
	if err := store.Run(c, 8); err != nil {
		log.Fatal(err)
	}
}

// Collectors anywhere share one visited set in a filter of the edge
// service (worker/), with no Redis to run; each keeps its frontier in a
// file of its own. A 502 that outlasts the client's retries stops Run with
// the error, and nothing is lost: run again.
func ExampleNewService() {
	store, err := bloomstorage.NewService(context.Background(), bloomstorage.ServiceConfig{
		URL:      "https://bloom.example",      // the edge service
		Token:    os.Getenv("EDGEBLOOM_TOKEN"), // a write token of the filter (or the secret, which also makes it)
		Filter:   "crawl",                      // every collector of the crawl: the same filter
		Frontier: "crawl.frontier",             // this collector's own
	})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	c := colly.NewCollector()
	if err := c.SetStorage(store); err != nil {
		log.Fatal(err)
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		store.AddURL(e.Request.AbsoluteURL(e.Attr("href")))
	})
	store.AddURL("https://example.com/")
	if err := store.Run(c, 8); err != nil {
		log.Fatal(err)
	}
}

// In memory, for one process: a SyncFilter, which the collector's
// goroutines share without a lock. Colly's own Visit works with every
// storage; it has no frontier to resume.
func ExampleNewMemory() {
	store, err := bloomstorage.NewMemory(10_000_000, 1e-6)
	if err != nil {
		log.Fatal(err)
	}
	c := colly.NewCollector(colly.Async(true))
	if err := c.SetStorage(store); err != nil {
		log.Fatal(err)
	}
	c.Visit("https://example.com/")
	c.Wait()
}
