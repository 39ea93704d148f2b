package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
)

func init() {
	commands = append(commands, &command{
		name: "check",
		args: "[-q] [--canonical] FILE [KEY...] | --redis URL --name N [KEY...]",
		about: `Check prints each key with "present" or "absent", a tab between. Keys come
from the arguments, or one a line from stdin when there are none. With
--redis, the filter is the one called N in Redis at URL (made by push or
package redisfilter), asked 10 000 keys a round trip. Exit status: 0 when
every key is present, 1 when some key is absent, 2 on error.`,
		flags: checkFlags,
	}, &command{
		name: "add",
		args: "[--canonical] FILE [KEY...] | --redis URL --name N [KEY...]",
		about: `Add adds keys to the filter in FILE and prints how many were new. Keys come
from the arguments, or one a line from stdin when there are none. With
--redis, the filter is the one called N in Redis at URL (made by push or
package redisfilter), 10 000 keys a round trip; each key is added
atomically, so of processes adding one key at once exactly one counts it
new.`,
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
	ro := redisTargetFlags(fs, true)
	return func(e *env, args []string) (int, error) {
		canon, err := canonical()
		if err != nil {
			return 2, err
		}
		if ro.url != "" {
			return checkRedis(e, ro, args, canon, *quiet)
		}
		if ro.name != "" {
			return 2, errors.New("--name goes with --redis")
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
	ro := redisTargetFlags(fs, true)
	return func(e *env, args []string) (int, error) {
		canon, err := canonical()
		if err != nil {
			return 2, err
		}
		if ro.url != "" {
			return addRedis(e, ro, args, canon)
		}
		if ro.name != "" {
			return 2, errors.New("--name goes with --redis")
		}
		ff, err := filterArg(args, readWrite)
		if err != nil {
			return 2, err
		}
		defer ff.close()
		var keys, added uint64
		var pending batch
		var adder batchAdder
		err = eachKey(e, "add", args[1:], canon, func(_, c []byte) {
			keys++
			if pending.append(c); pending.len() == batchKeys {
				added += adder.add(ff.f, &pending)
				pending.data, pending.ends = pending.data[:0], pending.ends[:0]
			}
		})
		added += adder.add(ff.f, &pending) // also after an error: the keys read so far are added
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

// checkRedis is check on a filter in Redis.
func checkRedis(e *env, ro *redisOpts, args []string, canon canonFunc, quiet bool) (int, error) {
	f, closeClient, err := ro.open()
	if err != nil {
		return 2, err
	}
	defer closeClient()
	out := bufio.NewWriter(e.stdout)
	defer out.Flush()
	status := 0
	flush := func(shown, keys []string) error {
		has, err := f.HasMany(context.Background(), keys)
		if err != nil {
			return redisError(err)
		}
		for i, ok := range has {
			state := "present"
			if !ok {
				state, status = "absent", 1
			}
			if !quiet {
				fmt.Fprintf(out, "%s\t%s\n", shown[i], state)
			}
		}
		return nil
	}
	var b redisBatch
	err = eachKey(e, "check", args, canon, func(key, c []byte) { b.add(key, c, flush) })
	b.done(flush)
	if err = cmp.Or(b.err, err); err != nil {
		return 2, err
	}
	return status, nil
}

// addRedis is add on a filter in Redis.
func addRedis(e *env, ro *redisOpts, args []string, canon canonFunc) (int, error) {
	f, closeClient, err := ro.open()
	if err != nil {
		return 2, err
	}
	defer closeClient()
	var keys, added uint64
	flush := func(_, batch []string) error {
		res, err := f.AddMany(context.Background(), batch)
		if err != nil {
			return redisError(err)
		}
		keys += uint64(len(batch))
		for _, isNew := range res {
			if isNew {
				added++
			}
		}
		return nil
	}
	var b redisBatch
	err = eachKey(e, "add", args, canon, func(key, c []byte) { b.add(key, c, flush) })
	b.done(flush)
	count, cerr := f.Count(context.Background())
	fmt.Fprintf(e.stderr, "%d keys, %d new, %d already present; %d in %s (Redis)\n", keys, added, keys-added, count, f.Name())
	if err = cmp.Or(b.err, err, redisError(cerr)); err != nil {
		return 2, err
	}
	return 0, nil
}
