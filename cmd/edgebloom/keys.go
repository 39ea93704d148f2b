package main

import (
	"bufio"
	"cmp"
	"errors"
	"flag"
	"fmt"
)

func init() {
	commands = append(commands, &command{
		name: "check",
		args: "[-q] [--canonical] FILE [KEY...]",
		about: `Check prints each key with "present" or "absent", a tab between. Keys come
from the arguments, or one a line from stdin when there are none. Exit
status: 0 when every key is present, 1 when some key is absent, 2 on error.`,
		flags: checkFlags,
	}, &command{
		name: "add",
		args: "[--canonical] FILE [KEY...]",
		about: `Add adds keys to the filter in FILE and prints how many were new. Keys come
from the arguments, or one a line from stdin when there are none.`,
		flags: addFlags,
	})
}

// eachKey calls fn with each key given as an argument, or else with each
// line of stdin, and with its canonical form when canon is not nil. A key
// that canon refuses is reported on stderr and skipped; eachKey then
// returns errReported after the others.
func eachKey(e *env, cmd string, args []string, canon canonFunc, fn func(key, canonical []byte)) error {
	var invalid error
	do := func(key []byte) {
		if canon == nil {
			fn(key, key)
			return
		}
		c, err := canon(string(key))
		if err != nil {
			fmt.Fprintf(e.stderr, "edgebloom: %s: %v\n", cmd, err)
			invalid = errReported
			return
		}
		fn(key, []byte(c))
	}
	if len(args) > 0 {
		for _, a := range args {
			do([]byte(a))
		}
		return invalid
	}
	src, err := newLineSource(nil, e.stdin)
	if err != nil {
		return err
	}
	defer src.Close()
	for {
		key, err := src.next()
		if key == nil || err != nil {
			return cmp.Or(err, invalid)
		}
		do(key)
	}
}

// filterArg opens the filter file named by the first argument.
func filterArg(args []string, mode access) (*filterFile, error) {
	if len(args) == 0 {
		return nil, errors.New("missing the filter file")
	}
	return load(args[0], mode)
}

// onlyFilterArg opens the filter file named by the only argument.
func onlyFilterArg(args []string, mode access) (*filterFile, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("want one filter file, got %d arguments", len(args))
	}
	return load(args[0], mode)
}

func checkFlags(fs *flag.FlagSet) func(*env, []string) (int, error) {
	quiet := fs.Bool("q", false, "print nothing; report through the exit status only")
	canonical := canonFlags(fs)
	return func(e *env, args []string) (int, error) {
		canon, err := canonical()
		if err != nil {
			return 2, err
		}
		ff, err := filterArg(args, readOnly)
		if err != nil {
			return 2, err
		}
		defer ff.close()
		out := bufio.NewWriter(e.stdout)
		defer out.Flush()
		status := 0
		err = eachKey(e, "check", args[1:], canon, func(key, c []byte) {
			state := "present"
			if !ff.f.Has(c) {
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
	canonical := canonFlags(fs)
	return func(e *env, args []string) (int, error) {
		canon, err := canonical()
		if err != nil {
			return 2, err
		}
		ff, err := filterArg(args, readWrite)
		if err != nil {
			return 2, err
		}
		defer ff.close()
		var keys, added uint64
		err = eachKey(e, "add", args[1:], canon, func(_, c []byte) {
			keys++
			if ff.f.Add(c) {
				added++
			}
		})
		if err != nil && err != errReported {
			return 2, err // a file filter keeps the keys added so far (Close syncs); others are not written
		}
		if serr := ff.save(); serr != nil {
			return 2, serr
		}
		fmt.Fprintf(e.stderr, "%d keys, %d new, %d already present; %d in %s\n", keys, added, keys-added, ff.f.Count(), ff.path)
		if err != nil {
			return 2, err
		}
		return 0, nil
	}
}
