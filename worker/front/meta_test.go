//go:build !(js && wasm)

// The meta cache and the clean-up of a deleted generation, under the
// failures they exist for: a second front that cached the old parameters,
// a DELETE that stops part way, adds racing a DELETE and a PUT.

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestStaleMetaCache runs two fronts on one set of objects, as two isolates
// would be: one deletes a filter the other has cached and makes it again
// with other parameters. The other's next requests answer for the new
// filter (its shards refuse the old generation, and the front reads meta
// again and retries once), and a request of the old generation sent
// straight to a shard changes nothing.
func TestStaleMetaCache(t *testing.T) {
	objs := newMemoryObjects()
	front := func() *client {
		srv := httptest.NewServer(&Server{Token: func() string { return testToken }, Objects: objs})
		t.Cleanup(srv.Close)
		return &client{t, srv.URL}
	}
	a, b := front(), front()
	a.json("PUT", "/v1/filters/f", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 201)
	old := []string{"old-1", "old-2", "old-3"}
	a.json("POST", "/v1/filters/f/add", map[string]any{"keys": old}, 200)
	oldGen := objs.meta["f"].Generation

	b.json("DELETE", "/v1/filters/f", nil, 204)
	b.json("PUT", "/v1/filters/f", map[string]any{"capacity": 3000, "errorRate": 0.001, "shards": 3}, 201)
	if objs.meta["f"].Generation <= oldGen {
		t.Fatalf("generation %d after %d: generations must move forward", objs.meta["f"].Generation, oldGen)
	}
	fresh := []string{"new-1", "new-2", "new-3", "new-4"}
	b.json("POST", "/v1/filters/f/add", map[string]any{"keys": fresh[:2]}, 200)

	got := a.json("POST", "/v1/filters/f/add", map[string]any{"keys": fresh[2:]}, 200)
	if fmt.Sprint(got["added"]) != "[true true]" {
		t.Errorf("add through the stale front: %v; want both new", got)
	}
	st := a.json("GET", "/v1/filters/f", nil, 200)
	if st["shards"] != 3.0 || st["total"].(map[string]any)["count"] != 4.0 {
		t.Errorf("stats through the stale front: shards %v, count %v; want 3 and 4", st["shards"], st["total"].(map[string]any)["count"])
	}
	present := a.json("POST", "/v1/filters/f/check", map[string]any{"keys": append(fresh, old...)}, 200)["present"]
	if fmt.Sprint(present) != "[true true true true false false false]" {
		t.Errorf("check through the stale front: %v", present)
	}

	// A late request of the old generation, straight to a shard.
	for sh := range 3 {
		wantLateAddRefused(t, objs, "f", oldGen, sh)
	}
	if st := b.json("GET", "/v1/filters/f", nil, 200); st["total"].(map[string]any)["count"] != 4.0 {
		t.Errorf("after the late requests: count %v; want 4", st["total"].(map[string]any)["count"])
	}

	// Deleted through b, a's cache is stale again: a answers 404.
	b.json("DELETE", "/v1/filters/f", nil, 204)
	a.json("POST", "/v1/filters/f/check", map[string]any{"keys": fresh}, 404)
}

// newFront starts a front of its own (its own meta cache) on objs, as
// another isolate would be.
func newFront(t *testing.T, objs Objects) *client {
	srv := httptest.NewServer(&Server{Token: func() string { return testToken }, Objects: objs})
	t.Cleanup(srv.Close)
	return &client{t, srv.URL}
}

// wantLateAddRefused sends an add of generation gen (of a filter of two
// shards) straight to shard sh of name, as a request that read the
// parameters long ago would reach it, and wants it refused as stale.
func wantLateAddRefused(t *testing.T, objs Objects, name string, gen uint64, sh int) {
	t.Helper()
	h := shardParamsOf(name, filterParams{Capacity: 1000, ErrorRate: 0.01, Shards: 2, Generation: gen}, sh)
	res, err := objs.Fetch(context.Background(), shardObject(name, sh), "POST", "/add", h, []byte(keysBody([]string{"late"})))
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusConflict || !bytes.Contains(body, []byte(staleGeneration)) {
		t.Errorf("shard %d: a late add of generation %d answered %d %s; want 409 %s", sh, gen, res.StatusCode, body, staleGeneration)
	}
}

// heldObjects holds the requests that match until release is closed, as a
// network that delays them would: arrived gets one value for each request
// held, before it waits.
type heldObjects struct {
	Objects
	match   func(object, method, path string) bool
	arrived chan string
	release chan struct{}
}

func (h *heldObjects) Fetch(ctx context.Context, object, method, path string, header http.Header, body []byte) (*http.Response, error) {
	if h.match(object, method, path) {
		h.arrived <- object
		<-h.release
	}
	return h.Objects.Fetch(ctx, object, method, path, header, body)
}

// TestDeleteAndPutLoseNoAdd runs the race of a front whose cached
// parameters a DELETE and a PUT through another front made stale: the
// DELETE's clean-up of the shards is still on its way (held) or failed part
// way (a shard unreachable), the PUT is acknowledged, and then the stale
// front adds 50 keys. Every key it acknowledges is in the new filter, for a
// new filter of as many shards as the old one, of more and of fewer.
func TestDeleteAndPutLoseNoAdd(t *testing.T) {
	for _, mode := range []string{"held", "unreachable"} {
		for _, shards := range []int{2, 3, 1} {
			t.Run(fmt.Sprintf("%s/2-to-%d-shards", mode, shards), func(t *testing.T) {
				objs := newMemoryObjects()
				held := &heldObjects{
					Objects: objs,
					match: func(object, method, path string) bool {
						return mode == "held" && method == "DELETE" && path == "/shard"
					},
					arrived: make(chan string, 2),
					release: make(chan struct{}),
				}
				// a caches the filter's parameters; b deletes it through
				// held, c makes it again.
				a, b, c := newFront(t, objs), newFront(t, held), newFront(t, objs)
				a.json("PUT", "/v1/filters/f", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 201)
				a.json("POST", "/v1/filters/f/add", map[string]any{"keys": []string{"old-1", "old-2", "old-3"}}, 200)
				oldGen := objs.meta["f"].Generation

				deleted := make(chan int, 1)
				switch mode {
				case "held":
					go func() {
						status, _, _ := b.do("DELETE", "/v1/filters/f", "")
						deleted <- status
					}()
					// Both shards' clean-up is on its way: meta has
					// forgotten the filter.
					<-held.arrived
					<-held.arrived
				case "unreachable":
					objs.setFail(func(o string) bool { return o == shardObject("f", 1) })
					if status, body, _ := b.do("DELETE", "/v1/filters/f", ""); status != http.StatusBadGateway {
						t.Fatalf("DELETE with shard 1 unreachable: %d %s; want 502", status, body)
					}
					objs.setFail(nil)
				}
				c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": shards}, 201)

				// One key a request, as a crawler adds what it finds: a
				// request whose keys all go to a shard that still holds the
				// old filter is the one that can be lost.
				keys := make([]string, 50)
				for i := range keys {
					keys[i] = fmt.Sprintf("https://late.example/%d", i)
					got := a.json("POST", "/v1/filters/f/add", map[string]any{"keys": keys[i : i+1]}, 200)
					if fmt.Sprint(got["added"]) != "[true]" {
						t.Fatalf("add of %s through the stale front: %v; want it new", keys[i], got)
					}
				}
				wantAll := func(when string) {
					t.Helper()
					present := c.json("POST", "/v1/filters/f/check", map[string]any{"keys": keys}, 200)["present"].([]any)
					n := 0
					for _, p := range present {
						if p == true {
							n++
						}
					}
					st := c.json("GET", "/v1/filters/f", nil, 200)
					if count := st["total"].(map[string]any)["count"]; n != len(keys) || count != float64(len(keys)) || st["shards"] != float64(shards) {
						t.Errorf("%s: %d of %d acknowledged keys present, total.count %v, %v shards; want all, %d, %d",
							when, n, len(keys), count, st["shards"], len(keys), shards)
					}
				}
				wantAll("after the stale front's adds")
				if mode == "held" {
					close(held.release)
					if status := <-deleted; status != http.StatusNoContent {
						t.Errorf("the held DELETE answered %d; want 204", status)
					}
					wantAll("once the held clean-up reached the shards")
				}
				// Every shard the old filter had, and every one the new
				// filter has, refuses a late request of the old generation.
				for sh := range max(2, shards) {
					wantLateAddRefused(t, objs, "f", oldGen, sh)
				}
			})
		}
	}
}

// TestDeleteRetried: a DELETE that could not reach every shard answers 502,
// and sent again it finishes the clean-up (204); a PUT meanwhile is not
// acknowledged while a shard of the deleted filter cannot be told, and
// sent again once it can, it is.
func TestDeleteRetried(t *testing.T) {
	c, objs := newTestServer(t)
	stale := newFront(t, objs)
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 201)
	stale.json("POST", "/v1/filters/f/add", map[string]any{"keys": []string{"old"}}, 200)
	objs.setFail(func(o string) bool { return o == shardObject("f", 1) })
	c.json("DELETE", "/v1/filters/f", nil, 502)
	objs.setFail(nil)
	c.json("DELETE", "/v1/filters/f", nil, 204)
	c.json("DELETE", "/v1/filters/f", nil, 404)
	c.json("POST", "/v1/filters/f/check", map[string]any{"keys": []string{"old"}}, 404)

	// Deleted part way again, then made again while the shard is down.
	c.json("PUT", "/v1/filters/g", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 201)
	stale.json("POST", "/v1/filters/g/add", map[string]any{"keys": []string{"old"}}, 200)
	objs.setFail(func(o string) bool { return o == shardObject("g", 1) })
	c.json("DELETE", "/v1/filters/g", nil, 502)
	c.json("PUT", "/v1/filters/g", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 502)
	objs.setFail(nil)
	c.json("PUT", "/v1/filters/g", map[string]any{"capacity": 1000, "errorRate": 0.01, "shards": 2}, 200)
	keys := make([]string, 20)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
		stale.json("POST", "/v1/filters/g/add", map[string]any{"keys": keys[i : i+1]}, 200)
	}
	present := c.json("POST", "/v1/filters/g/check", map[string]any{"keys": append(keys, "old")}, 200)["present"]
	if want := strings.TrimSuffix(strings.Repeat("true ", len(keys)), " ") + " false"; fmt.Sprint(present) != "["+want+"]" {
		t.Errorf("after the retried PUT: %v; want every key the stale front added, and not the old filter's", present)
	}
}

// TestDeleteAndPutUnderConcurrentAdds: four fronts with the parameters
// cached keep adding, each from four clients, while another front deletes
// the filter (its clean-up held on the way) and a third makes it again
// with three shards. Every add sent after the PUT was answered and
// acknowledged is in the new filter, and the held clean-up, landing
// later, changes nothing.
func TestDeleteAndPutUnderConcurrentAdds(t *testing.T) {
	objs := newMemoryObjects()
	held := &heldObjects{
		Objects: objs,
		match:   func(object, method, path string) bool { return method == "DELETE" && path == "/shard" },
		arrived: make(chan string, 2),
		release: make(chan struct{}),
	}
	b, c := newFront(t, held), newFront(t, objs)
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 100000, "errorRate": 0.01, "shards": 2}, 201)
	stale := make([]*client, 4)
	for i := range stale {
		stale[i] = newFront(t, objs)
		stale[i].json("POST", "/v1/filters/f/add", map[string]any{"keys": []string{fmt.Sprintf("warm-%d", i)}}, 200)
	}

	var putDone atomic.Bool
	var mu sync.Mutex
	var after []string // acknowledged adds sent after the PUT was answered
	enough := make(chan struct{})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i, a := range stale {
		for j := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					sentAfter := putDone.Load()
					key := fmt.Sprintf("https://c%d-%d.example/%d", i, j, n)
					status, body, _ := a.do("POST", "/v1/filters/f/add", keysBody([]string{key}))
					if status == http.StatusOK && sentAfter {
						if !bytes.Contains(body, []byte("true")) {
							t.Errorf("%s: %s; want it new", key, body)
						}
						mu.Lock()
						if after = append(after, key); len(after) == 400 {
							close(enough)
						}
						mu.Unlock()
					}
				}
			}()
		}
	}
	deleted := make(chan int, 1)
	go func() {
		status, _, _ := b.do("DELETE", "/v1/filters/f", "")
		deleted <- status
	}()
	<-held.arrived
	<-held.arrived
	c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 100000, "errorRate": 0.01, "shards": 3}, 201)
	putDone.Store(true)
	select {
	case <-enough:
	case <-time.After(time.Minute):
		t.Fatal("fewer than 400 adds acknowledged in a minute after the PUT")
	}
	close(held.release)
	if status := <-deleted; status != http.StatusNoContent {
		t.Errorf("the held DELETE answered %d; want 204", status)
	}
	close(stop)
	wg.Wait()

	present := c.json("POST", "/v1/filters/f/check", map[string]any{"keys": after}, 200)["present"].([]any)
	lost := 0
	for _, p := range present {
		if p != true {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d adds acknowledged after the PUT was answered are not in the filter", lost, len(after))
	}
}
