package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
)

// The example as its README shows it: write the file, then find URLs in it
// with arrow-go, which reads a row group only when its filter lets the URL
// through.
func TestWriteThenFind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.parquet")
	var out, errOut bytes.Buffer
	if code := run([]string{"write", path}, &out, &errOut); code != 0 {
		t.Fatalf("parquet write: exit %d: %s", code, errOut.String())
	}
	groups := sampleGroups(8, 10_000)
	// The false positives a filter check is expected to give: 0.35 % (512
	// blocks for 10,000 URLs). Up to twice that, and a few, passes.
	fpr := bloom.EstimateBlockedFPR(uint64(len(mustFilter(t, groups[0]).ParquetBitset())/32), 10_000)
	allowed := func(checks int) int { return int(2*fpr*float64(checks)) + 3 }

	// Every URL of the file, sampled: found in its row group, the others
	// skipped by their filters but for the odd false positive.
	var urls []string
	for g, group := range groups {
		for i := 0; i < len(group); i += 997 {
			urls = append(urls, groups[g][i])
		}
	}
	results, err := find(path, urls)
	if err != nil {
		t.Fatal(err)
	}
	falsePositives := 0
	for i, r := range results {
		want := i / 11 // 11 samples a group
		if !slices.Equal(r.Found, []int{want}) || !slices.Contains(r.Read, want) {
			t.Errorf("%s", r)
		}
		falsePositives += len(r.Read) - 1
		if len(r.Read)+r.Skipped != len(groups) {
			t.Errorf("%s: %d row groups read and skipped; want %d", r.URL, len(r.Read)+r.Skipped, len(groups))
		}
	}
	if falsePositives > allowed(len(results)*7) { // 7 other row groups a URL
		t.Errorf("%d false positives in %d filter checks", falsePositives, len(results)*7)
	}

	// URLs the file does not hold: nothing read but for false positives.
	var absent []string
	for i := range 1000 {
		absent = append(absent, fmt.Sprintf("https://%d.example.com/page-%d", i%8, 10_000+i))
	}
	results, err = find(path, absent)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for _, r := range results {
		if len(r.Found) != 0 {
			t.Errorf("%s", r)
		}
		read += len(r.Read)
	}
	if read > allowed(len(absent)*len(groups)) {
		t.Errorf("%d row groups read for 1000 absent URLs; want them skipped", read)
	}
	t.Logf("absent URLs: %d of %d row groups read (%.2f %% expected)", read, len(absent)*len(groups), 100*fpr)

	// The command's own output.
	out.Reset()
	if code := run([]string{"find", path, groups[3][4242], "https://nowhere.example/"}, &out, &errOut); code != 0 {
		t.Fatalf("parquet find: exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], groups[3][4242]+": found in row group [3]; read 1 row group(s) [3], skipped 7") ||
		!strings.HasSuffix(lines[1], ": not found; read 0 row group(s) [], skipped 8 by their filters") {
		t.Errorf("parquet find printed:\n%s", out.String())
	}
}

// The filters in the file are edgebloom's bitsets byte for byte: a
// BlockedFilter read back from the file's bytes answers as the one built.
func TestFiltersAreEdgebloomBitsets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.parquet")
	groups := sampleGroups(2, 100)
	if err := writeFile(path, groups); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		if !bytes.Contains(data, mustFilter(t, g).ParquetBitset()) {
			t.Errorf("the file does not hold the bitset of %s...", g[0])
		}
	}
}

func TestErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none.parquet")
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "usage:"},
		{[]string{"find", missing}, "usage:"},
		{[]string{"find", missing, "https://example.com/"}, "(make one with: parquet write " + missing + ")"},
	} {
		var out, errOut bytes.Buffer
		if code := run(c.args, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("parquet %v: exit %d, %q; want 2 and %q", c.args, code, errOut.String(), c.want)
		}
	}
}

// mustFilter returns the filter writeFile makes of urls.
func mustFilter(t *testing.T, urls []string) *bloom.BlockedFilter {
	t.Helper()
	f, err := newFilter(urls)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
