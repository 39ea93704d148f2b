package redisfilter

// The errors a filter returns, and how Redis's replies become them.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/edgebloom/edgebloom/redisfilter/redisx"
	"github.com/redis/go-redis/v9"
)

// Errors. Each is wrapped with detail (the key, what was found); test with
// errors.Is.
var (
	// ErrNotFound means no filter of that name exists.
	ErrNotFound = errors.New("redisfilter: no filter of this name")
	// ErrMismatch means the name holds a filter with other parameters.
	ErrMismatch = errors.New("redisfilter: the name holds a filter with other parameters")
	// ErrNotFilter means a key of the filter holds something else: another
	// type, or a hash that is not a filter's parameters.
	ErrNotFilter = errors.New("redisfilter: key holds something that is not this filter")
	// ErrExists means Restore found the name taken, or New found keys of
	// the filter's shards holding data while the filter does not exist.
	ErrExists = errors.New("redisfilter: keys of the filter exist already")
	// ErrCorrupt means a shard has another length than its payload, or its
	// count is not a number or far more than its bits can have counted
	// (bloom.MaxCountPerBit), or its keys belong to different filters.
	ErrCorrupt = errors.New("redisfilter: shard damaged")
	// ErrLost means keys of the filter are gone: Redis restarted without
	// its data, evicted them (maxmemory), or they were deleted. The keys
	// the filter held are gone with them, so no call answers for it any
	// more; New makes a fresh filter under the name only when asked to
	// with Config.Recreate.
	ErrLost = errors.New("redisfilter: the filter's keys are gone from Redis")
	// ErrRecreated means the name now holds another filter, made after the
	// handle's filter was lost or deleted: the handle's keys are not in
	// it, and no call answers from it.
	ErrRecreated = errors.New("redisfilter: the name holds a newer filter")
)

// wrap adds the operation and key to an error from Redis, and maps a
// WRONGTYPE reply to ErrNotFilter and the scripts' EDGEBLOOM replies to
// ErrLost, ErrRecreated and ErrCorrupt.
func (f *Filter) wrap(op, key string, err error) error {
	if redisx.IsWrongType(err) {
		return fmt.Errorf("%w: %s %q: key %q holds another type (%v)", ErrNotFilter, op, f.name, key, err)
	}
	if redis.HasErrorPrefix(err, "EDGEBLOOM") {
		code, detail, _ := strings.Cut(strings.TrimPrefix(err.Error(), "EDGEBLOOM "), " ")
		base := ErrCorrupt
		switch code {
		case "LOST":
			base = ErrLost
		case "RECREATED":
			base = ErrRecreated
		}
		return fmt.Errorf("%w: %s %q: %s", base, op, f.name, detail)
	}
	return fmt.Errorf("redisfilter: %s %q: %w", op, f.name, err)
}

// lost refines an error wrapping ErrLost: when the name's parameters now
// hold another generation, the filter was not only lost but made anew, and
// the error wraps ErrRecreated.
func (f *Filter) lost(ctx context.Context, err error) error {
	if !errors.Is(err, ErrLost) {
		return err
	}
	if gen, gerr := f.c.HGet(ctx, f.name, "generation").Result(); gerr == nil && gen != f.gen {
		return fmt.Errorf("%w: %q was lost and made again (generation %s, this handle's %s); %v", ErrRecreated, f.name, gen, f.gen, err)
	}
	return err
}

// A lostError is the ErrLost of New when the name's parameters are gone
// and keys of its shards are left: gens holds the generation found at each
// shard ("" where none), so that deleteLost deletes only those.
type lostError struct {
	name string
	gens []string
}

func (e *lostError) Error() string {
	return fmt.Sprintf("%v: %q: its parameters are gone, keys of its shards are left; with Recreate, New or Restore deletes them and makes the filter anew", ErrLost, e.name)
}

func (e *lostError) Unwrap() error { return ErrLost }
