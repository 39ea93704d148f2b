// Command crawler crawls a site with Colly and keeps the set of pages it
// has fetched in an edgebloom filter (package bloomstorage), chosen by a
// flag:
//
//	go run . -storage memory http://127.0.0.1:8080/
//	go run . -storage file -file crawl.bloom https://example.com/
//	go run . -storage redis -redis redis://127.0.0.1:6379/0 https://example.com/
//
// memory: a SyncFilter, for one process. file: a filter file that a crawl
// stopped and started again reads back, so it fetches nothing twice.
// redis: one filter in Redis that crawlers on several machines share: of all
// of them, one fetches each page.
//
// It follows links within the seeds' hosts, prints each URL it fetched,
// and ends with a count on stderr. Exit status 0, or 2 with a message on
// stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"sync"
	"time"

	"github.com/edgebloom/edgebloom/colly/bloomstorage"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/storage"
	"github.com/redis/go-redis/v9"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: args without the program name; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("crawler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kind := fs.String("storage", "memory", "where the visited set lives: memory, file or redis")
	file := fs.String("file", "crawl.bloom", "with -storage file: the filter file, made on the first run")
	redisURL := fs.String("redis", "redis://127.0.0.1:6379/0", "with -storage redis: the server")
	name := fs.String("name", "crawl", "with -storage redis: the filter's key prefix; crawlers that share it share the set")
	capacity := fs.Uint64("n", 1_000_000, "pages the filter is made for")
	fpRate := fs.Float64("p", 1e-6, "false-positive rate: the share of new pages skipped as if seen")
	parallel := fs.Int("parallel", 8, "requests at a time")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler [flags] URL...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	store, err := open(*kind, *file, *redisURL, *name, *capacity, *fpRate)
	if err != nil {
		fmt.Fprintf(stderr, "crawler: %v\n", err)
		return 2
	}
	n, err := crawl(store, fs.Args(), *parallel, stdout)
	if cerr := store.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing the %s storage: %w", *kind, cerr)
	}
	fmt.Fprintf(stderr, "fetched %d pages\n", n)
	if err != nil {
		fmt.Fprintf(stderr, "crawler: %v\n", err)
		return 2
	}
	return 0
}

// A store is a Colly storage that must be closed: a file is synced and
// unlocked, a Redis client disconnected.
type store interface {
	storage.Storage
	Close() error
}

// open returns the storage of the given kind.
func open(kind, file, redisURL, name string, capacity uint64, fpRate float64) (store, error) {
	switch kind {
	case "memory":
		return bloomstorage.NewMemory(capacity, fpRate)
	case "file":
		// Made on the first run, sized by -n and -p; later runs read it
		// back as it was made. One crawler at a time holds its lock.
		return bloomstorage.NewFile(file, capacity, fpRate)
	case "redis":
		opts, err := redis.ParseURL(redisURL)
		if err != nil {
			return nil, fmt.Errorf("-redis %s: %v (want redis://host:port/db)", redisURL, err)
		}
		client := redis.NewClient(opts)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := client.Ping(ctx).Err(); err != nil {
			client.Close()
			return nil, fmt.Errorf("cannot reach Redis at %s: %v (start redis-server, or pass -redis)", redisURL, err)
		}
		// Every crawler sharing the set passes the same -name, -n and -p.
		s, err := bloomstorage.NewRedis(context.Background(), client, name, capacity, fpRate)
		if err != nil {
			client.Close()
			return nil, err
		}
		return redisStore{s, client}, nil
	}
	return nil, fmt.Errorf("-storage %q: want memory, file or redis", kind)
}

type redisStore struct {
	*bloomstorage.Storage
	client *redis.Client
}

func (r redisStore) Close() error { return errors.Join(r.Storage.Close(), r.client.Close()) }

// crawl fetches seeds and every page they lead to on their hosts, parallel
// requests at a time, printing each URL it fetched to out. It returns the
// number of pages fetched and the first error (a failed request, a storage
// that stopped answering).
func crawl(store storage.Storage, seeds []string, parallel int, out io.Writer) (int, error) {
	var hosts []string
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return 0, fmt.Errorf("%q: want an absolute http or https URL", s)
		}
		hosts = append(hosts, u.Hostname())
	}
	c := colly.NewCollector(colly.Async(true), colly.AllowedDomains(hosts...))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: parallel}); err != nil {
		return 0, err
	}
	if err := c.SetStorage(store); err != nil {
		return 0, err
	}

	var (
		mu      sync.Mutex
		fetched int
		first   error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	visit := func(err error) {
		if err != nil && !skipped(err) {
			fail(err)
		}
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		link := e.Request.AbsoluteURL(e.Attr("href")) // "" for what is not a URL
		if u, err := url.Parse(link); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			visit(e.Request.Visit(link))
		}
	})
	c.OnResponse(func(r *colly.Response) {
		mu.Lock()
		defer mu.Unlock()
		fetched++
		fmt.Fprintln(out, r.Request.URL)
	})
	c.OnError(func(r *colly.Response, err error) {
		fail(fmt.Errorf("%s: %w", r.Request.URL, err))
	})
	for _, s := range seeds {
		visit(c.Visit(s))
	}
	c.Wait()
	return fetched, first
}

// skipped reports whether err from Visit only means the page is not to be
// fetched: visited already (by this crawl, an earlier one, or another
// crawler on the same set), on another host, or refused by robots.txt.
// Anything else, a storage that stopped answering above all, is a failure.
func skipped(err error) bool {
	var visited *colly.AlreadyVisitedError
	return errors.As(err, &visited) || errors.Is(err, bloomstorage.ErrVisited) ||
		errors.Is(err, colly.ErrForbiddenDomain) || errors.Is(err, colly.ErrForbiddenURL) ||
		errors.Is(err, colly.ErrNoURLFiltersMatch) || errors.Is(err, colly.ErrRobotsTxtBlocked)
}
