package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/snapshot"
)

func init() {
	commands = append(commands, &command{
		name: "build",
		args: "-n N [-p P] [--kind K [--for-parquet]] [--canonical] [--window G] [--shards S] [-o FILE] [INPUT...]",
		about: `Build reads keys (URLs), one a line, from the inputs in turn ("-" or none:
stdin; gzip is recognized by its first bytes) into a new filter made for N
keys at false-positive rate P, and prints a summary. --kind blocked makes
Apache Parquet's split-block filter instead of the classic one: one cache
miss a key, 12% more bits at 1% (20% at 0.1%), and a bitset Parquet
files store; --for-parquet rounds its blocks up to a power of two, which every
Parquet reader accepts (Arrow C++, Velox and ClickHouse refuse other
lengths), at up to twice the bits and a lower rate. With
--window G it makes
a window filter of G generations of N keys each, and fills the newest; see
"edgebloom rotate". With --shards S it makes S filters of N/S keys each
and routes each key to one as the edge service does, and writes a sharded
snapshot: push publishes it to a service filter of S shards (a shard holds
at most 2^28 bits, about 28 M keys at 1%). With --canonical, lines that are not http(s) URLs are
counted as invalid and skipped. Progress goes to stderr: a bar on a
terminal, a line every --progress interval otherwise. Without -o the filter
is written to stdout, unless stdout is a terminal.`,
		flags: buildFlags,
	})
}

func buildFlags(fs *flag.FlagSet) func(*env, []string) (int, error) {
	var n count
	fs.Var(&n, "n", "number of keys the filter is made for (1000000, 1e6, 1M)")
	p := fs.Float64("p", 0.01, "target false-positive rate")
	kind := fs.String("kind", "classic", "filter `kind`: classic or blocked (split-block, Parquet's)")
	forParquet := fs.Bool("for-parquet", false, "with --kind blocked: a power of two of blocks, at most 128 MiB, which every Parquet reader accepts")
	window := fs.Int("window", 0, "make a window filter of this many `generations`")
	shards := fs.Int("shards", 0, "make a sharded snapshot of this many shards (2 to 64), routed as the edge service routes keys")
	out := fs.String("o", "", "output `file` (default: stdout)")
	every := fs.Duration("progress", 2*time.Second, "interval between progress lines when stderr is not a terminal; 0 for none")
	canonical := canonFlags(fs)
	return func(e *env, inputs []string) (int, error) {
		canon, err := canonical()
		switch {
		case err != nil:
			return 2, err
		case n == 0:
			return 2, errors.New("-n is required: the number of keys the filter is made for")
		case math.IsNaN(*p) || *p <= 0 || *p >= 1:
			return 2, fmt.Errorf("-p %g: the false-positive rate must be in (0, 1)", *p)
		case *window < 0:
			return 2, fmt.Errorf("--window %d: the number of generations must be at least 1", *window)
		case *kind != "classic" && *kind != "blocked":
			return 2, fmt.Errorf("--kind %q: the kind must be classic or blocked", *kind)
		case *kind == "blocked" && *window > 0:
			return 2, errors.New("--kind blocked and --window: a window's generations are classic filters")
		case *shards != 0 && (*shards < 2 || *shards > 64):
			return 2, fmt.Errorf("--shards %d: a sharded filter has 2 to 64 shards, as a service filter", *shards)
		case *shards != 0 && (*kind != "classic" || *window > 0):
			return 2, errors.New("--shards makes classic shards: not with --kind blocked or --window")
		case *forParquet && *kind != "blocked":
			return 2, errors.New("--for-parquet needs --kind blocked: the split-block filter is the one Parquet stores")
		case *out == "" && isTerminal(e.stdout):
			return 2, errors.New("refusing to write a filter to a terminal: use -o FILE or redirect stdout")
		}
		src, err := newLineSource(inputs, e.stdin)
		if err != nil {
			return 2, err
		}
		defer src.Close()
		if *forParquet {
			*kind = "blocked-parquet"
		}
		f, k, finish, err := newOutput(e, uint64(n), *p, *kind, *window, *shards, *out)
		if err != nil {
			return 2, err
		}

		prog := startProgress(e.stderr, *every, src)
		pipe := startPipeline(src, canon)
		var keys, added, invalid uint64
		var firstInvalid error
		var adder batchAdder
		for b := pipe.next(nil); b != nil; b = pipe.next(b) {
			added += adder.add(f, b)
			keys += uint64(b.len())
			if invalid += b.invalid; firstInvalid == nil {
				firstInvalid = b.firstInvalid
			}
			prog.keys.Store(keys)
		}
		prog.done()
		if pipe.err != nil {
			finish(false)
			return 2, pipe.err
		}
		elapsed := time.Since(prog.start)

		dest := *out
		if dest == "" {
			dest = "stdout"
		}
		s := summary{}
		s.add("keys", "%d", keys)
		s.add("new", "%d", added)
		s.add("duplicates", "%d", keys-added)
		if canon != nil {
			if invalid == 0 {
				s.add("invalid", "0")
			} else {
				s.add("invalid", "%d, skipped (first: %v)", invalid, firstInvalid)
			}
		}
		if *shards > 0 {
			s.add("shards", "%d of %d bits each", *shards, f.NumBits()/uint64(*shards))
		}
		if *window > 0 {
			s.add("generations", "%d of %d bits each", *window, f.NumBits()/uint64(*window))
		}
		if *kind == "blocked" || *kind == "blocked-parquet" {
			s.add("blocks", "%d of 256 bits", f.NumBits()/256)
		}
		s.add("bits", "%d (%s)", f.NumBits(), bytesIEC((f.NumBits()+7)/8))
		s.add("k", "%d", k)
		s.add("fill", "%.1f%%", 100*float64(f.SetBits())/float64(f.NumBits()))
		s.add("estimated FPR", "%s (target %s)", percent(f.EstimatedFPR()), percent(*p))
		s.add("time", "%s (%s keys/s)", formatDuration(elapsed), si(float64(keys)/elapsed.Seconds()))
		s.add("output", "%s", dest)
		if err := finish(true); err != nil {
			return 2, err
		}
		s.write(e.stderr)
		return 0, nil
	}
}

// newOutput makes the filter that build fills: a file-backed filter at
// path, or one in memory that finish writes to path or stdout. finish(true)
// makes the output durable and releases it; finish(false) abandons it and
// removes a partly written file.
func newOutput(e *env, n uint64, p float64, kind string, window, shards int, path string) (f filter, k uint32, finish func(ok bool) error, err error) {
	emit := func(w io.WriterTo) func(bool) error {
		return func(ok bool) error {
			switch {
			case !ok:
				return nil
			case path == "":
				_, err := w.WriteTo(e.stdout)
				return err
			}
			return writeFileAtomic(path, w)
		}
	}
	switch {
	case shards > 0:
		// A sharded snapshot as the edge service splits a filter: push
		// publishes it to a service filter of as many shards.
		s, err := snapshot.NewSharded(n, p, shards)
		if err != nil {
			return nil, 0, nil, libError(err)
		}
		return s, s.Shards[0].NumHashes(), emit(s), nil
	case window > 0:
		w, err := bloom.NewWindow(n, p, window)
		if err != nil {
			return nil, 0, nil, libError(err)
		}
		return w, w.NumHashes(), emit(w), nil
	case kind == "blocked" || kind == "blocked-parquet":
		// One writer adds in input order, so the plain BlockedFilter fits.
		newBlocked := bloom.NewBlocked
		if kind == "blocked-parquet" {
			newBlocked = bloom.NewBlockedForParquet
		}
		b, err := newBlocked(n, p)
		if err != nil {
			return nil, 0, nil, libError(err)
		}
		return b, b.NumHashes(), emit(b), nil
	case path == "":
		c, err := bloom.New(n, p)
		if err != nil {
			return nil, 0, nil, libError(err)
		}
		return c, c.NumHashes(), emit(c), nil
	}
	ff, err := bloom.Create(path, n, p)
	if err != nil {
		return nil, 0, nil, fileError(path, err)
	}
	return ff, ff.NumHashes(), func(ok bool) error {
		if !ok {
			// A partial filter would pass for a whole one: removed under the
			// lock, where Create made it (path may be a link to it).
			if real, err := filepath.EvalSymlinks(path); err == nil {
				os.Remove(real)
			}
			ff.Close()
			return nil
		}
		return libError(cmp.Or(ff.Err(), ff.Close()))
	}, nil
}

// A summary is a list of aligned "name  value" lines.
type summary [][2]string

func (s *summary) add(name, format string, a ...any) {
	*s = append(*s, [2]string{name, fmt.Sprintf(format, a...)})
}

func (s summary) write(w io.Writer) {
	width := 0
	for _, l := range s {
		width = max(width, len(l[0]))
	}
	for _, l := range s {
		fmt.Fprintf(w, "%-*s  %s\n", width, l[0], l[1])
	}
}

// percent formats a rate as a percentage with three significant digits.
func percent(x float64) string {
	return fmt.Sprintf("%.3g%%", 100*x)
}
