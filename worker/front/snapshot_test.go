//go:build !(js && wasm)

// A snapshot whose shard fails after the status went out: the client sees
// a body shorter than its Content-Length, and the log says why, under the
// request id.

package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSnapshotCutShortIsLogged(t *testing.T) {
	tests := []struct {
		name   string
		shards int
		path   string // snapshot or changes (without since: the snapshot)
		// fail makes shard fail to answer; otherwise its body breaks off.
		fail  bool
		shard int
	}{
		{"one shard, its body breaks off", 1, "snapshot", false, 0},
		{"changes, one shard, its body breaks off", 1, "changes", false, 0},
		{"three shards, the first breaks off", 3, "snapshot", false, 0},
		{"three shards, the last breaks off", 3, "snapshot", false, 2},
		{"three shards, the second unreachable", 3, "snapshot", true, 1},
		{"changes, three shards, the second breaks off", 3, "changes", false, 1},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, objs := newTestServer(t)
			c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 3000, "errorRate": 0.01, "shards": tt.shards}, 201)
			c.json("POST", "/v1/filters/f/add", map[string]any{"keys": urls("https://a.example/", 300)}, 200)
			object := fmt.Sprintf("shard:f:%d", tt.shard)
			if tt.fail {
				// GET snapshot asks shard 1 only once shard 0's answer
				// has sent the status.
				objs.setFail(func(o string) bool { return o == object })
			} else {
				objs.breakBody = func(o, path string) bool { return o == object && path == "/snapshot" }
			}
			logs := captureLog(t)
			id := "ray-cut-" + strconv.Itoa(i)
			status, n, length, readErr := rawGet(t, c, "/v1/filters/f/"+tt.path, "Cf-Ray", id)
			if status != http.StatusOK {
				t.Fatalf("GET %s: status %d; want 200 (the shard fails after the status)", tt.path, status)
			}
			if readErr == nil || n >= length {
				t.Errorf("GET %s: read %d of %d bytes with error %v; want a body cut short", tt.path, n, length, readErr)
			}
			line := ""
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, "request "+id+":") {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("no log line with request id %s; log: %q", id, logs.String())
			}
			if want := fmt.Sprintf("shard %d", tt.shard); !strings.Contains(line, want) {
				t.Errorf("log line %q does not name %q", line, want)
			}
		})
	}

	t.Run("the client stops reading", func(t *testing.T) {
		objs := newMemoryObjects()
		done := make(chan struct{})
		front := &Server{Token: func() string { return testToken }, Objects: objs}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/snapshot") {
				defer close(done)
			}
			front.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		c := &client{t, srv.URL}
		// Three shards of about 8 MB: far more than loopback's connection
		// buffers, which Linux grows to several megabytes.
		c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 20_000_000, "errorRate": 0.01, "shards": 3}, 201)
		logs := captureLog(t)
		res := c.send("GET", "/v1/filters/f/snapshot", "", "Cf-Ray", "ray-gone")
		io.ReadFull(res.Body, make([]byte, 100))
		res.Body.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the snapshot's handler still runs 10 s after the client left")
		}
		if line := logs.String(); !strings.Contains(line, "request ray-gone:") || !strings.Contains(line, "client_gone") {
			t.Errorf("log: %q; want a client_gone line with the request id", line)
		}
	})

	t.Run("a whole snapshot logs nothing", func(t *testing.T) {
		c, _ := newTestServer(t)
		c.json("PUT", "/v1/filters/f", map[string]any{"capacity": 3000, "errorRate": 0.01, "shards": 3}, 201)
		logs := captureLog(t)
		status, n, length, err := rawGet(t, c, "/v1/filters/f/snapshot")
		if status != http.StatusOK || err != nil || n != length {
			t.Fatalf("GET snapshot: status %d, %d of %d bytes, error %v; want 200 and the whole body", status, n, length, err)
		}
		if logs.Len() != 0 {
			t.Errorf("log: %q; want nothing", logs.String())
		}
	})
}

// rawGet sends GET path and reads the body to its end, returning the
// status, the bytes read, the Content-Length and the error that ended the
// read, if any.
func rawGet(t *testing.T, c *client, path string, header ...string) (status int, n, length int64, readErr error) {
	t.Helper()
	res := c.send("GET", path, "", header...)
	defer res.Body.Close()
	n, readErr = io.Copy(io.Discard, res.Body)
	return res.StatusCode, n, res.ContentLength, readErr
}

// failAfter reads its bytes, then fails with err instead of io.EOF.
type failAfter struct {
	r   io.Reader
	err error
}

func (f *failAfter) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

// copyShard takes only io.EOF as the clean end of a shard's body: a read
// that fails after the checksum, (0, err), is not a whole body, and the
// shard's last 8 bytes (its checksum) are not sent as if it were.
func TestCopyShardNeedsEOF(t *testing.T) {
	p := filterParams{Capacity: 100, ErrorRate: 0.01, Shards: 1}
	payload := make([]byte, encodedSize(p)-checksumBytes)
	for i := range payload {
		payload[i] = byte(i)
	}
	whole := binary.LittleEndian.AppendUint64(slices.Clone(payload), xxhash.Sum64(payload))
	var out bytes.Buffer
	if err := copyShard(&out, io.NopCloser(bytes.NewReader(whole)), p, 0); err != nil || !bytes.Equal(out.Bytes(), whole) {
		t.Fatalf("a whole body: %v, %d of %d bytes", err, out.Len(), len(whole))
	}
	out.Reset()
	reset := errors.New("connection reset")
	err := copyShard(&out, io.NopCloser(&failAfter{bytes.NewReader(whole), reset}), p, 0)
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadGateway || !strings.Contains(ae.Detail, reset.Error()) {
		t.Fatalf("a body whose last read fails: got %v; want a 502 caused by %v", err, reset)
	}
	if out.Len() >= len(whole) {
		t.Fatalf("a body whose last read fails was sent whole (%d bytes)", out.Len())
	}
}
