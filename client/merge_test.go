package client

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

func TestMerge(t *testing.T) {
	c, f, waits := newTest(t, 0,
		answer{502, nil, errBody("shard_unavailable", "shard 1 could not be reached", "r")},
		answer{200, nil, `{"generation":17,"set":5,"shards":[{"index":0,"positions":3,"set":2},{"index":1,"positions":4,"set":3}]}`})
	delta := []byte("EBDL\x02...")
	m, err := c.Merge(context.Background(), "crawl", delta)
	if err != nil || m.Generation != 17 || m.Set != 5 || len(m.Shards) != 2 || m.Shards[1] != (MergeShard{1, 4, 3}) {
		t.Fatalf("Merge: %+v, %v", m, err)
	}
	if f.requests() != 2 || len(*waits) != 1 {
		t.Errorf("%d requests, waits %v; want the 502 sent again once", f.requests(), *waits)
	}
	r := f.got[1]
	if r.Method != "POST" || r.URL.Path != "/v1/filters/crawl/merge" || r.Header.Get("Content-Type") != "application/octet-stream" ||
		!bytes.Equal([]byte(f.bodies[1]), delta) {
		t.Errorf("%s %s %q: %q", r.Method, r.URL.Path, r.Header.Get("Content-Type"), f.bodies[1])
	}

	c, _, _ = newTest(t, 0, answer{409, nil, errBody("conflict", "the delta is of generation 3, the filter of 4", "")})
	if _, err := c.Merge(context.Background(), "crawl", delta); !errors.Is(err, ErrConflict) {
		t.Errorf("a delta of another generation: %v; want ErrConflict", err)
	}
	if _, err := c.Merge(context.Background(), "crawl", make([]byte, MaxBodyBytes+1)); err == nil {
		t.Error("Merge sent a delta over 1 MiB")
	}
}
