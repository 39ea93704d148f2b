// Command gocheck loads a filter of any kind with package bloom and answers
// Has for keys, so the JS tests can check that bytes written by the npm
// module read the same in Go. Usage: gocheck FILTER KEYS.json; it prints a
// JSON array of booleans, then the filter re-encoded as base64.
package main

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"

	"github.com/edgebloom/edgebloom/bloom"
)

type filter interface {
	HasString(string) bool
	encoding.BinaryMarshaler
}

func main() {
	data, err := os.ReadFile(os.Args[1])
	check(err)
	var keys []string
	raw, err := os.ReadFile(os.Args[2])
	check(err)
	check(json.Unmarshal(raw, &keys))
	info, err := bloom.Inspect(data, bloom.MaxBits)
	check(err)
	var f filter
	r := bytes.NewReader(data)
	switch info.Kind {
	case "counting":
		f, err = bloom.DecodeCounting(r, bloom.MaxBits)
	case "scalable":
		f, err = bloom.DecodeScalable(r, bloom.MaxBits)
	case "blocked":
		f, err = bloom.DecodeBlocked(r, bloom.MaxBits)
	default:
		f, err = bloom.Decode(r, bloom.MaxBits)
	}
	check(err)
	has := make([]bool, len(keys))
	for i, k := range keys {
		has[i] = f.HasString(k)
	}
	out, err := f.MarshalBinary()
	check(err)
	check(json.NewEncoder(os.Stdout).Encode(map[string]any{"kind": info.Kind, "has": has, "base64": base64.StdEncoding.EncodeToString(out)}))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "gocheck:", err)
		os.Exit(1)
	}
}
