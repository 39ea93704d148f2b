package main

import (
	"errors"
	"flag"

	"github.com/edgebloom/edgebloom/urlkey"
)

// A canonFunc maps a URL to its canonical key, or refuses it.
type canonFunc func(raw string) (string, error)

// canonFlags adds --canonical and --keep-tracking to fs. The function it
// returns gives the canonicalization they ask for, or nil for none.
func canonFlags(fs *flag.FlagSet) func() (canonFunc, error) {
	on := fs.Bool("canonical", false, "canonicalize URLs first (urlkey), so that spellings of one URL are one key")
	keep := fs.Bool("keep-tracking", false, "with --canonical, keep tracking parameters (utm_*, gclid, fbclid, ...)")
	return func() (canonFunc, error) {
		switch {
		case *keep && !*on:
			return nil, errors.New("--keep-tracking needs --canonical")
		case !*on:
			return nil, nil
		}
		opts := urlkey.Options{KeepTracking: *keep}
		return func(raw string) (string, error) { return urlkey.Canonical(raw, opts) }, nil
	}
}
