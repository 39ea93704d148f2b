package main

import (
	"encoding/json"
	"flag"
	"math"

	"github.com/edgebloom/edgebloom/snapshot"
)

func init() {
	commands = append(commands, &command{
		name:  "info",
		args:  "[--json] FILE",
		about: `Info prints the parameters and statistics of the filter in FILE, of any kind.`,
		flags: infoFlags,
	})
}

// fileInfo is what info reports, named as in its JSON output.
type fileInfo struct {
	File           string   `json:"file"`
	Kind           string   `json:"kind"`
	Bits           uint64   `json:"bits"`
	Blocks         uint64   `json:"blocks,omitempty"` // blocked: 256-bit blocks
	Hashes         uint32   `json:"hashes,omitempty"`
	Layers         uint32   `json:"layers,omitempty"`      // scalable
	Generations    uint32   `json:"generations,omitempty"` // window
	Shards         int      `json:"shards,omitempty"`      // sharded: a service snapshot, build --shards
	Seed           uint64   `json:"seed"`
	Count          uint64   `json:"count"`
	Capacity       uint64   `json:"capacity"`
	TargetFPR      float64  `json:"target_fpr"`
	SetBits        uint64   `json:"set_bits"`
	FillRatio      float64  `json:"fill_ratio"`
	EstimatedCount *float64 `json:"estimated_count"` // null when every bit is set
	EstimatedFPR   float64  `json:"estimated_fpr"`
	OverCapacity   bool     `json:"over_capacity"`
	Size           uint64   `json:"size"`
}

func infoFlags(fs *flag.FlagSet) func(*env, []string) (int, error) {
	asJSON := fs.Bool("json", false, "print one JSON object")
	return func(e *env, args []string) (int, error) {
		ff, err := onlyFilterArg(args, readOnly)
		if err != nil {
			return 2, err
		}
		defer ff.close()
		in, f := ff.info, ff.f
		fi := fileInfo{
			File: ff.path, Kind: in.Kind, Bits: in.Bits, Hashes: in.Hashes,
			Seed: in.Seed, Count: f.Count(), Capacity: in.Capacity, TargetFPR: in.FPRate,
			SetBits: f.SetBits(), EstimatedFPR: f.EstimatedFPR(), OverCapacity: f.OverCapacity(),
			Size: in.Size,
		}
		if in.Kind == "blocked" {
			fi.Blocks = in.Bits / 256
		}
		if sh, ok := f.(*snapshot.Sharded); ok {
			fi.Shards = len(sh.Shards)
		}
		if in.Kind == "window" {
			fi.Generations = in.Layers
		} else {
			fi.Layers = in.Layers
		}
		fi.FillRatio = float64(fi.SetBits) / float64(fi.Bits)
		if c := f.EstimatedCount(); !math.IsInf(c, 0) {
			fi.EstimatedCount = &c
		}
		if *asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return 0, enc.Encode(fi)
		}
		s := summary{}
		s.add("file", "%s", fi.File)
		s.add("kind", "%s", fi.Kind)
		if fi.Blocks != 0 {
			s.add("blocks", "%d of 256 bits", fi.Blocks)
		}
		s.add("bits", "%d (%s)", fi.Bits, bytesIEC((fi.Bits+7)/8))
		if fi.Hashes != 0 {
			s.add("k", "%d", fi.Hashes)
		}
		if fi.Layers != 0 {
			s.add("layers", "%d", fi.Layers)
		}
		if fi.Generations != 0 {
			s.add("generations", "%d", fi.Generations)
		}
		if fi.Shards != 0 {
			s.add("shards", "%d", fi.Shards)
		}
		s.add("seed", "%d", fi.Seed)
		s.add("count", "%d", fi.Count)
		if fi.Capacity != 0 {
			s.add("capacity", "%d", fi.Capacity)
			s.add("target FPR", "%s", percent(fi.TargetFPR))
		}
		s.add("set bits", "%d", fi.SetBits)
		s.add("fill", "%.1f%%", 100*fi.FillRatio)
		if fi.EstimatedCount != nil {
			s.add("estimated count", "%.0f", *fi.EstimatedCount)
		} else {
			s.add("estimated count", "unknown (every bit set)")
		}
		s.add("estimated FPR", "%s", percent(fi.EstimatedFPR))
		s.add("over capacity", "%v", fi.OverCapacity)
		s.add("size", "%d bytes", fi.Size)
		s.write(e.stdout)
		return 0, nil
	}
}
