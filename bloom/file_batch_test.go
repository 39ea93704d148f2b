//go:build !js && !wasip1

package bloom

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var _ many = (*FileFilter)(nil)

// TestFileBatchEqualsSingle is TestBatchEqualsSingle for FileFilter: two
// file filters, one filled by single calls and one by batches, give the
// same answers and end as the same bytes, also after Sync, Close and Open.
func TestFileBatchEqualsSingle(t *testing.T) {
	dir := t.TempDir()
	single := must(Create(filepath.Join(dir, "single.bloom"), 2000, 0.01))
	path := filepath.Join(dir, "batch.bloom")
	batch := must(Create(path, 2000, 0.01))
	defer single.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	next := 0
	for round := range 100 {
		keys := make([]string, round%53)
		for i := range keys {
			switch r := rng.IntN(10); {
			case r < 6 || next == 0:
				keys[i] = batchKey(next)
				next++
			case r < 8 && i > 0:
				keys[i] = keys[rng.IntN(i)]
			default:
				keys[i] = batchKey(rng.IntN(next))
			}
		}
		strs := round%2 == 0
		got := batchCall(batch, true, strs, keys, nil)
		for i, k := range keys {
			if want := single.AddString(k); got[i] != want {
				t.Fatalf("round %d: AddMany answer %d for %q: got %v; want %v (Add)", round, i, k, got[i], want)
			}
		}
		probes := make([]string, len(keys))
		for i := range probes {
			probes[i] = batchKey(rng.IntN(2*next + 1))
		}
		got = batchCall(batch, false, !strs, probes, nil)
		for i, k := range probes {
			if want := single.HasString(k); got[i] != want {
				t.Fatalf("round %d: HasMany answer %d for %q: got %v; want %v (Has)", round, i, k, got[i], want)
			}
		}
		if round == 50 {
			// Stopped and started again: the batch filter goes on from its file.
			if err := batch.Close(); err != nil {
				t.Fatal(err)
			}
			batch = must(Open(path))
		}
	}
	if !bytes.Equal(must(single.MarshalBinary()), must(batch.MarshalBinary())) {
		t.Errorf("MarshalBinary differs between the file filled by batches and the one filled by single calls")
	}
	if err := batch.Close(); err != nil {
		t.Fatal(err)
	}

	// Read-only: a batch add changes nothing, answers false and sets Err.
	ro := must(OpenReadOnly(path))
	defer ro.Close()
	before := must(ro.MarshalBinary())
	keys := []string{batchKey(0), batchKey(next + 1), batchKey(next + 2)}
	got := ro.AddManyString(keys, []bool{true})
	if !slices.Equal(got, []bool{true, false, false, false}) {
		t.Errorf("read-only AddManyString: got %v; want dst's true then false for each key", got)
	}
	if !errors.Is(ro.Err(), ErrReadOnly) {
		t.Errorf("read-only AddManyString: Err() = %v; want ErrReadOnly", ro.Err())
	}
	if !bytes.Equal(before, must(ro.MarshalBinary())) {
		t.Errorf("read-only AddManyString changed the filter")
	}
	if got := ro.HasManyString(keys, nil); !slices.Equal(got, []bool{true, false, false}) {
		t.Errorf("read-only HasManyString: got %v; want [true false false]", got)
	}
}

// TestFileBatchVectors replays the vectors' classic cases sized by
// capacity on file filters, with batches.
func TestFileBatchVectors(t *testing.T) {
	var v vectorFile
	if err := json.Unmarshal(must(os.ReadFile(vectorsPath)), &v); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range v.Filters {
		if c.Kind != "classic" || c.Params.Capacity == 0 {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			ff := must(Create(filepath.Join(t.TempDir(), "f.bloom"), c.Params.Capacity, c.Params.ErrorRate))
			defer ff.Close()
			var got []bool
			for i := 0; i < len(c.Added); i += 7 {
				var keys [][]byte
				for _, k := range c.Added[i:min(i+7, len(c.Added))] {
					keys = append(keys, []byte(v.Keys[k]))
				}
				got = ff.AddMany(keys, got)
			}
			if !slices.Equal(got, c.AddResults) {
				t.Fatalf("AddMany answers differ from the vectors' addResults:\n got %v\nwant %v", got, c.AddResults)
			}
			if has := ff.HasManyString(c.Probes, nil); !slices.Equal(has, c.Has) {
				t.Errorf("HasManyString answers differ from the vectors' has:\n got %v\nwant %v", has, c.Has)
			}
			if enc := base64.StdEncoding.EncodeToString(must(ff.MarshalBinary())); enc != c.Base64 {
				t.Errorf("MarshalBinary after batches differs from the vectors' base64")
			}
		})
	}
	if n == 0 {
		t.Fatalf("no classic case sized by capacity in %s", vectorsPath)
	}
}
