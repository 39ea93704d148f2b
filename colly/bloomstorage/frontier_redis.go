package bloomstorage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/edgebloom/edgebloom/redisfilter"
	"github.com/edgebloom/edgebloom/redisfilter/redisx"
	"github.com/redis/go-redis/v9"
)

// RedisLease is how long a process that runs a Redis frontier holds the
// requests it took without saying it is alive (it says so every third of
// it while it runs). The requests of a process silent for longer, killed
// say, go back to the frontier for the others, marked as they were: a
// killed collector's requests are made again at most RedisLease after it
// died, by whichever collector runs the frontier then. A process only
// paused for longer (SIGSTOP, a VM migration, a laptop lid) finds, when it
// carries on, that those requests are no longer its own: the outcome of
// each one it was making (fetched, to fetch again, given up) is dropped,
// with a line on the standard logger (package log), and the collector that
// took it over records its own.
const RedisLease = 5 * time.Second

// A redisFrontier keeps the frontier in Redis, shared by the collectors
// that use the same name: a list of waiting entries, a sorted set of those
// to fetch again (by due time), a list of failures, and a hash of the
// entries each process took (by a random owner ID), which a live process
// renews a lease on. Every change is one atomic command or script.
//
// The keys share one hash tag, so that a script's keys lie in one Redis
// Cluster slot: name's own tag when it has one, else "{name:frontier}".
type redisFrontier struct {
	ctx    context.Context
	c      redis.UniversalClient
	filter *redisfilter.Filter
	owner  string
	q      string // the waiting entries, a list
	later  string // the entries to fetch again, a sorted set by due time
	failed string // the failures, a list of JSON
	seq    string // the counter of taken entries
	owners string // the set of owners
	pre    string // taken:<owner> (hash), alive:<owner> (lease)

	mu      sync.Mutex
	beating chan struct{} // closed to stop the lease's renewal
}

func newRedisFrontier(ctx context.Context, c redis.UniversalClient, name string, f *redisfilter.Filter) (*redisFrontier, error) {
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	pre := "{" + name + ":frontier}"
	if redisx.HashTag(name) != "" {
		pre = name + ":frontier"
	}
	return &redisFrontier{
		ctx: ctx, c: c, filter: f, owner: hex.EncodeToString(id[:]),
		q: pre + ":q", later: pre + ":later", failed: pre + ":failed",
		seq: pre + ":seq", owners: pre + ":owners", pre: pre + ":",
	}, nil
}

func (r *redisFrontier) taken(owner string) string { return r.pre + "taken:" + owner }
func (r *redisFrontier) alive(owner string) string { return r.pre + "alive:" + owner }

func (r *redisFrontier) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("bloomstorage: frontier in Redis: %w", err)
}

func (r *redisFrontier) push(es []entry) error {
	vals := make([]any, len(es))
	for i, e := range es {
		vals[i] = []byte(e)
	}
	return r.wrap(r.c.RPush(r.ctx, r.q, vals...).Err())
}

type redisHandle struct {
	n string
	e entry
}

func (r *redisFrontier) take() (any, entry, bool, error) {
	r.heartbeat()
	v, err := redisx.Values(takeScript.Run(r.ctx, r.c, []string{r.q, r.seq, r.taken(r.owner), r.owners, r.alive(r.owner), r.later},
		r.owner, RedisLease.Milliseconds(), time.Now().UnixMilli()), 2)
	if errors.Is(err, redis.Nil) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, r.wrap(err)
	}
	n, err := redisx.Int(v[0])
	if err != nil {
		return nil, nil, false, r.wrap(err)
	}
	s, err := redisx.String(v[1])
	if err != nil {
		return nil, nil, false, r.wrap(err)
	}
	e := entry(s)
	if !e.valid() {
		return nil, nil, false, r.wrap(errors.New("an entry that is not one"))
	}
	return &redisHandle{strconv.FormatInt(n, 10), e}, e, true, nil
}

// own marks a new entry with a random claim in the owner's hash, then
// adds its ID to the filter under that claim in one atomic step
// (AddClaimed): killed at any point, the process leaves an entry marked
// with its claim, and whoever takes it after the lease asks AddClaimed
// with the same claim, which answers true only when the dead process's
// add made the ID new. An entry fetched again (stateRedo) is this
// frontier's already. An entry given back while this process did not renew
// its lease is another's: own returns errTakenOver, and neither marks it nor
// adds its ID.
func (r *redisFrontier) own(h any, e entry) (entry, bool, error) {
	rh := h.(*redisHandle)
	switch e.state() {
	case stateRedo:
		return e, true, nil
	case stateNew:
		k := string(key(e.id()))
		if visited, err := r.filter.Has(r.ctx, k); err != nil || visited {
			return e, false, err
		}
		var claim [16]byte
		if _, err := rand.Read(claim[:]); err != nil {
			return e, false, err
		}
		e = e.with(stateClaim, claim[:])
		if err := r.held(markScript.Run(r.ctx, r.c, []string{r.taken(r.owner)}, rh.n, []byte(e)).Int()); err != nil {
			return e, false, err
		}
		rh.e = e
		if testHookOwning != nil {
			testHookOwning(e.id())
		}
	}
	mine, err := r.filter.AddClaimed(r.ctx, string(key(e.id())), e.claim())
	return e, mine, err
}

// unclaim forgets the claim of an entry that left the frontier. A process
// killed before it does leaves a small key in Redis.
func (r *redisFrontier) unclaim(e entry) error {
	if e.state() != stateClaim {
		return nil
	}
	return r.filter.Unclaim(r.ctx, string(key(e.id())), e.claim())
}

// held turns the reply of a script or command that changes a taken entry
// only while the owner's hash holds it (1 or 0, see lua/mark.lua) into an
// error: errTakenOver for 0.
func (r *redisFrontier) held(n int, err error) error {
	switch {
	case err != nil:
		return r.wrap(err)
	case n == 0:
		return errTakenOver
	}
	return nil
}

// done, like again and fail, changes a taken entry's state only while the
// owner's hash holds it, and then forgets its claim. An entry given back
// meanwhile (this process did not renew its lease: paused, say) is
// another's, which may be making it under the same claim: they change
// nothing, keep the claim, and return errTakenOver.
func (r *redisFrontier) done(h any) error {
	rh := h.(*redisHandle)
	n, err := r.c.HDel(r.ctx, r.taken(r.owner), rh.n).Result()
	if err := r.held(int(n), err); err != nil {
		return err
	}
	return r.unclaim(rh.e)
}

func (r *redisFrontier) again(h any, e entry) error {
	rh := h.(*redisHandle)
	if err := r.held(againScript.Run(r.ctx, r.c, []string{r.taken(r.owner), r.later}, rh.n, e.due(), []byte(e)).Int()); err != nil {
		return err
	}
	return r.unclaim(rh.e)
}

func (r *redisFrontier) fail(h any, f Failure, e entry) error {
	rh := h.(*redisHandle)
	j, _ := json.Marshal(newFailureRecord(f, e)) // strings and numbers
	if err := r.held(failScript.Run(r.ctx, r.c, []string{r.taken(r.owner), r.failed}, rh.n, j).Int()); err != nil {
		return err
	}
	return r.unclaim(rh.e)
}

func (r *redisFrontier) retryFailures() (int, error) {
	n, err := retryFailuresScript.Run(r.ctx, r.c, []string{r.failed, r.q}).Int()
	return n, r.wrap(err)
}

func (r *redisFrontier) failures() ([]Failure, error) {
	all, err := r.c.LRange(r.ctx, r.failed, 0, -1).Result()
	if err != nil {
		return nil, r.wrap(err)
	}
	out := make([]Failure, len(all))
	for i, j := range all {
		var rec failureRecord
		if err := json.Unmarshal([]byte(j), &rec); err != nil {
			return nil, r.wrap(fmt.Errorf("failure %d: %w", i, err))
		}
		out[i] = rec.Failure
	}
	return out, nil
}

func (r *redisFrontier) release() error {
	r.mu.Lock()
	if r.beating != nil {
		close(r.beating)
		r.beating = nil
	}
	r.mu.Unlock()
	return r.wrap(releaseScript.Run(r.ctx, r.c, []string{r.q, r.taken(r.owner), r.alive(r.owner), r.owners}, r.owner).Err())
}

func (r *redisFrontier) size() (int, error) {
	var q, later *redis.IntCmd
	_, err := r.c.TxPipelined(r.ctx, func(p redis.Pipeliner) error {
		q, later = p.LLen(r.ctx, r.q), p.ZCard(r.ctx, r.later)
		return nil
	})
	if err != nil {
		return 0, r.wrap(err)
	}
	return int(q.Val() + later.Val()), nil
}

func (r *redisFrontier) busy() (bool, error) {
	n, err := busyScript.Run(r.ctx, r.c, []string{r.q, r.owners, r.later}, r.owner, r.pre).Int()
	return n > 0, r.wrap(err)
}

// heartbeat starts renewing the lease every third of RedisLease until
// release, if it is not renewed already.
func (r *redisFrontier) heartbeat() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.beating != nil {
		return
	}
	stop := make(chan struct{})
	r.beating = stop
	go func() {
		t := time.NewTicker(RedisLease / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				r.c.Set(r.ctx, r.alive(r.owner), "1", RedisLease)
			}
		}
	}()
}

func (r *redisFrontier) close() error { return r.release() }
