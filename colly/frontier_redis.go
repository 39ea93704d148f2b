package bloomstorage

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/edgebloom/edgebloom/redisfilter/redisx"
	"github.com/redis/go-redis/v9"
)

// RedisLease is how long a process that runs a Redis frontier holds the
// requests it took without saying it is alive (it says so every third of
// it while it runs). The requests of a process silent for longer, killed
// say, go back to the frontier for the others, marked as they were: a
// killed collector's requests are made again at most RedisLease after it
// died, by whichever collector runs the frontier then.
const RedisLease = 5 * time.Second

// A redisFrontier keeps the frontier in Redis, shared by the collectors
// that use the same name: a list of waiting entries, and a hash of the
// entries each process took (by a random owner ID), which a live process
// renews a lease on. Every change is one atomic command or script.
//
// The keys share one hash tag, so that a script's keys lie in one Redis
// Cluster slot: name's own tag when it has one, else "{name:frontier}".
type redisFrontier struct {
	ctx   context.Context
	c     redis.UniversalClient
	owner string
	q     string // the waiting entries, a list
	seq   string // the counter of taken entries
	own   string // the set of owners
	pre   string // taken:<owner> (hash), alive:<owner> (lease)

	mu      sync.Mutex
	beating chan struct{} // closed to stop the lease's renewal
}

func newRedisFrontier(ctx context.Context, c redis.UniversalClient, name string) (*redisFrontier, error) {
	var id [12]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	pre := "{" + name + ":frontier}"
	if redisx.HashTag(name) != "" {
		pre = name + ":frontier"
	}
	return &redisFrontier{
		ctx: ctx, c: c, owner: hex.EncodeToString(id[:]),
		q: pre + ":q", seq: pre + ":seq", own: pre + ":owners", pre: pre + ":",
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

// takeScript moves the head of the list into the owner's hash under a new
// number, registers the owner and renews its lease.
var takeScript = redis.NewScript(`
local e = redis.call('LPOP', KEYS[1])
if not e then return false end
local n = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[3], n, e)
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('SET', KEYS[5], '1', 'PX', ARGV[2])
return {n, e}
`)

type redisHandle struct {
	n string
	e entry
}

func (r *redisFrontier) take() (any, entry, bool, error) {
	r.heartbeat()
	v, err := takeScript.Run(r.ctx, r.c, []string{r.q, r.seq, r.taken(r.owner), r.own, r.alive(r.owner)},
		r.owner, RedisLease.Milliseconds()).Slice()
	if errors.Is(err, redis.Nil) {
		return nil, nil, false, nil
	}
	if err != nil {
		return nil, nil, false, r.wrap(err)
	}
	e := entry(v[1].(string))
	if !e.valid() {
		return nil, nil, false, r.wrap(errors.New("an entry that is not one"))
	}
	return redisHandle{strconv.FormatInt(v[0].(int64), 10), e}, e, true, nil
}

func (r *redisFrontier) redo(h any) error {
	rh := h.(redisHandle)
	rh.e[0] = stateRedo
	return r.wrap(r.c.HSet(r.ctx, r.taken(r.owner), rh.n, []byte(rh.e)).Err())
}

func (r *redisFrontier) done(h any) error {
	return r.wrap(r.c.HDel(r.ctx, r.taken(r.owner), h.(redisHandle).n).Err())
}

// giveBack puts an owner's taken entries back at the head of the list in
// the order they were taken, and forgets the owner. ARGV[2] = "1": only
// when its lease has run out.
var giveBack = `
local function giveBack(q, taken, alive, owners, owner)
  local all = redis.call('HGETALL', taken)
  local es = {}
  for i = 1, #all, 2 do es[#es + 1] = {tonumber(all[i]), all[i + 1]} end
  table.sort(es, function(a, b) return a[1] > b[1] end)
  for _, e in ipairs(es) do redis.call('LPUSH', q, e[2]) end
  redis.call('DEL', taken, alive)
  redis.call('SREM', owners, owner)
end
`

var releaseScript = redis.NewScript(giveBack + `
giveBack(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1])
return 1
`)

// busyScript gives back the entries of owners whose lease ran out, and
// returns the number of entries given back plus that of other owners
// that hold entries.
var busyScript = redis.NewScript(giveBack + `
local busy = 0
for _, o in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if o ~= ARGV[1] then
    local taken, alive = ARGV[2] .. 'taken:' .. o, ARGV[2] .. 'alive:' .. o
    if redis.call('EXISTS', alive) == 0 then
      busy = busy + redis.call('HLEN', taken)
      giveBack(KEYS[1], taken, alive, KEYS[2], o)
    elseif redis.call('HLEN', taken) > 0 then
      busy = busy + 1
    end
  end
end
return busy
`)

func (r *redisFrontier) release() error {
	r.mu.Lock()
	if r.beating != nil {
		close(r.beating)
		r.beating = nil
	}
	r.mu.Unlock()
	return r.wrap(releaseScript.Run(r.ctx, r.c, []string{r.q, r.taken(r.owner), r.alive(r.owner), r.own}, r.owner).Err())
}

func (r *redisFrontier) size() (int, error) {
	n, err := r.c.LLen(r.ctx, r.q).Result()
	return int(n), r.wrap(err)
}

func (r *redisFrontier) busy() (bool, error) {
	n, err := busyScript.Run(r.ctx, r.c, []string{r.q, r.own}, r.owner, r.pre).Int()
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
