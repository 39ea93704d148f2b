package bench

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestWriteCorpus checks that the corpus the JavaScript benchmark reads
// (cmd/corpus, js/corpus.mjs) is the Go benchmarks' own, key for key.
func TestWriteCorpus(t *testing.T) {
	const n = 1000
	for _, kind := range urlKinds {
		var b bytes.Buffer
		if err := WriteCorpus(&b, kind.name, n); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if want := strconv.Itoa(n) + " " + strconv.Itoa(numAbsent); lines[0] != want {
			t.Fatalf("%s: first line %q; want %q", kind.name, lines[0], want)
		}
		if len(lines) != 1+n+2*numAbsent {
			t.Fatalf("%s: %d lines; want %d", kind.name, len(lines), 1+n+2*numAbsent)
		}
		present, absent, order := lines[1:1+n], lines[1+n:1+n+numAbsent], lines[1+n+numAbsent:]
		p, a := makeCorpus(kind, 0, n), makeCorpus(kind, firstAbsent, numAbsent)
		mix, _ := probeMix(p, a)
		for j := range present {
			if present[j] != p.keys[j] {
				t.Fatalf("%s: present URL %d is %q; want %q", kind.name, j, present[j], p.keys[j])
			}
		}
		for j := range absent {
			if absent[j] != a.keys[j] {
				t.Fatalf("%s: absent URL %d is %q; want %q", kind.name, j, absent[j], a.keys[j])
			}
		}
		for j, line := range order {
			got := absent[j]
			if line != "a" {
				i, err := strconv.Atoi(line)
				if err != nil || i < 0 || i >= n {
					t.Fatalf("%s: probe %d is %q", kind.name, j, line)
				}
				got = present[i]
			}
			if got != mix.keys[j] {
				t.Fatalf("%s: probe %d is %q; want %q", kind.name, j, got, mix.keys[j])
			}
		}
	}
	if err := WriteCorpus(&bytes.Buffer{}, "nope", 1); err == nil {
		t.Error("WriteCorpus of an unknown corpus: no error")
	}
}
