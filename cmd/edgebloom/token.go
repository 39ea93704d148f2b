package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/edgebloom/edgebloom/token"
)

func init() {
	commands = append(commands, &command{
		name: "token",
		args: "--scope read|write --filter NAME|PREFIX* --expires-in DURATION [--json]",
		about: `Token makes a scoped token of the edge service (worker/) offline, signed with
the service's secret, which it reads from the environment variable
EDGEBLOOM_TOKEN (or the first line of --secret-file): never from the
command line, where other users of the machine could read it. The token
is what POST /v1/tokens would answer; the service checks it without any
storage read.

A read token allows a filter's statistics, check, snapshot and changes: give
one to a page or an extension that keeps a copy. A write token allows add and
check: give one to a crawler. --filter names one filter, or every filter
whose name starts with a prefix ("crawl-*"; "*" is every filter).
--expires-in is a duration: 3600 (seconds), 90m, 12h, 30d; at most 366d.

It prints the token; with --json, {"token", "expires", "scope", "filter"}.`,
		flags: tokenFlags,
	})
}

func tokenFlags(fs *flag.FlagSet) func(*env, []string) (int, error) {
	scope := fs.String("scope", "", `"read" or "write"`)
	filter := fs.String("filter", "", `the filter's name, or a prefix followed by "*"`)
	expiresIn := fs.String("expires-in", "", "how long the token is valid: seconds, or a duration (90m, 12h, 30d); at most 366d")
	secretFile := fs.String("secret-file", "", "read the service's secret from the first line of this file instead of EDGEBLOOM_TOKEN")
	asJSON := fs.Bool("json", false, `print {"token", "expires", "scope", "filter"}`)
	return func(e *env, args []string) (int, error) {
		if len(args) > 0 {
			return 2, fmt.Errorf("unexpected argument %q", args[0])
		}
		switch {
		case *scope != string(token.Read) && *scope != string(token.Write):
			return 2, fmt.Errorf(`--scope must be "read" or "write", not %q`, *scope)
		case *filter == "":
			return 2, errors.New(`--filter is required: a filter name, or a prefix followed by "*"`)
		case *expiresIn == "":
			return 2, errors.New("--expires-in is required: seconds, or a duration (90m, 12h, 30d)")
		}
		if err := token.ValidFilter(*filter); err != nil {
			return 2, fmt.Errorf("--filter: %v", strings.TrimPrefix(err.Error(), "token: "))
		}
		life, err := parseLifetime(*expiresIn)
		if err != nil {
			return 2, err
		}
		secret, err := readSecret(*secretFile)
		if err != nil {
			return 2, err
		}
		c := token.Claims{Scope: token.Scope(*scope), Filter: *filter, Expires: time.Now().Add(life).Truncate(time.Second).UTC()}
		tok, err := token.Mint(secret, c)
		if err != nil {
			return 2, err
		}
		if !*asJSON {
			fmt.Fprintln(e.stdout, tok)
			return 0, nil
		}
		b, _ := json.Marshal(map[string]string{"token": tok, "expires": c.Expires.Format(time.RFC3339), "scope": *scope, "filter": *filter})
		fmt.Fprintf(e.stdout, "%s\n", b)
		return 0, nil
	}
}

// parseLifetime reads --expires-in: whole seconds, a Go duration (90m,
// 1h30m) or a number of days (30d), from one second to token.MaxLifetime.
func parseLifetime(s string) (time.Duration, error) {
	var d time.Duration
	var err error
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var days uint64
		days, err = strconv.ParseUint(n, 10, 16)
		d = time.Duration(days) * 24 * time.Hour
	} else if secs, err2 := strconv.ParseUint(s, 10, 32); err2 == nil {
		d = time.Duration(secs) * time.Second
	} else {
		d, err = time.ParseDuration(s)
	}
	switch {
	case err != nil:
		return 0, fmt.Errorf("--expires-in %q is not seconds or a duration (90m, 12h, 30d)", s)
	case d < time.Second || d > token.MaxLifetime:
		return 0, fmt.Errorf("--expires-in %s is not from 1s to 366d", s)
	case d%time.Second != 0:
		return 0, fmt.Errorf("--expires-in %s is not a whole number of seconds", s)
	}
	return d, nil
}

// readSecret returns the service's secret: the first line of file, or
// EDGEBLOOM_TOKEN.
func readSecret(file string) ([]byte, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		line, _, _ := strings.Cut(string(b), "\n")
		if line = strings.TrimRight(line, "\r"); line == "" {
			return nil, fmt.Errorf("--secret-file %s: the first line is empty", file)
		}
		return []byte(line), nil
	}
	s := os.Getenv("EDGEBLOOM_TOKEN")
	if s == "" {
		return nil, errors.New("set EDGEBLOOM_TOKEN to the service's secret (or give --secret-file FILE)")
	}
	return []byte(s), nil
}
