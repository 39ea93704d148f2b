// Command crawler crawls a site with Colly and keeps the set of pages it
// has fetched, and those it found and has yet to fetch, in an edgebloom
// storage (package bloomstorage), chosen by a flag:
//
//	go run . -storage memory http://127.0.0.1:8080/
//	go run . -storage file -file crawl.bloom https://example.com/
//	go run . -storage redis -redis redis://127.0.0.1:6379/0 https://example.com/
//	EDGEBLOOM_TOKEN=secret go run . -storage service -service http://127.0.0.1:8787 https://example.com/
//
// memory: a SyncFilter, for one process. file: a filter file that a crawl
// stopped and started again reads back, so it fetches nothing twice and
// carries on where it stopped. redis: one filter in Redis that crawlers on
// several machines share: of all of them, one fetches each page. service:
// one filter of the edge service (worker/), shared the same way over
// HTTPS, with the frontier in a local file (-frontier).
//
// With -publish NAME, it adds the URL of every page it fetched (with
// -match TEXT, of those whose HTML holds TEXT) to the service filter NAME,
// which pages and extensions keep a copy of (examples/sync-extension):
// what the crawler finds, every browser then knows offline. The
// credential is EDGEBLOOM_TOKEN: the secret, or a write token of the
// filters.
//
// It follows links within the seeds' hosts with the storage's Run, which
// fetches again a page whose fetch failed for a reason that can pass (no
// response, a 408, 429 or 5xx: 3 fetches in all, see
// bloomstorage.DefaultRetry). It prints each URL it fetched, each failed
// fetch on stderr, and ends with a count on stderr and the pages it gave
// up on. Exit status 0; 1 when it gave up on pages (this run or an
// earlier one on the same file or Redis set); 2 with a message on stderr
// when it cannot crawl.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/edgebloom/edgebloom/colly/bloomstorage"
	"github.com/gocolly/colly/v2"
	"github.com/redis/go-redis/v9"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command: args without the program name; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("crawler", flag.ContinueOnError)
	fs.SetOutput(stderr)
	kind := fs.String("storage", "memory", "where the visited set lives: memory, file, redis or service")
	file := fs.String("file", "crawl.bloom", "with -storage file: the filter file, made on the first run")
	redisURL := fs.String("redis", "redis://127.0.0.1:6379/0", "with -storage redis: the server")
	name := fs.String("name", "crawl", "with -storage redis or service: the filter's name; crawlers that share it share the set")
	service := fs.String("service", "http://127.0.0.1:8787", "with -storage service or -publish: the edge service's URL")
	frontier := fs.String("frontier", "crawl.frontier", "with -storage service: this crawler's frontier file")
	publish := fs.String("publish", "", "add the URL of each page fetched to this service filter")
	match := fs.String("match", "", "with -publish: only the pages whose HTML holds this text")
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
	where := place{*file, *redisURL, *service, *name, *frontier}
	store, closeStore, err := open(*kind, where, *capacity, *fpRate)
	if err != nil {
		fmt.Fprintf(stderr, "crawler: %v\n", err)
		return 2
	}
	var pub *publisher
	if *publish != "" {
		if pub, err = newPublisher(*service, *publish, *match); err != nil {
			closeStore()
			fmt.Fprintf(stderr, "crawler: %v\n", err)
			return 2
		}
	}
	n, err := crawl(store, fs.Args(), *parallel, pub, stdout, stderr)
	if pub != nil {
		if perr := pub.flush(); err == nil && perr != nil {
			err = perr
		}
		fmt.Fprintf(stderr, "published %d pages to %s\n", pub.sent, *publish)
	}
	var failed []bloomstorage.Failure
	if err == nil {
		failed, err = store.Failures()
	}
	if cerr := closeStore(); err == nil && cerr != nil {
		err = fmt.Errorf("closing the %s storage: %w", *kind, cerr)
	}
	fmt.Fprintf(stderr, "fetched %d pages\n", n)
	if err != nil {
		fmt.Fprintf(stderr, "crawler: %v\n", err)
		return 2
	}
	for _, f := range failed {
		fmt.Fprintf(stderr, "gave up: %v\n", f)
	}
	if len(failed) > 0 {
		return 1
	}
	return 0
}

// place is where the storages live: the file, the Redis server, the
// service, the filter's name and the service storage's frontier file.
type place struct{ file, redisURL, service, name, frontier string }

// open returns the storage of the given kind and the function that
// closes it: a file is synced and unlocked, a Redis client disconnected.
func open(kind string, at place, capacity uint64, fpRate float64) (*bloomstorage.Storage, func() error, error) {
	file, redisURL, name := at.file, at.redisURL, at.name
	switch kind {
	case "service":
		// With the secret, the filter is made for -n and -p if it does not
		// exist; with a write token it must exist.
		s, err := bloomstorage.NewService(context.Background(), bloomstorage.ServiceConfig{
			URL: at.service, Token: os.Getenv("EDGEBLOOM_TOKEN"), Filter: name, Frontier: at.frontier,
			Capacity: capacity, ErrorRate: fpRate,
		})
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	case "memory":
		s, err := bloomstorage.NewMemory(capacity, fpRate)
		return s, func() error { return s.Close() }, err
	case "file":
		// Made on the first run, sized by -n and -p; later runs read it
		// back as it was made. One crawler at a time holds its lock.
		s, err := bloomstorage.NewFile(file, capacity, fpRate)
		return s, func() error { return s.Close() }, err
	case "redis":
		opts, err := redis.ParseURL(redisURL)
		if err != nil {
			return nil, nil, fmt.Errorf("-redis %s: %v (want redis://host:port/db)", redisURL, err)
		}
		client := redis.NewClient(opts)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := client.Ping(ctx).Err(); err != nil {
			client.Close()
			return nil, nil, fmt.Errorf("cannot reach Redis at %s: %v (start redis-server, or pass -redis)", redisURL, err)
		}
		// Every crawler sharing the set passes the same -name, -n and -p.
		s, err := bloomstorage.NewRedis(context.Background(), client, name, capacity, fpRate)
		if err != nil {
			client.Close()
			return nil, nil, err
		}
		return s, func() error { return errors.Join(s.Close(), client.Close()) }, nil
	}
	return nil, nil, fmt.Errorf("-storage %q: want memory, file, redis or service", kind)
}

// crawl fetches seeds and every page they lead to on their hosts, parallel
// requests at a time, with the storage's Run: links go to its frontier,
// and Run fetches again what failed for a reason that can pass, or gives
// it up (store.Failures lists it). It prints each URL it fetched to out
// and each failed fetch to errOut, and returns the number of pages
// fetched and the first error (a storage that stopped answering).
func crawl(store *bloomstorage.Storage, seeds []string, parallel int, pub *publisher, out, errOut io.Writer) (int, error) {
	var hosts []string
	for _, s := range seeds {
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return 0, fmt.Errorf("%q: want an absolute http or https URL", s)
		}
		hosts = append(hosts, u.Hostname())
	}
	// Not colly.Async: Run makes parallel requests at a time itself.
	c := colly.NewCollector(colly.AllowedDomains(hosts...))
	if err := c.SetStorage(store); err != nil {
		return 0, err
	}

	var (
		mu      sync.Mutex
		fetched int
		first   error
	)
	// add puts link in the frontier. ErrVisited means it is not to be
	// fetched: visited already, by this crawl, an earlier one, or another
	// crawler on the same set. Anything else is a storage that stopped
	// answering.
	add := func(link string) {
		err := store.AddURL(link)
		mu.Lock()
		defer mu.Unlock()
		if err != nil && !errors.Is(err, bloomstorage.ErrVisited) && first == nil {
			first = err
		}
	}
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		link := e.Request.AbsoluteURL(e.Attr("href")) // "" for what is not a URL
		if u, err := url.Parse(link); err == nil && (u.Scheme == "http" || u.Scheme == "https") && slices.Contains(hosts, u.Hostname()) {
			add(link)
		}
	})
	c.OnResponse(func(r *colly.Response) {
		mu.Lock()
		defer mu.Unlock()
		fetched++
		fmt.Fprintln(out, r.Request.URL)
		if pub != nil && first == nil {
			first = pub.found(r.Request.URL.String(), r.Body)
		}
	})
	// Every failed fetch: Run then fetches the page again, or gives it up.
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(errOut, "failed: %s: %v\n", r.Request.URL, err)
	})
	for _, s := range seeds {
		add(s)
	}
	err := store.Run(c, parallel)
	mu.Lock()
	defer mu.Unlock()
	if err == nil {
		err = first
	}
	return fetched, err
}
