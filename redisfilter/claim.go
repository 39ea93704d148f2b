package redisfilter

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// AddClaimed adds key as Add does and, in the same atomic step, when key
// was new, records claim beside the key's bits: it reports true when this
// claim made key new, and again on every later call with the same key and
// claim until Unclaim. A process that records what it is about to do
// under a claim before it calls AddClaimed, and dies before it hears the
// answer, leaves the answer for whoever picks that work up: one more
// AddClaimed with the same claim tells whether the key was the claim's to
// act on (true) or another's (false). It also makes a retried call (a
// broken connection, see Failures in the package doc) answer as the first
// one did. A claim is a string of 1 to 128 bytes; each claim recorded
// takes a small key in Redis until Unclaim (Delete does not remove
// claims).
func (f *Filter) AddClaimed(ctx context.Context, key, claim string) (bool, error) {
	if err := checkClaim(claim); err != nil {
		return false, err
	}
	sh := f.shard(key)
	args := f.appendOffsets(f.scriptArgs(1), key)
	res, err := addScript.Run(ctx, f.c, append(f.scriptKeys(sh), f.claimKey(sh, claim)), args...).Int64Slice()
	if err != nil {
		return false, f.lost(ctx, f.wrap("add to", f.bits[sh], err))
	}
	if len(res) != 1 {
		return false, fmt.Errorf("redisfilter: add to %q: script answered %d values for 1 key", f.name, len(res))
	}
	return res[0] == 1, nil
}

// Unclaim forgets the claim that AddClaimed recorded for key; key stays
// in the filter. Unclaiming a claim never recorded does nothing.
func (f *Filter) Unclaim(ctx context.Context, key, claim string) error {
	if err := checkClaim(claim); err != nil {
		return err
	}
	sh := f.shard(key)
	k := f.claimKey(sh, claim)
	if err := f.c.Del(ctx, k).Err(); err != nil {
		return f.wrap("unclaim in", k, err)
	}
	return nil
}

func checkClaim(claim string) error {
	if len(claim) == 0 || len(claim) > 128 {
		return errors.New("redisfilter: claim: want 1 to 128 bytes")
	}
	return nil
}

// claimKey is the key of a claim on shard sh, in the slot of the shard's
// bits (it carries the hash tag of the shard's count).
func (f *Filter) claimKey(sh int, claim string) string {
	return strings.TrimSuffix(f.counts[sh], ":n") + ":claim:" + claim
}
