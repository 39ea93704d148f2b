//go:build !(js && wasm)

package main

import (
	"context"
	"time"
)

// On the host, the front is served by net/http: there is no bridge to JS.

// pause waits d; it fails when ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}

// bridgeCounts reports no exchanges and no answers awaited: nothing
// crosses a bridge on the host.
func bridgeCounts() (exchanges, asks int) { return 0, 0 }

// askNothing waits, for the test hook, until ctx ends.
func askNothing(ctx context.Context) error {
	<-ctx.Done()
	return context.Cause(ctx)
}
