package main

// pull from the edge service: the filter's snapshot into FILE, and on every
// later run only what changed since (the client's Copy, FILE.cursor beside
// it); with --every, the same at an interval until interrupted.

import (
	"errors"
	"fmt"

	"github.com/edgebloom/edgebloom/client"
)

func pullService(e *env, args []string, name string, so *serviceOpts) (int, error) {
	base, urlName, err := serviceTarget(args[0])
	if err != nil {
		return 2, err
	}
	path := args[1]
	if name == "" {
		name = urlName
	}
	switch {
	case path == "-":
		return 2, errors.New("pull from the service writes a FILE it keeps in sync (FILE.cursor beside it), not stdout")
	case name == "":
		name = defaultName(path)
	}
	var mode client.SyncMode
	switch so.mode {
	case "changes":
		mode = client.Changes
	case "checkpoints":
		mode = client.Checkpoints
	default:
		return 2, fmt.Errorf("--mode %q: changes or checkpoints", so.mode)
	}
	c, err := so.client(base)
	if err != nil {
		return 2, err
	}
	cp, err := c.NewCopy(name, client.CopyOptions{Mode: mode, Path: path})
	if err != nil {
		return 2, err
	}
	ctx, stop := interruptible()
	defer stop()
	report := func(res client.SyncResult, err error) {
		if err != nil {
			fmt.Fprintf(e.stderr, "edgebloom: pull: %s: %v\n", name, serviceError(err))
			return
		}
		what := "unchanged"
		switch {
		case res.Snapshot && res.Resync != "":
			what = "snapshot (resync: " + res.Resync + ")"
		case res.Snapshot:
			what = "snapshot"
		case res.Changed:
			what = "delta"
		}
		fmt.Fprintf(e.stderr, "edgebloom: pull: %s -> %s: %s, %s, generation %d\n", name, path, what, bytesIEC(uint64(res.Bytes)), res.Generation)
	}
	if so.every <= 0 {
		res, err := cp.Sync(ctx)
		if err != nil {
			return 2, serviceError(err)
		}
		report(res, nil)
		return 0, nil
	}
	err = cp.Run(ctx, so.every, report)
	if err != nil && ctx.Err() == nil {
		return 2, serviceError(err)
	}
	return 0, nil
}
