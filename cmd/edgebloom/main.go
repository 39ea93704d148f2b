// Command edgebloom builds, queries and maintains edgebloom filter files from
// the shell.
//
//	edgebloom build -n 10M -p 0.001 -o seen.bloom urls.txt.gz
//	edgebloom check seen.bloom https://example.com/   # exit 0: present, 1: absent
//	edgebloom info --json seen.bloom
//
// Filter files are in the portable format of docs/format.md, so a filter
// built here loads unchanged in Go, Node, browsers and Workers. Exit status
// is 0 on success, 1 when check finds a key absent, and 2 on any error, with
// a one-line message on stderr.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/release"
)

const usage = `Usage: edgebloom <command> [flags] [arguments]

Commands:
  build -n N [-p P] [-o FILE] [INPUT...]  make a filter from URLs, one a line
        [--kind blocked]                  ... Parquet's split-block filter
        [--window G]                      ... or a window filter of G generations
  check [-q] FILE [KEY...]                print each key as present or absent
  add FILE [KEY...]                       add keys to a filter file
  info [--json] FILE                      parameters and statistics of a filter
  merge -o OUT A B [C...]                 union of filters of the same size
  rotate FILE                             start a new generation of a window filter
  push [--name N] [--recreate] FILE URL   copy a filter file into Redis (redis://host:port/db)
  pull [--name N] URL FILE                write a filter in Redis to a file
  token --scope S --filter F --expires-in D
                                          a read or write token of the edge service
  version                                 print edgebloom's version (also --version)

check and add take --redis URL --name N to use a filter in Redis instead of
a file (see package redisfilter).

build, check and add take --canonical: URLs are canonicalized (lowercase
host, default port and fragment dropped, query sorted, tracking parameters
dropped, ...) so that two spellings of one URL are one key.

Commands that write a filter file (build, add, merge, rotate, pull) hold
its writer lock, the one package bloom's FileFilter holds, and write a new
file beside it that replaces it by rename: while one runs, the others
refuse the file (exit 2), and readers see the old file or the new one. A
FILE that is a symbolic link is replaced where it points; the link stays.

Inputs and keys are read from stdin when none are given ("-" is stdin too);
gzip-compressed input is recognized by its first bytes. Exit status: 0 on
success, 1 when check finds a key absent, 2 on error.

Run "edgebloom <command> -h" for a command's flags.
`

// A command is one subcommand: its flags are set up by flags and it runs with
// the arguments left over.
type command struct {
	name  string
	args  string // synopsis after the name
	about string
	flags func(fs *flag.FlagSet) func(env *env, args []string) (int, error)
}

var commands []*command // filled by init functions beside each command

// env is what a command may touch, so that tests could run it in process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

func main() {
	os.Exit(run(os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}))
}

// run executes one command line and returns the exit status.
func run(args []string, e *env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			return run([]string{args[1], "-h"}, e)
		}
		fmt.Fprint(e.stdout, usage)
		return 0
	case "version", "-version", "--version":
		if len(args) > 1 {
			fmt.Fprintf(e.stderr, "edgebloom: %s takes no arguments, got %q\n", name, args[1:])
			return 2
		}
		fmt.Fprintf(e.stdout, "edgebloom %s\n", release.Version)
		return 0
	}
	var c *command
	for _, cc := range commands {
		if cc.name == name {
			c = cc
		}
	}
	if c == nil {
		fmt.Fprintf(e.stderr, "edgebloom: unknown command %q (run edgebloom -h)\n", name)
		return 2
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	do := c.flags(fs)
	rest, err := parseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(e.stdout, "Usage: edgebloom %s %s\n\n%s\n", c.name, c.args, c.about)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		return 0
	}
	status := 2
	if err == nil {
		status, err = runCommand(do, e, rest)
	} else {
		err = fmt.Errorf("%w (run edgebloom %s -h)", err, name)
	}
	if err != nil {
		if err != errReported {
			fmt.Fprintf(e.stderr, "edgebloom: %s: %v\n", name, err)
		}
		return 2
	}
	return status
}

// runCommand runs a command. Classic filter files are memory-mapped: when
// another program truncates one in use, the next access past its new end
// faults, which becomes an error of the command rather than a crash with a
// SIGBUS dump. (Files that this program makes have their blocks reserved, so
// a full disk is an error when they are made, not a fault.)
func runCommand(do func(*env, []string) (int, error), e *env, args []string) (status int, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if _, ok := r.(interface{ Addr() uintptr }); ok { // a runtime.Error of a memory fault
			status, err = 2, errors.New("a page of the memory-mapped filter file could not be read or written (the file truncated by another program, or its disk full); check the file with edgebloom info")
			return
		}
		panic(r)
	}()
	return do(e, args)
}

// errReported is the error of a command that has written its messages to
// stderr already.
var errReported = errors.New("reported")

// parseInterspersed parses flags wherever they stand among the arguments,
// so that "merge a b -o c" works, and returns the other arguments in order.
// Everything after "--" is an argument.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		left := fs.Args()
		if used := len(args) - len(left); used > 0 && args[used-1] == "--" || len(left) == 0 {
			return append(rest, left...), nil
		}
		rest = append(rest, left[0])
		args = left[1:]
	}
}

// count is a flag holding a key count: 1000000, 1e6, 1_000_000, 1M, 10k
// and 2G are all accepted.
type count uint64

func (c *count) String() string { return strconv.FormatUint(uint64(*c), 10) }

func (c *count) Set(s string) error {
	t := strings.ReplaceAll(s, "_", "")
	mult := 1.0
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			mult = 1e3
		case 'm', 'M':
			mult = 1e6
		case 'g', 'G':
			mult = 1e9
		}
		if mult != 1 {
			t = t[:len(t)-1]
		}
	}
	if n, err := strconv.ParseUint(t, 10, 64); err == nil && mult == 1 {
		*c = count(n)
		return nil
	}
	f, err := strconv.ParseFloat(t, 64)
	f *= mult
	if err != nil || f < 0 || f != float64(uint64(f)) || f >= 1<<63 {
		return errors.New("not a whole number of keys")
	}
	*c = count(f)
	return nil
}

// maxBits is the size bound for filter files: the library's own limit. The
// CLI reads the user's own files, so it refuses nothing the library makes.
const maxBits = bloom.MaxBits

// libError drops the "bloom: " that package bloom starts its errors with:
// after "edgebloom: cmd: file:" it says nothing more.
func libError(err error) error {
	if err == nil {
		return nil
	}
	return trimmed{err}
}

type trimmed struct{ error }

func (t trimmed) Error() string { return strings.TrimPrefix(t.error.Error(), "bloom: ") }
func (t trimmed) Unwrap() error { return t.error }
