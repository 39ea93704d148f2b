package main

// push to the edge service: keys (--keys) through the client's Add, or a
// filter file through POST .../merge (service_merge.go), each resumable
// from its state file (pushstate.go).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/edgebloom/edgebloom/client"
)

// pushService runs push when its last argument is a service URL.
func pushService(e *env, args []string, name string, so *serviceOpts) (int, error) {
	inputs, target := args[:len(args)-1], args[len(args)-1]
	base, urlName, err := serviceTarget(target)
	if err != nil {
		return 2, err
	}
	if name == "" {
		name = urlName
	}
	if !so.keys {
		if len(inputs) != 1 || inputs[0] == "-" {
			return 2, fmt.Errorf("want FILE and URL (or --keys [INPUT...] URL), got %d arguments", len(args))
		}
		if name == "" {
			name = defaultName(inputs[0])
		}
	}
	if name == "" {
		return 2, errors.New("name the filter: --name N, or a URL ending in /v1/filters/N")
	}
	c, err := so.client(base)
	if err != nil {
		return 2, err
	}
	mode := "filter"
	if so.keys {
		mode = "keys"
	}
	statePath := so.state
	if statePath == "" {
		statePath = ".edgebloom-push-" + name + ".json"
	}
	st, err := resumeState(statePath, &pushState{Service: base, Filter: name, Mode: mode, Inputs: pushSources(inputs)}, so.restart)
	if err != nil {
		return 2, err
	}
	ctx, stop := interruptible()
	defer stop()
	start, resumed := time.Now(), st.Done
	if resumed > 0 {
		fmt.Fprintf(e.stderr, "edgebloom: push: resuming %s after %d %s (%s)\n", name, resumed, unit(mode), statePath)
	}
	var sent uint64
	if so.keys {
		sent, err = pushKeys(ctx, e, c, name, inputs, so, st, statePath)
	} else {
		sent, err = pushFilter(ctx, e, c, name, inputs[0], so, st, statePath)
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("interrupted; %d %s acknowledged are recorded in %s: run the same command again to resume", st.Done, unit(mode), statePath)
		} else if err = serviceError(err); st.Done > 0 {
			err = fmt.Errorf("%w; %d %s acknowledged are recorded in %s: run the same command again to resume", err, st.Done, unit(mode), statePath)
		}
		return 2, err
	}
	os.Remove(statePath)
	elapsed := time.Since(start)
	what := "new"
	if mode == "filter" {
		what = "bits set"
	}
	fmt.Fprintf(e.stderr, "edgebloom: push: %s at %s: %d keys in %s (%s keys/s), %d %s\n", name, base, sent,
		formatDuration(elapsed), si(float64(sent)/elapsed.Seconds()), st.New, what)
	return 0, nil
}

// pushKeys adds the inputs' keys, one a line, from the st.Done-th on, in
// rounds of parallel batches; after each round the state file records it.
func pushKeys(ctx context.Context, e *env, c *client.Client, name string, inputs []string, so *serviceOpts, st *pushState, statePath string) (uint64, error) {
	if so.capacity > 0 {
		if _, err := c.Create(ctx, name, client.Params{Capacity: uint64(so.capacity), ErrorRate: so.rate, Shards: so.shards, Canonicalize: so.canonical}); err != nil {
			return 0, fmt.Errorf("making %s: %w", name, err)
		}
	}
	src, err := newLineSource(inputs, e.stdin)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	for skipped := uint64(0); skipped < st.Done; skipped++ {
		key, err := src.next()
		if err != nil {
			return 0, err
		}
		if key == nil {
			return 0, fmt.Errorf("the inputs end after %d keys; the state file %s says %d were pushed: push with --restart", skipped, statePath, st.Done)
		}
	}
	prog := startProgressOf(e.stderr, "push", progressInterval(e, so), src, nil)
	defer prog.done()
	prog.keys.Store(st.Done)
	round := make([]string, 0, client.MaxKeysPerRequest*so.parallel)
	var sent uint64
	flush := func() error {
		if len(round) == 0 {
			return nil
		}
		added, err := c.Add(ctx, name, round...)
		if err != nil {
			if errors.Is(err, client.ErrNotFound) {
				err = fmt.Errorf("%w (make it with -n N [-p P] [--shards S], or PUT)", err)
			}
			return err
		}
		for _, a := range added {
			if a {
				st.New++
			}
		}
		st.Done += uint64(len(round))
		sent += uint64(len(round))
		prog.keys.Add(uint64(len(round)))
		round = round[:0]
		return st.save(statePath)
	}
	for {
		key, err := src.next()
		if err != nil {
			return sent, err
		}
		if key == nil {
			return sent, flush()
		}
		if len(key) > client.MaxKeyBytes {
			return sent, fmt.Errorf("%s: a key of %d bytes; the service takes at most %d", fmt.Sprintf("%s:%d", src.names[src.cur], src.line), len(key), client.MaxKeyBytes)
		}
		round = append(round, string(key))
		if len(round) == cap(round) {
			if err := flush(); err != nil {
				return sent, err
			}
		}
	}
}

// progressInterval is how often push reports: a bar on a terminal, lines
// only when --progress asks for them.
func progressInterval(e *env, so *serviceOpts) time.Duration {
	if isTerminal(e.stderr) {
		return ttyRedraw
	}
	return so.progress
}

// unit names what a push of mode counts in its state file.
func unit(mode string) string {
	if mode == "keys" {
		return "keys"
	}
	return "pieces"
}
