//go:build !js && !wasip1

package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/snapshot"
)

// savedCopy writes a copy of "crawl" holding key to path, as Sync does, and
// returns its cursor.
func savedCopy(t *testing.T, c *Client, path, key string, shards int) string {
	t.Helper()
	cp, err := c.NewCopy("crawl", CopyOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	f, err := bloom.New(1000, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	f.AddString(key)
	cur := snapshot.Cursor{Generation: 7, Shards: make([]snapshot.ShardPosition, shards)}
	cp.set = f
	cp.state = copyState{Filter: "crawl", Generation: 7, Cursor: cur.Text()}
	if err := cp.save(); err != nil {
		t.Fatal(err)
	}
	return cur.Text()
}

func TestCopyFile(t *testing.T) {
	c, err := New("http://127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "crawl.ebloom")

	cp, err := c.NewCopy("crawl", CopyOptions{Path: path})
	if err != nil || cp.Loaded() {
		t.Fatalf("a new path: loaded %v, %v", cp.Loaded(), err)
	}
	cursor := savedCopy(t, c, path, "https://a.example/", 1)
	cp, err = c.NewCopy("crawl", CopyOptions{Path: path})
	if err != nil || !cp.Loaded() || cp.Cursor() != cursor || cp.Generation() != 7 || !cp.HasString("https://a.example/") {
		t.Fatalf("the saved copy: loaded %v, cursor %q, %v", cp.Loaded(), cp.Cursor(), err)
	}
	// The file is the filter's snapshot, as any reader of the format takes it.
	data, _ := os.ReadFile(path)
	if set, err := snapshot.Load(data, MaxShardBits); err != nil || !set.HasString("https://a.example/") {
		t.Fatalf("snapshot.Load of the copy's file: %v", err)
	}

	if _, err := c.NewCopy("other", CopyOptions{Path: path}); err == nil || !strings.Contains(err.Error(), `of the filter "crawl", not "other"`) {
		t.Errorf("another filter's copy on the file: %v", err)
	}
	foreign := filepath.Join(dir, "mine.bloom")
	os.WriteFile(foreign, data, 0o644)
	if _, err := c.NewCopy("crawl", CopyOptions{Path: foreign}); err == nil || !strings.Contains(err.Error(), "is no copy a Copy wrote") {
		t.Errorf("a file with no cursor beside it: %v", err)
	}

	// A cursor of another shape than the snapshot (a crash between the two
	// writes of a resync): the filter answers, and the next sync loads the
	// snapshot again.
	savedCopy(t, c, path, "https://b.example/", 2)
	if cp, err = c.NewCopy("crawl", CopyOptions{Path: path}); err != nil || !cp.Loaded() || cp.Cursor() != "" {
		t.Errorf("a cursor of 2 shards beside a plain filter: loaded %v, cursor %q, %v", cp.Loaded(), cp.Cursor(), err)
	}
	// The copy's own file, damaged: nothing loaded, the first sync writes it anew.
	os.WriteFile(path, data[:len(data)-1], 0o644)
	if cp, err = c.NewCopy("crawl", CopyOptions{Path: path}); err != nil || cp.Loaded() {
		t.Errorf("a damaged copy: loaded %v, %v", cp.Loaded(), err)
	}
	// Claimed before the first snapshot was written.
	os.Remove(path)
	os.WriteFile(cursorPath(path), []byte(`{"filter":"crawl","generation":0,"cursor":"","checkpoint":0}`), 0o644)
	if cp, err = c.NewCopy("crawl", CopyOptions{Path: path}); err != nil || cp.Loaded() {
		t.Errorf("a claimed path: loaded %v, %v", cp.Loaded(), err)
	}
}
