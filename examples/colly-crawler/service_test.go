package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/client"
)

// startService runs the edge service's Go front on the host, its shards in
// memory (worker/README.md: `go run ./front`), on a free port of
// 127.0.0.1, and returns its URL. The Colly storage's tests run against
// the Worker in workerd (worker/test/go-colly.test.js); this one is the
// example's.
func startService(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "front")
	build := exec.Command("go", "build", "-o", bin, "./front")
	build.Dir = filepath.Join("..", "..", "worker")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the service's front: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	front := exec.Command(bin)
	front.Env = append(os.Environ(), "EDGEBLOOM_TOKEN=secret", "PORT="+itoa(port))
	if err := front.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Process.Kill(); front.Wait() })
	url := "http://127.0.0.1:" + itoa(port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if res, err := http.Get(url + "/v1/filters/x"); err == nil {
			res.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatal("the service's front did not answer in 30 s")
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// The crawler's visited set in a service filter, and the pages it finds
// published to another, which an extension keeps a copy of: run again,
// the crawler fetches nothing; the pages that hold the -match text, and
// only those, are in the published filter.
func TestServicePublish(t *testing.T) {
	s := newSite(t)
	url := startService(t)
	t.Setenv("EDGEBLOOM_TOKEN", "secret")
	c, err := client.New(url, client.WithToken("secret"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Create(ctx, "found", client.Params{Capacity: 10_000, ErrorRate: 1e-6}); err != nil {
		t.Fatal(err)
	}
	frontier := filepath.Join(t.TempDir(), "crawl.frontier")
	args := []string{"-storage", "service", "-service", url, "-frontier", frontier, "-publish", "found", "-match", `href="/p/1"`}
	fetched, stderr := crawler(t, s, args...)
	if len(fetched) != pages {
		t.Fatalf("fetched %d pages (%s); want %d", len(fetched), stderr, pages)
	}
	s.fetchedOnce(t)
	// Pages 0 (a child), 3 and 4 (their parent) link to page 1.
	present, err := c.Check(ctx, "found", s.page(0), s.page(3), s.page(4), s.page(1), s.page(2), s.page(5), s.page(299))
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, true, true, false, false, false, false}; !slices.Equal(present, want) {
		t.Errorf("published: %v; want %v", present, want)
	}
	if again, stderr := crawler(t, s, args...); len(again) != 0 {
		t.Errorf("a second run on the same filter fetched %d pages (%s); want none", len(again), stderr)
	}
}
