package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/edgebloom/edgebloom/bloom"
)

func init() {
	commands = append(commands, &command{
		name: "merge",
		args: "-o OUT A B [C...]",
		about: `Merge writes to OUT the union of filters A, B, ..., all classic or all
blocked: a key present in any of them is present in OUT. The filters must
have the same number of bits, hash functions and seed, as filters built with
the same --kind, -n and -p do.`,
		flags: mergeFlags,
	})
}

// A mergeable filter is a kind that merge can union: classic or blocked.
type mergeable interface {
	filter
	io.WriterTo
	FillRatio() float64
}

func mergeFlags(fs *flag.FlagSet) func(*env, []string) (int, error) {
	out := fs.String("o", "", "output `file` (required)")
	return func(e *env, args []string) (int, error) {
		switch {
		case *out == "":
			return 2, errors.New("-o is required")
		case len(args) < 2:
			return 2, fmt.Errorf("want at least two filters, got %d", len(args))
		}
		var dst mergeable
		var union func(ff *filterFile) error
		var first *filterFile
		for _, path := range args {
			ff, err := load(path, readOnly)
			if err != nil {
				return 2, err
			}
			// A classic input is cloned into memory, so the inputs stay as
			// they are; other kinds are read into memory by load.
			switch {
			case ff.info.Kind != "classic" && ff.info.Kind != "blocked":
				return 2, fmt.Errorf("%s: cannot merge %s filters, only classic or blocked ones", path, ff.info.Kind)
			case first != nil && ff.info.Kind != first.info.Kind:
				return 2, fmt.Errorf("%s and %s are incompatible: a %s and a %s filter", first.path, path, first.info.Kind, ff.info.Kind)
			case first != nil:
				if err := union(ff); err != nil {
					return 2, fmt.Errorf("%s and %s are incompatible: %s", first.path, path, difference(first.info, ff.info))
				}
			case ff.file != nil:
				c := ff.file.Clone()
				dst, union = c, func(ff *filterFile) error { return c.Union(ff.file.Clone()) }
			default:
				b := ff.f.(*bloom.BlockedFilter) // read into memory, owned here
				dst, union = b, func(ff *filterFile) error { return b.Union(ff.f.(*bloom.BlockedFilter)) }
			}
			ff.close()
			if first == nil {
				first = ff
			}
		}
		if err := writeFileAtomic(*out, dst); err != nil {
			return 2, err
		}
		fmt.Fprintf(e.stderr, "merged %d filters into %s: about %.0f keys, fill %.1f%%, estimated FPR %s\n",
			len(args), *out, dst.EstimatedCount(), 100*dst.FillRatio(), percent(dst.EstimatedFPR()))
		return 0, nil
	}
}

// difference says how two filters' parameters differ, for merge's refusal.
func difference(a, b bloom.Info) string {
	switch {
	case a.Bits != b.Bits:
		return fmt.Sprintf("%d bits and %d bits (build both with the same -n and -p)", a.Bits, b.Bits)
	case a.Hashes != b.Hashes:
		return fmt.Sprintf("k = %d and k = %d", a.Hashes, b.Hashes)
	}
	return fmt.Sprintf("seeds %d and %d", a.Seed, b.Seed)
}
