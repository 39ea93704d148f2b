package main

// The edge service (worker/README.md) as push and pull reach it: a URL
// that starts with http:// or https:// names it, instead of Redis. The
// credential comes from EDGEBLOOM_TOKEN or --token-file, never a flag
// (other users of the machine could read it in the process list).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/edgebloom/edgebloom/client"
)

// serviceOpts are the flags of push and pull that only the service uses.
type serviceOpts struct {
	tokenFile string
	parallel  int
	progress  time.Duration
	// push
	keys      bool
	state     string
	restart   bool
	capacity  count
	rate      float64
	shards    int
	canonical bool
	// pull
	every time.Duration
	mode  string
}

// serviceFlags adds the service's flags to push's (push) or pull's fs.
func serviceFlags(fs *flag.FlagSet, push bool) *serviceOpts {
	o := &serviceOpts{parallel: 4}
	fs.StringVar(&o.tokenFile, "token-file", "", "with an http(s) URL: read the credential from the first line of this `file` instead of EDGEBLOOM_TOKEN")
	if push {
		fs.BoolVar(&o.keys, "keys", false, "with an http(s) URL: the inputs before URL are keys, one a line (none or \"-\": stdin), added to the filter")
		fs.StringVar(&o.state, "state", "", "with an http(s) URL: the `file` that records progress, to resume (default .edgebloom-push-NAME.json)")
		fs.BoolVar(&o.restart, "restart", false, "with an http(s) URL: start over, forgetting the state file of an earlier push")
		fs.Var(&o.capacity, "n", "with --keys: make the filter for this many keys if it does not exist (1000000, 1e6, 1M)")
		fs.Float64Var(&o.rate, "p", 0.01, "with --keys and -n: the false-positive rate of a filter it makes")
		fs.IntVar(&o.shards, "shards", 1, "with --keys and -n: the shards of a filter it makes")
		fs.BoolVar(&o.canonical, "canonicalize", false, "the filter it makes canonicalizes URLs (the service's \"canonicalize\")")
		fs.IntVar(&o.parallel, "parallel", 4, "with an http(s) URL: requests in flight at once, 1 to 64")
	} else {
		fs.DurationVar(&o.every, "every", 0, "with an http(s) URL: keep syncing FILE at this interval until interrupted (0: once)")
		fs.StringVar(&o.mode, "mode", "changes", "with an http(s) URL: sync through `changes` (every change at once) or checkpoints (cached at the edge)")
	}
	fs.DurationVar(&o.progress, "progress", 0, "with an http(s) URL: a progress line to stderr at this interval when stderr is not a terminal (a terminal gets a bar)")
	return o
}

// isServiceURL reports whether s names the edge service.
func isServiceURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// serviceTarget splits a service URL into the base the client takes and
// the filter it names: http://host/v1/filters/NAME names both,
// http://host[/prefix] only the base.
func serviceTarget(raw string) (base, name string, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("service URL %q: want http(s)://host[:port][/v1/filters/NAME]", raw)
	}
	if before, after, ok := strings.Cut(u.Path, "/v1/filters/"); ok {
		u.Path, name = before, strings.TrimSuffix(after, "/")
		if name == "" || strings.Contains(name, "/") {
			return "", "", fmt.Errorf("service URL %q: want .../v1/filters/NAME", raw)
		}
	}
	return strings.TrimSuffix(u.String(), "/"), name, nil
}

// newServiceClient makes the client of the service at base with the
// credential of EDGEBLOOM_TOKEN or o.tokenFile.
func (o *serviceOpts) client(base string) (*client.Client, error) {
	cred := os.Getenv("EDGEBLOOM_TOKEN")
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return nil, err
		}
		cred, _, _ = strings.Cut(string(b), "\n")
		cred = strings.TrimSpace(cred)
	}
	if cred == "" {
		return nil, errors.New("the service needs a credential: set EDGEBLOOM_TOKEN (the secret, or a token: write to push, read to pull) or give --token-file FILE")
	}
	if o.parallel < 1 || o.parallel > 64 {
		return nil, fmt.Errorf("--parallel %d: it must be from 1 to 64", o.parallel)
	}
	return client.New(base, client.WithToken(cred), client.WithConcurrency(o.parallel),
		client.WithUserAgent("edgebloom-cli/"+client.DefaultUserAgent[strings.IndexByte(client.DefaultUserAgent, '/')+1:]))
}

// serviceError says what an error of the service means for the command.
func serviceError(err error) error {
	var ce *client.Error
	if errors.As(err, &ce) && ce.RequestID != "" {
		return fmt.Errorf("%w (request id %s)", err, ce.RequestID)
	}
	return err
}

// interruptible is a context that ends on SIGINT or SIGTERM, so that push
// and pull stop between requests and say where they got.
func interruptible() (context.Context, func()) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
