package main

import (
	"flag"
	"fmt"

	"github.com/edgebloom/edgebloom/bloom"
)

func init() {
	commands = append(commands, &command{
		name: "rotate",
		args: "FILE",
		about: `Rotate drops the oldest generation of the window filter in FILE and starts an
empty newest one, which later adds fill. Run it at the end of each period:
a window of 7 generations rotated daily answers "seen in the last 7 days".`,
		flags: rotateFlags,
	})
}

func rotateFlags(fs *flag.FlagSet) func(*env, []string) (int, error) {
	return func(e *env, args []string) (int, error) {
		ff, err := onlyFilterArg(args, readWrite)
		if err != nil {
			return 2, err
		}
		defer ff.close()
		w, ok := ff.f.(*bloom.WindowFilter)
		if !ok {
			return 2, fmt.Errorf("%s: a %s filter has no generations to rotate; build one with --window", ff.path, ff.info.Kind)
		}
		dropped := w.Generation(0).Count()
		w.Rotate()
		if err := ff.save(); err != nil {
			return 2, err
		}
		fmt.Fprintf(e.stderr, "rotated %s: dropped the oldest generation (%d keys); %d keys in %d generations\n",
			ff.path, dropped, w.Count(), w.Generations())
		return 0, nil
	}
}
