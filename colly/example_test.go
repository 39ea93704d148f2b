package bloomstorage_test

import (
	"context"
	"log"

	bloomstorage "github.com/edgebloom/edgebloom/colly"
	"github.com/gocolly/colly/v2"
	"github.com/redis/go-redis/v9"
)

// A crawl whose visited set and frontier are files: stopped (MaxRequests,
// Stop, Close) or killed and started again, it fetches every page it had
// not fetched, and none it had. (Compiled, not run: it would reach the
// internet.)
func Example() {
	store, err := bloomstorage.NewFile("crawl.bloom", 10_000_000, 1e-6) // 34 MiB, and crawl.bloom.frontier; opened again on the next run
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
	store.AddURL("https://example.com/")    // ErrVisited on a run that resumes
	if err := store.Run(c, 8); err != nil { // 8 requests at a time until the frontier is empty
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
