package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
)

func init() {
	commands = append(commands, &command{
		name: "build",
		args: "-n N [-p P] [-o FILE] [INPUT...]",
		about: `Build reads keys (URLs), one a line, from the inputs in turn ("-" or none:
stdin; gzip is recognized by its first bytes) into a new filter made for N
keys at false-positive rate P, and prints a summary. Progress goes to stderr:
a bar on a terminal, a line every --progress interval otherwise. Without -o
the filter is written to stdout, unless stdout is a terminal.`,
		flags: buildFlags,
	})
}

func buildFlags(fs *flag.FlagSet) func(*env, []string) (int, error) {
	var n count
	fs.Var(&n, "n", "number of keys the filter is made for (1000000, 1e6, 1M)")
	p := fs.Float64("p", 0.01, "target false-positive rate")
	out := fs.String("o", "", "output `file` (default: stdout)")
	every := fs.Duration("progress", 2*time.Second, "interval between progress lines when stderr is not a terminal; 0 for none")
	return func(e *env, inputs []string) (int, error) {
		switch {
		case n == 0:
			return 2, errors.New("-n is required: the number of keys the filter is made for")
		case math.IsNaN(*p) || *p <= 0 || *p >= 1:
			return 2, fmt.Errorf("-p %g: the false-positive rate must be in (0, 1)", *p)
		case *out == "" && isTerminal(e.stdout):
			return 2, errors.New("refusing to write a filter to a terminal: use -o FILE or redirect stdout")
		}
		f, err := bloom.New(uint64(n), *p)
		if err != nil {
			return 2, libError(err)
		}
		src, err := newLineSource(inputs, e.stdin)
		if err != nil {
			return 2, err
		}
		defer src.Close()

		prog := startProgress(e.stderr, *every, src)
		var keys, added uint64
		for {
			key, err := src.next()
			if err != nil {
				prog.done()
				return 2, err
			}
			if key == nil {
				break
			}
			if f.Add(key) {
				added++
			}
			if keys++; keys&1023 == 0 {
				prog.keys.Store(keys)
			}
		}
		prog.done()
		elapsed := time.Since(prog.start)

		var w io.WriterTo = f
		if *out == "" {
			_, err = w.WriteTo(e.stdout)
		} else {
			err = writeFileAtomic(*out, w)
		}
		if err != nil {
			return 2, err
		}
		dest := *out
		if dest == "" {
			dest = "stdout"
		}
		s := summary{}
		s.add("keys", "%d", keys)
		s.add("new", "%d", added)
		s.add("duplicates", "%d", keys-added)
		s.add("bits", "%d (%s)", f.NumBits(), bytesIEC((f.NumBits()+7)/8))
		s.add("k", "%d", f.NumHashes())
		s.add("fill", "%.1f%%", 100*f.FillRatio())
		s.add("estimated FPR", "%s (target %s)", percent(f.EstimatedFPR()), percent(*p))
		s.add("time", "%s (%s keys/s)", formatDuration(elapsed), si(float64(keys)/elapsed.Seconds()))
		s.add("output", "%s", dest)
		s.write(e.stderr)
		return 0, nil
	}
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
