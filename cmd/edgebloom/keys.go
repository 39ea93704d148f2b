package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
)

func init() {
	commands = append(commands, &command{
		name: "check",
		args: "[-q] FILE [KEY...]",
		about: `Check prints each key with "present" or "absent", a tab between. Keys come
from the arguments, or one a line from stdin when there are none. Exit
status: 0 when every key is present, 1 when some key is absent, 2 on error.`,
		flags: checkFlags,
	}, &command{
		name: "add",
		args: "FILE [KEY...]",
		about: `Add adds keys to the filter in FILE and prints how many were new. Keys come
from the arguments, or one a line from stdin when there are none.`,
		flags: addFlags,
	})
}

// eachKey calls fn with each key given as an argument, or else with each
// line of stdin.
func eachKey(e *env, args []string, fn func(key []byte)) error {
	if len(args) > 0 {
		for _, a := range args {
			fn([]byte(a))
		}
		return nil
	}
	src, err := newLineSource(nil, e.stdin)
	if err != nil {
		return err
	}
	defer src.Close()
	for {
		key, err := src.next()
		if key == nil || err != nil {
			return err
		}
		fn(key)
	}
}

// filterArg loads the filter file named by the first argument.
func filterArg(args []string) (*filterFile, error) {
	if len(args) == 0 {
		return nil, errors.New("missing the filter file")
	}
	return load(args[0])
}

func checkFlags(fs *flag.FlagSet) func(*env, []string) (int, error) {
	quiet := fs.Bool("q", false, "print nothing; report through the exit status only")
	return func(e *env, args []string) (int, error) {
		ff, err := filterArg(args)
		if err != nil {
			return 2, err
		}
		out := bufio.NewWriter(e.stdout)
		defer out.Flush()
		status := 0
		err = eachKey(e, args[1:], func(key []byte) {
			state := "present"
			if !ff.f.Has(key) {
				state, status = "absent", 1
			}
			if !*quiet {
				fmt.Fprintf(out, "%s\t%s\n", key, state)
			}
		})
		if err != nil {
			return 2, err
		}
		return status, nil
	}
}

func addFlags(fs *flag.FlagSet) func(*env, []string) (int, error) {
	return func(e *env, args []string) (int, error) {
		ff, err := filterArg(args)
		if err != nil {
			return 2, err
		}
		var keys, added uint64
		err = eachKey(e, args[1:], func(key []byte) {
			keys++
			if ff.f.Add(key) {
				added++
			}
		})
		if err == nil {
			err = ff.save()
		}
		if err != nil {
			return 2, err
		}
		fmt.Fprintf(e.stderr, "%d keys, %d new, %d already present; %d in %s\n", keys, added, keys-added, ff.f.Count(), ff.path)
		return 0, nil
	}
}
