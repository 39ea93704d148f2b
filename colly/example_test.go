package bloomstorage_test

import (
	"context"
	"log"

	bloomstorage "github.com/edgebloom/edgebloom/colly"
	"github.com/gocolly/colly/v2"
	"github.com/redis/go-redis/v9"
)

// A crawl whose visited set is a file: stopped and started again, it
// fetches nothing it fetched before. (Compiled, not run: it would reach
// the internet.)
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
		e.Request.Visit(e.Attr("href")) // an error for a page already visited, by this run or an earlier one
	})
	c.Visit("https://example.com/")
}

// Collectors on several machines share one visited set in Redis: of all of
// them, one fetches each page.
func ExampleNewRedis() {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	store, err := bloomstorage.NewRedis(ctx, client, "crawl", 100_000_000, 1e-6) // every collector: the same name and arguments
	if err != nil {
		log.Fatal(err)
	}
	c := colly.NewCollector()
	if err := c.SetStorage(store); err != nil {
		log.Fatal(err)
	}
	c.Visit("https://example.com/")
}

// In memory, for one process: a SyncFilter, which the collector's
// goroutines share without a lock.
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
