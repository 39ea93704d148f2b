//go:build !(js && wasm)

package main

import (
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/snapshot"
	"github.com/edgebloom/edgebloom/token"
)

// builtDelta builds keys offline into shards as the service routes them
// and returns the merge body: every bit set, per shard, as a delta.
func builtDelta(t *testing.T, capacity uint64, rate float64, shards int, generation uint64, keys []string) []byte {
	t.Helper()
	per := (capacity + uint64(shards) - 1) / uint64(shards)
	router := snapshot.Router(shards)
	fs := make([]*bloom.Filter, shards)
	for i := range fs {
		fs[i], _ = bloom.New(per, rate)
	}
	counts := make([]uint64, shards)
	for _, k := range keys {
		sh := snapshot.Route(router, k)
		fs[sh].AddString(k)
		counts[sh]++
	}
	d := &snapshot.Delta{Generation: generation, M: fs[0].NumBits(), K: fs[0].NumHashes(), Shards: uint32(shards)}
	for i, f := range fs {
		var pos []uint64
		for p := uint64(0); p < f.NumBits(); p++ {
			var b [1]byte
			f.ReadAt(b[:], int64(bloom.HeaderSize+p/8))
			if b[0]&(1<<(p%8)) != 0 {
				pos = append(pos, p)
			}
		}
		if len(pos) > 0 {
			d.Records = append(d.Records, snapshot.DeltaRecord{Shard: uint32(i), From: 0, To: 1, Count: counts[i], Positions: pos})
		}
	}
	return snapshot.EncodeDelta(d)
}

func TestMerge(t *testing.T) {
	c, _ := newTestServer(t)
	c.json("PUT", "/v1/filters/m", map[string]any{"capacity": 10000, "errorRate": 0.01, "shards": 3}, 201)
	keys := urls("https://built.example/", 2000)
	body := builtDelta(t, 10000, 0.01, 3, 0, keys)
	status, out, _ := c.do("POST", "/v1/filters/m/merge", string(body), "Content-Type", "application/octet-stream")
	if status != 200 {
		t.Fatalf("merge: %d %s", status, out)
	}
	var got struct {
		Generation uint64
		Set        uint64
		Shards     []struct{ Index, Positions int }
	}
	json.Unmarshal(out, &got)
	if got.Generation == 0 || got.Set == 0 || len(got.Shards) != 3 {
		t.Fatalf("merge answered %s", out)
	}
	present := c.json("POST", "/v1/filters/m/check", map[string]any{"keys": keys}, 200)["present"].([]any)
	for i, p := range present {
		if p != true {
			t.Fatalf("check(%q) after the merge: got %v; want true", keys[i], p)
		}
	}
	stats := c.json("GET", "/v1/filters/m", nil, 200)["total"].(map[string]any)
	if stats["count"] != float64(2000) {
		t.Fatalf("count after the merge: got %v; want 2000", stats["count"])
	}
	// The same merge again sets nothing and leaves the count.
	_, out, _ = c.do("POST", "/v1/filters/m/merge", string(body))
	json.Unmarshal(out, &got)
	if got.Set != 0 {
		t.Fatalf("the merge sent again set %d bits; want 0", got.Set)
	}
	if n := c.json("GET", "/v1/filters/m", nil, 200)["total"].(map[string]any)["count"]; n != float64(2000) {
		t.Fatalf("count after the second merge: got %v; want 2000", n)
	}
	// A delta of this generation is taken; of another, refused.
	if status, out, _ := c.do("POST", "/v1/filters/m/merge", string(builtDelta(t, 10000, 0.01, 3, got.Generation, keys[:5]))); status != 200 {
		t.Fatalf("merge of the filter's generation: %d %s", status, out)
	}
	if status, out, _ := c.do("POST", "/v1/filters/m/merge", string(builtDelta(t, 10000, 0.01, 3, got.Generation-1, keys[:5]))); status != 409 || !strings.Contains(string(out), "generation") {
		t.Fatalf("merge of another generation: %d %s; want 409 naming the generation", status, out)
	}
}

func TestMergeRefusals(t *testing.T) {
	c, _ := newTestServer(t)
	c.json("PUT", "/v1/filters/m", map[string]any{"capacity": 10000, "errorRate": 0.01, "shards": 2}, 201)
	good := builtDelta(t, 10000, 0.01, 2, 0, urls("https://a.example/", 100))
	flip := func(at int) string {
		b := []byte(string(good))
		b[at] ^= 1
		return string(b)
	}
	// A delta that claims more positions than the limit, with a good CRC.
	huge := []byte(string(good))
	binary.LittleEndian.PutUint32(huge[abi.DeltaHeader+abi.DeltaRecordAtPositions:], maxMergePositions+1)
	binary.LittleEndian.PutUint32(huge[len(huge)-4:], crc32.ChecksumIEEE(huge[:len(huge)-4]))
	cases := []struct {
		name, body string
		status     int
		code       string
	}{
		{"JSON", `{"keys":["a"]}`, 400, "invalid_delta"},
		{"empty", "", 400, "invalid_delta"},
		{"truncated", string(good[:len(good)-9]), 400, "invalid_delta"},
		{"a flipped bit", flip(len(good) / 2), 400, "invalid_delta"},
		{"too many positions", string(huge), 413, "too_many_positions"},
		{"other shards", string(builtDelta(t, 10000, 0.01, 3, 0, urls("https://a.example/", 10))), 409, "conflict"},
		{"other capacity", string(builtDelta(t, 20000, 0.01, 2, 0, urls("https://a.example/", 10))), 409, "conflict"},
		{"other rate", string(builtDelta(t, 10000, 0.001, 2, 0, urls("https://a.example/", 10))), 409, "conflict"},
		{"over 1 MiB", strings.Repeat("x", maxBodyBytes+1), 413, "body_too_large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, out, _ := c.do("POST", "/v1/filters/m/merge", tc.body)
			var e struct{ Error struct{ Code string } }
			json.Unmarshal(out, &e)
			if status != tc.status || e.Error.Code != tc.code {
				t.Fatalf("got %d %s; want %d %s", status, out, tc.status, tc.code)
			}
		})
	}
	if n := c.json("GET", "/v1/filters/m", nil, 200)["total"].(map[string]any)["setBits"]; n != float64(0) {
		t.Fatalf("refused merges set %v bits; want 0", n)
	}
	if status, _, _ := c.do("POST", "/v1/filters/none/merge", string(good)); status != 404 {
		t.Fatalf("merge into an unknown filter: %d; want 404", status)
	}
	if status, _, h := c.do("GET", "/v1/filters/m/merge", ""); status != 405 || h.Get("Allow") != "POST" {
		t.Fatalf("GET .../merge: %d Allow %q; want 405 POST", status, h.Get("Allow"))
	}
}

func TestMergeTokens(t *testing.T) {
	c, _ := newTestServer(t)
	c.json("PUT", "/v1/filters/m", map[string]any{"capacity": 1000, "errorRate": 0.01}, 201)
	body := string(builtDelta(t, 1000, 0.01, 1, 0, urls("https://a.example/", 10)))
	for _, tc := range []struct {
		scope  token.Scope
		filter string
		status int
	}{{token.Write, "m", 200}, {token.Write, "m*", 200}, {token.Read, "m", 403}, {token.Write, "other", 403}} {
		tok, err := token.Mint([]byte(testToken), token.Claims{Scope: tc.scope, Filter: tc.filter, Expires: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", c.url+"/v1/filters/m/merge", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.status {
			t.Errorf("a %s token of %q: got %d; want %d", tc.scope, tc.filter, res.StatusCode, tc.status)
		}
	}
}
