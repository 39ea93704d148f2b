package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/redisfilter"
	"github.com/edgebloom/edgebloom/redisfilter/redistest"
)

// TestRedis moves a filter file into a real redis-server and back, and uses
// it there with check and add.
func TestRedis(t *testing.T) {
	srv := redistest.Start(t)
	url := srv.URL()
	dir := t.TempDir()
	expect(t, dir, urls(0, 3000), 0, "build", "-n", "10000", "-o", "crawl.bloom")
	r := expect(t, dir, "", 0, "push", "crawl.bloom", url)
	if !strings.Contains(r.stderr, "crawl.bloom -> crawl:") {
		t.Errorf("push: stderr %q", r.stderr)
	}
	// check reads the keys from stdin or the arguments, as with a file.
	r = expect(t, dir, urls(0, 3000), 0, "check", "--redis", url, "--name", "crawl")
	if strings.Count(r.stdout, "\tpresent\n") != 3000 {
		t.Fatalf("check --redis: %d lines present; want 3000", strings.Count(r.stdout, "\tpresent\n"))
	}
	expect(t, dir, "", 1, "check", "-q", "--redis", url, "--name", "crawl", "https://example.com/page/1?x=1", "https://example.com/absent")
	r = expect(t, dir, urls(2000, 2000), 0, "add", "--redis", url, "--name", "crawl")
	if !strings.HasPrefix(r.stderr, "2000 keys, 1000 new, 1000 already present; 4000 in crawl (Redis)") {
		t.Errorf("add --redis: stderr %q", r.stderr)
	}
	r = expect(t, dir, "", 0, "add", "--canonical", "--redis", url, "--name", "crawl", "HTTPS://Example.COM:443/new#x")
	if !strings.HasPrefix(r.stderr, "1 keys, 1 new") {
		t.Errorf("add --canonical --redis: stderr %q", r.stderr)
	}
	expect(t, dir, "", 0, "check", "--redis", url, "--name", "crawl", "https://example.com/new")
	// pull gives the bytes that the same adds give to the file.
	expect(t, dir, "", 0, "pull", url, "pulled.bloom", "--name", "crawl")
	expect(t, dir, urls(2000, 2000), 0, "add", "crawl.bloom")
	expect(t, dir, "", 0, "add", "crawl.bloom", "https://example.com/new")
	want, _ := os.ReadFile(filepath.Join(dir, "crawl.bloom"))
	got, _ := os.ReadFile(filepath.Join(dir, "pulled.bloom"))
	if !bytes.Equal(got, want) {
		t.Fatalf("pull: %d bytes, differ from the %d bytes of the file given the same keys", len(got), len(want))
	}
	r = expect(t, dir, "", 0, "pull", "--name", "crawl", url, "-")
	if r.stdout != string(want) {
		t.Error("pull to stdout differs from pull to a file")
	}
	expect(t, dir, "", 0, "info", "pulled.bloom")

	// A sharded filter made by package redisfilter goes out and back in.
	ctx := context.Background()
	f, err := redisfilter.NewWithConfig(ctx, srv.Client(), "sharded", redisfilter.Config{Capacity: 5000, FPRate: 0.01, Shards: 3})
	if err != nil {
		t.Fatal(err)
	}
	f.AddMany(ctx, strings.Fields(urls(0, 1000)))
	expect(t, dir, "", 0, "pull", url, "sharded.ebsc")
	expect(t, dir, "", 0, "push", "--name", "sharded2", "sharded.ebsc", url)
	expect(t, dir, "", 0, "pull", "--name", "sharded2", url, "again.ebsc")
	a, _ := os.ReadFile(filepath.Join(dir, "sharded.ebsc"))
	b, _ := os.ReadFile(filepath.Join(dir, "again.ebsc"))
	if !bytes.Equal(a, b) || !bytes.HasPrefix(a, []byte("EBSC")) {
		t.Fatal("a sharded snapshot pushed and pulled again changed")
	}
	expect(t, dir, urls(0, 1000), 0, "check", "-q", "--redis", url, "--name", "sharded2")
}

func TestRedisErrors(t *testing.T) {
	srv := redistest.Start(t)
	url := srv.URL()
	dir := t.TempDir()
	expect(t, dir, urls(0, 10), 0, "build", "-n", "100", "-o", "f.bloom")
	expect(t, dir, urls(0, 10), 0, "build", "-n", "100", "--window", "3", "-o", "w.bloom")
	expect(t, dir, "", 0, "push", "f.bloom", url)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"push", "f.bloom", url}, "exists"},
		{[]string{"push", "w.bloom", url}, "a window filter; Redis holds classic filters"},
		{[]string{"push", "missing.bloom", url}, "no such file"},
		{[]string{"push", "f.bloom"}, "want FILE and URL"},
		{[]string{"push", "f.bloom", "ftp://nope"}, "redis URL"},
		{[]string{"pull", url, "g.bloom"}, `no filter of this name: "g" (make one with edgebloom build, then push)`},
		{[]string{"pull", url, "-"}, "--name is needed"},
		{[]string{"check", "--redis", url, "k"}, "--redis needs --name"},
		{[]string{"check", "--name", "f", "f.bloom", "k"}, "--name goes with --redis"},
		{[]string{"add", "--redis", "redis://127.0.0.1:1", "--name", "f", "k"}, "connection refused"},
		{[]string{"check", "--redis", "redis://127.0.0.1:1", "--name", "f", "k"}, "connection refused"},
	} {
		r := expect(t, dir, "", 2, tt.args...)
		if !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("edgebloom %s: stderr %q; want one line with %q", strings.Join(tt.args, " "), r.stderr, tt.want)
		}
	}
	// A password in the URL is not shown.
	secret := redistest.Start(t, "--requirepass", "s3cret")
	r := expect(t, dir, "", 0, "push", "f.bloom", "redis://:s3cret@"+secret.Addr())
	if strings.Contains(r.stderr, "s3cret") {
		t.Errorf("push printed the password: %q", r.stderr)
	}
	r = expect(t, dir, "", 2, "check", "--redis", "redis://"+secret.Addr(), "--name", "f", "k")
	if !strings.Contains(r.stderr, "NOAUTH") {
		t.Errorf("check without the password: stderr %q", r.stderr)
	}
}

// TestRedisCluster pushes, uses and pulls a filter through --cluster, on a
// one-node Cluster that refuses keys of one command in different slots.
func TestRedisCluster(t *testing.T) {
	srv := redistest.StartCluster(t)
	url := srv.URL()
	dir := t.TempDir()
	expect(t, dir, urls(0, 2000), 0, "build", "-n", "5000", "-o", "crawl.bloom")
	expect(t, dir, "", 0, "push", "--cluster", "crawl.bloom", url)
	expect(t, dir, urls(0, 2000), 0, "check", "-q", "--cluster", "--redis", url, "--name", "crawl")
	r := expect(t, dir, urls(1000, 2000), 0, "add", "--cluster", "--redis", url, "--name", "crawl")
	if !strings.HasPrefix(r.stderr, "2000 keys, 1000 new") {
		t.Errorf("add --cluster: stderr %q", r.stderr)
	}
	expect(t, dir, "", 0, "pull", "--cluster", url, "pulled.bloom", "--name", "crawl")
	expect(t, dir, urls(1000, 2000), 0, "add", "crawl.bloom")
	want, _ := os.ReadFile(filepath.Join(dir, "crawl.bloom"))
	got, _ := os.ReadFile(filepath.Join(dir, "pulled.bloom"))
	if !bytes.Equal(got, want) {
		t.Fatal("pull --cluster differs from the file given the same keys")
	}
}

// TestRedisLost: a filter whose keys Redis lost is refused by check and add
// with one line saying how to replace it, push refuses to replace it
// silently, and push --recreate replaces it. A file counting more keys than
// its bits can have counted is never pushed.
func TestRedisLost(t *testing.T) {
	srv := redistest.Start(t)
	url := srv.URL()
	dir := t.TempDir()
	expect(t, dir, urls(0, 1000), 0, "build", "-n", "5000", "-o", "crawl.bloom")
	expect(t, dir, "", 0, "push", "crawl.bloom", url)
	// Redis evicts the bits (or loses them): the parameters are left.
	if err := srv.Client().Del(context.Background(), "crawl:0").Err(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check", "--redis", url, "--name", "crawl", "https://example.com/page/1?x=1"},
		{"add", "--redis", url, "--name", "crawl", "https://example.com/page/1?x=1"},
		{"push", "crawl.bloom", url},
	} {
		r := expect(t, dir, "", 2, args...)
		if !strings.Contains(r.stderr, "gone from Redis") || !strings.Contains(r.stderr, "edgebloom push --recreate FILE URL") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%s of a lost filter: stderr %q; want one line saying it is gone and how to replace it", args[0], r.stderr)
		}
	}
	expect(t, dir, "", 0, "push", "--recreate", "crawl.bloom", url)
	expect(t, dir, urls(0, 1000), 0, "check", "-q", "--redis", url, "--name", "crawl")
	// pull writes no file over one that a writer holds.
	w := startWriter(t, dir, urls(1000, 5000), "add", "crawl.bloom")
	if r := expect(t, dir, "", 2, "pull", url, "crawl.bloom"); r.stderr != "edgebloom: pull: crawl.bloom: the file is open for writing elsewhere\n" {
		t.Errorf("pull over a file a writer holds: stderr %q", r.stderr)
	}
	w.finish(t)
	expect(t, dir, urls(1000, 5000), 0, "check", "-q", "crawl.bloom")
	r := expect(t, dir, "", 2, "push", "--recreate", "crawl.bloom", url)
	if !strings.Contains(r.stderr, "exists") {
		t.Errorf("push --recreate over a whole filter: stderr %q; want it refused", r.stderr)
	}

	// A record counting more keys than its bits can have counted.
	info, err := bloom.Inspect(must(os.ReadFile(filepath.Join(dir, "crawl.bloom")))[:bloom.HeaderSize], bloom.MaxBits)
	if err != nil {
		t.Fatal(err)
	}
	for _, count := range []uint64{1<<63 - 1, (bloom.MaxCountPerBit-1)*info.Bits + 1} {
		info.Count = count
		var rec bytes.Buffer
		if _, err := bloom.WriteClassic(&rec, info, bytes.NewReader(make([]byte, 8*((info.Bits+63)/64)))); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "many.bloom"), rec.String())
		r := expect(t, dir, "", 2, "push", "many.bloom", url)
		if !strings.Contains(r.stderr, "corrupt filter") {
			t.Errorf("push of a count of %d: stderr %q; want it refused as corrupt", count, r.stderr)
		}
	}
	if n, _ := srv.Client().Exists(context.Background(), "many").Result(); n != 0 {
		t.Errorf("a refused push made the filter")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
