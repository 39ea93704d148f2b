// Package redisfilter keeps a classic edgebloom Bloom filter in Redis, so
// that a fleet of processes (crawlers asking "already crawled?") shares one
// set of keys with the answers, the hashing and the bytes of package bloom.
//
// A filter named N is a small hash at key N holding its parameters (so every
// process that opens N gets the same m, k and seed) and its generation, and
// its bits in one or more Redis strings, the shards N:0, N:1, … Redis strings hold at most
// 2^32 bits (512 MiB), so a filter larger than that is split into shards,
// and every key's bits lie in the one shard its hash picks: the routing of
// the edge service's Durable Object shards (package snapshot).
//
//	f, err := redisfilter.New(ctx, client, "crawl", 100_000_000, 0.01)
//	isNew, err := f.Add(ctx, "https://example.com/")   // one round trip, atomic
//	seen, err := f.HasMany(ctx, urls)                   // pipelined
//
// # Bits and bytes
//
// Bit i of a shard is bit i%8, counted from the least significant, of byte
// i/8 of its Redis string, which is the payload of the portable format
// (docs/format.md): GET of a shard is exactly the filter's payload. Redis
// numbers the bits of a string from the most significant bit of byte 0, so
// bit i is Redis offset i^7 (SETBIT, GETBIT, BITFIELD). A shard is made at
// its full length, 8·ceil(m/64) bytes, when the filter is made, and every
// call checks that length first: a shard that was deleted, evicted
// (maxmemory) or lost gives an error wrapping ErrLost, never answers of
// "absent" from the zeros Redis reads for a missing key. (New and Open wait
// up to 2 s for shards that another process is still making.) Snapshot
// writes the filter that bloom.Decode (one shard) or snapshot.Load (several)
// reads, byte for byte equal to what a bloom.Filter, or a sharded set of
// them, given the same keys would write; Restore loads such a file into
// Redis.
//
// # Generations: a lost filter is never answered for
//
// Each filter gets a random 128-bit generation when it is made (New,
// Restore), stored with its parameters and beside every shard, and every
// script checks it before it reads or sets a bit. A handle whose filter's
// keys are gone gets ErrLost, and one whose name now holds a filter made
// since gets ErrRecreated: never an answer from another filter, even one
// with the same parameters. New does not make a filter anew over a lost one
// (its parameters left, or keys of its shards): it returns ErrLost unless
// Config.Recreate asks for that. A Redis that lost every key (restarted
// without persistence) cannot tell a lost filter from a name never used,
// so New then makes a fresh filter: handles on the old one get
// ErrRecreated. Where that matters, processes that join a filter call
// Open, which returns ErrNotFound, and one process makes it. Eviction is a
// loss too: give Redis a maxmemory-policy that never evicts the filter's
// keys (noeviction, or volatile-* with no TTL on them).
//
// # Atomicity and round trips
//
// Add tests and adds one key in one round trip: a Lua script sets the k bits
// and reports whether any of them was 0, and counts the key when it was new.
// The script checks everything that could fail (generation, length, count)
// before it sets the first bit, so an add never stops half-way with bits
// set and the key not counted; counts are bounded by bloom.MaxCountPerBit·m,
// as in the decoders, so a pulled snapshot always decodes.
// Scripts run atomically, so of two processes adding the same key at the same
// moment exactly one hears that it was new. Has reads the k bits with a
// read-only script, also one round trip. AddMany and HasMany send their keys
// in pipelined batches: one script call per shard and 1 000 keys, one round
// trip per 16 384 keys. Scripts are sent by their SHA-1 (EVALSHA), and sent
// again whole when Redis lost them (a restart).
//
// # Clients, Cluster and hash tags
//
// Any redis.UniversalClient works: one node, Sentinel (a failover client) or
// Cluster. Each shard's count and generation live beside its bits under the
// keys {N:i}:n and {N:i}:g, which Cluster places in the slot of N:i, so a
// script touches one slot. Shards carry no common hash tag, so Cluster spreads them over its
// nodes. To keep every key of a filter in one slot instead (for MULTI, or a
// node of its own), give the filter a name with a hash tag: "{crawl}" makes
// the keys {crawl}, {crawl}:0, {crawl}:0:n, {crawl}:0:g, …
//
// # Failures
//
// Every call that reaches Redis returns an error wrapping the cause (a
// network error, a Redis error reply, the context's error) when it fails,
// and then its answer is meaningless: a Has that fails never looks like a
// "false", it returns an error. go-redis retries a command whose connection
// broke (MaxRetries, 3 by default). A retried Add whose first run did reach
// Redis then reports the key as not new, so that no process hears "new" for
// it. Where every new key must be heard exactly once even across connection
// failures, set MaxRetries to -1 and handle the errors, which then report
// the broken connection instead. Durability is Redis's: with appendonly yes
// and appendfsync always, an Add that returned without error survives a
// crash of the server.
package redisfilter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/snapshot"
	"github.com/redis/go-redis/v9"
)

// Limits of a filter in Redis.
const (
	// MaxShardBits is the largest number of bits in one shard: Redis
	// strings hold at most 512 MiB, and SETBIT's largest offset is
	// 2^32 - 1.
	MaxShardBits = 1 << 32
	// MaxShards is the largest number of shards, that of the sharded
	// snapshot container.
	MaxShards = snapshot.MaxShards
	// MaxNameLen is the longest name, in bytes.
	MaxNameLen = 1024
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

// A Config describes a filter for NewWithConfig.
type Config struct {
	// Capacity is the number of keys the filter is made for, at least 1.
	Capacity uint64
	// FPRate is the target false-positive rate, in (0, 1).
	FPRate float64
	// Shards is the number of shards, at most MaxShards. 0 chooses the
	// fewest shards whose bits fit MaxShardBits each. More shards spread a
	// filter over the nodes of a Cluster.
	Shards int
	// Seed is the hash seed of the shards' filters, 0 by default as for
	// bloom.New. The routing hash has its own fixed seed.
	Seed uint64
	// Recreate lets New make a fresh, empty filter under a name whose
	// filter was lost (ErrLost: some of its keys are gone), after deleting
	// what is left of it. Handles on the lost filter then get
	// ErrRecreated. Without it, New of a lost filter returns ErrLost, so
	// that a fleet does not silently start over with an empty filter.
	Recreate bool

	_ struct{}
}

// params are what the hash at the filter's name holds. Every shard is a
// classic filter with these parameters, as in the edge service: a filter
// made for n keys with s shards has shards made for ceil(n/s) keys each.
type params struct {
	shards   int
	m        uint64  // bits a shard
	k        uint32  // hash functions
	seed     uint64  // hash seed of the shards
	capacity uint64  // keys a shard, 0 for an explicit size
	fpRate   float64 // target rate of each shard, 0 for an explicit size
}

// The fields of the parameter hash. "edgebloom" marks the hash as a
// filter's and gives the version of this layout; version 2 added the
// generation.
const layoutVersion = "2"

// fields are the parameter hash's fields, with the filter's generation.
func (p *params) fields(gen string) []any {
	return []any{
		"edgebloom", layoutVersion,
		"generation", gen,
		"shards", strconv.Itoa(p.shards),
		"bits", strconv.FormatUint(p.m, 10),
		"hashes", strconv.FormatUint(uint64(p.k), 10),
		"seed", strconv.FormatUint(p.seed, 10),
		"capacity", strconv.FormatUint(p.capacity, 10),
		"fpRate", strconv.FormatFloat(p.fpRate, 'g', -1, 64),
	}
}

// parseParams reads and validates the parameter hash's fields, and returns
// the parameters and the generation.
func parseParams(h map[string]string) (params, string, error) {
	var p params
	switch v := h["edgebloom"]; {
	case v == "1":
		return p, "", errors.New(`layout 1, made before filters had generations: pull it with the redisfilter that made it, delete it, and push it again`)
	case v != layoutVersion:
		return p, "", errors.New(`no "edgebloom" field of version ` + layoutVersion)
	case len(h) != 8:
		return p, "", fmt.Errorf("%d fields, want 8", len(h))
	case !validGeneration(h["generation"]):
		return p, "", fmt.Errorf("field \"generation\": %q is not a generation", h["generation"])
	}
	var errs []error
	num := func(field string, bits int) uint64 {
		v, err := strconv.ParseUint(h[field], 10, bits)
		if err != nil {
			errs = append(errs, fmt.Errorf("field %q: %q is no number", field, h[field]))
		}
		return v
	}
	p.shards = int(num("shards", 32))
	p.m = num("bits", 64)
	p.k = uint32(num("hashes", 32))
	p.seed = num("seed", 64)
	p.capacity = num("capacity", 64)
	rate, err := strconv.ParseFloat(h["fpRate"], 64)
	if err != nil {
		errs = append(errs, fmt.Errorf("field \"fpRate\": %q is no number", h["fpRate"]))
	}
	p.fpRate = rate
	if len(errs) > 0 {
		return p, "", errors.Join(errs...)
	}
	return p, h["generation"], p.check()
}

// newGeneration returns a fresh random generation: 128 bits in hex.
func newGeneration() string {
	var b [16]byte
	rand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}

func validGeneration(g string) bool {
	_, err := hex.DecodeString(g)
	return len(g) == 32 && err == nil
}

// check validates parameters, from a user or from Redis.
func (p *params) check() error {
	switch {
	case p.shards < 1 || p.shards > MaxShards:
		return fmt.Errorf("shards: %d is not in [1, %d]", p.shards, MaxShards)
	case p.m < 1 || p.m > MaxShardBits:
		return fmt.Errorf("bits: %d a shard is not in [1, 2^32]", p.m)
	case p.k < 1 || p.k > bloom.MaxHashes:
		return fmt.Errorf("hashes: %d is not in [1, %d]", p.k, bloom.MaxHashes)
	case !(p.fpRate >= 0 && p.fpRate < 1) || (p.fpRate == 0) != (p.capacity == 0):
		return errors.New("capacity and fpRate: a rate in (0, 1) with a capacity, or both 0")
	}
	return nil
}

// A Filter is a handle on a filter in Redis. It is safe for concurrent use
// by many goroutines, as its client is; any number of processes may use the
// same filter at once.
type Filter struct {
	c      redis.UniversalClient
	name   string
	p      params
	gen    string        // the filter's generation
	router *bloom.Filter // nil with one shard
	bits   []string      // shard i's string
	counts []string      // shard i's count of new keys
	gens   []string      // shard i's generation
	loaded atomic.Bool   // the scripts are known to be loaded
	batch  int
}

// New opens the filter called name, making it when it does not exist yet,
// for capacity keys at false-positive rate fpRate, in as few shards as keep
// each at most MaxShardBits bits. It is NewWithConfig with only Capacity and
// FPRate set; see there.
func New(ctx context.Context, c redis.UniversalClient, name string, capacity uint64, fpRate float64) (*Filter, error) {
	return NewWithConfig(ctx, c, name, Config{Capacity: capacity, FPRate: fpRate})
}

// NewWithConfig opens the filter called name, making it when it does not
// exist yet. When it exists with the parameters cfg gives, it is opened as
// Open does, so every process of a fleet may call NewWithConfig with the
// same arguments; with other parameters the error wraps ErrMismatch. A name
// that holds something else (a list, a foreign hash) gives ErrNotFilter,
// shard keys that hold data while the filter does not exist give ErrExists,
// and nothing is written in either case.
//
// Each shard is sized by bloom.Optimal for ceil(Capacity/Shards) keys at
// FPRate, as the edge service sizes its shards. Arguments out of range give
// an error naming them before Redis is asked anything.
func NewWithConfig(ctx context.Context, c redis.UniversalClient, name string, cfg Config) (*Filter, error) {
	p, err := sized(cfg)
	if err == nil {
		err = checkName(name)
	}
	if err != nil {
		return nil, err
	}
	f := newFilter(c, name, p)
	for range 3 {
		f.gen = newGeneration()
		if err := f.checkFree(ctx, false); err != nil {
			var lost *lostError
			if !cfg.Recreate || !errors.As(err, &lost) {
				return nil, err
			}
			if err := f.deleteLost(ctx, "", lost.gens); err != nil {
				return nil, err
			}
			continue
		}
		created, err := f.create(ctx) // on a filter made already, sets f.gen to its generation
		if err != nil {
			return nil, err
		}
		if created {
			if err := f.allocate(ctx); err != nil {
				return nil, err
			}
		}
		err = f.checkShards(ctx)
		if err == nil {
			return f, nil
		}
		if !cfg.Recreate || !errors.Is(err, ErrLost) {
			return nil, err
		}
		if err := f.deleteLost(ctx, f.gen, nil); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%w: %q was lost again while it was being made anew", ErrLost, name)
}

// sized chooses the parameters of a new filter.
func sized(cfg Config) (params, error) {
	if cfg.Shards < 0 || cfg.Shards > MaxShards {
		return params{}, fmt.Errorf("redisfilter: invalid Shards: must be in [0, %d], got %d", MaxShards, cfg.Shards)
	}
	if _, _, err := bloom.Optimal(cfg.Capacity, cfg.FPRate); err != nil {
		// Refuses capacity 0 and rates outside (0, 1); more bits than
		// bloom.MaxBits are fine here, split into shards.
		var ae *bloom.ArgError
		if !errors.As(err, &ae) || ae.Arg != "capacity" || cfg.Capacity == 0 {
			return params{}, fmt.Errorf("redisfilter: %w", err)
		}
	}
	s := max(cfg.Shards, 1)
	for {
		per := (cfg.Capacity-1)/uint64(s) + 1
		m, k, err := bloom.Optimal(per, cfg.FPRate)
		if err == nil && m <= MaxShardBits {
			return params{shards: s, m: m, k: k, seed: cfg.Seed, capacity: per, fpRate: cfg.FPRate}, nil
		}
		var ae *bloom.ArgError
		switch {
		case err != nil && (!errors.As(err, &ae) || ae.Arg != "capacity"):
			return params{}, fmt.Errorf("redisfilter: %w", err)
		case cfg.Shards != 0:
			return params{}, fmt.Errorf("redisfilter: invalid Shards: %d shards of %d keys need more than 2^32 bits each", s, per)
		case s >= MaxShards:
			return params{}, fmt.Errorf("redisfilter: invalid Capacity: needs more than %d shards of 2^32 bits", MaxShards)
		}
		// Grow by the ratio of bits needed to bits allowed, at least one.
		need := float64(per) * -math.Log(cfg.FPRate) / (math.Ln2 * math.Ln2)
		s = min(MaxShards, max(s+1, int(math.Ceil(float64(s)*need/MaxShardBits))))
	}
}

// checkName refuses names that would not make a filter: empty, too long, or
// with a "}" outside a hash tag (Redis would then place the key of a shard's
// count in another Cluster slot than its bits).
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("redisfilter: invalid name: empty")
	case len(name) > MaxNameLen:
		return fmt.Errorf("redisfilter: invalid name: longer than %d bytes", MaxNameLen)
	case strings.Contains(name, "}") && hashTag(name) == "":
		return errors.New(`redisfilter: invalid name: a "}" must close a hash tag such as "{crawl}"`)
	}
	return nil
}

// hashTag returns the hash tag of a key as Redis Cluster finds it: what lies
// between the first "{" and the first "}" after it, when that is not empty.
func hashTag(key string) string {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(key[i+1:], '}')
	if j <= 0 {
		return ""
	}
	return key[i+1 : i+1+j]
}

func newFilter(c redis.UniversalClient, name string, p params) *Filter {
	f := &Filter{c: c, name: name, p: p, batch: 1000}
	if p.shards > 1 {
		f.router = snapshot.Router(p.shards)
	}
	f.bits = make([]string, p.shards)
	f.counts = make([]string, p.shards)
	f.gens = make([]string, p.shards)
	for i := range f.bits {
		f.bits[i] = name + ":" + strconv.Itoa(i)
		// The count shares the slot of the bits: through the name's hash
		// tag when it has one, else through a tag that is the bits' key.
		if hashTag(name) != "" {
			f.counts[i] = f.bits[i] + ":n"
			f.gens[i] = f.bits[i] + ":g"
		} else {
			f.counts[i] = "{" + f.bits[i] + "}:n"
			f.gens[i] = "{" + f.bits[i] + "}:g"
		}
	}
	return f
}

// Open opens the filter called name, which must exist: its error wraps
// ErrNotFound when it does not, and ErrNotFilter when the name holds
// something else.
func Open(ctx context.Context, c redis.UniversalClient, name string) (*Filter, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	h, err := c.HGetAll(ctx, name).Result()
	if err != nil {
		return nil, (&Filter{name: name}).wrap("open", name, err)
	}
	if len(h) == 0 {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	p, gen, err := parseParams(h)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrNotFilter, name, err)
	}
	f := newFilter(c, name, p)
	f.gen = gen
	if err := f.checkShards(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// wrap adds the operation and key to an error from Redis, and maps a
// WRONGTYPE reply to ErrNotFilter and the scripts' EDGEBLOOM replies to
// ErrLost, ErrRecreated and ErrCorrupt.
func (f *Filter) wrap(op, key string, err error) error {
	if isWrongType(err) {
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

func isWrongType(err error) bool {
	return err != nil && strings.Contains(err.Error(), "WRONGTYPE")
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

// checkFree refuses to make a filter over keys that hold data: any of its
// keys when all is true (Restore), else its shards' keys while its
// parameters are absent (New; when they exist, create compares them).
// Shard keys with a generation are what is left of a lost filter: the
// error is then a *lostError.
func (f *Filter) checkFree(ctx context.Context, all bool) error {
	keys := f.Keys()
	types := make([]*redis.StatusCmd, len(keys))
	gens := make([]*redis.StringCmd, len(f.gens))
	_, _ = f.c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i, key := range keys {
			types[i] = pipe.Type(ctx, key)
		}
		for i, key := range f.gens {
			gens[i] = pipe.Get(ctx, key)
		}
		return nil
	})
	var taken error
	for i, t := range types {
		switch {
		case t.Err() != nil:
			return f.wrap("check the keys of", keys[i], t.Err())
		case t.Val() == "none":
		case i == 0 && !all:
			return nil
		case i == 0:
			return fmt.Errorf("%w: %q exists (a %s); delete it first", ErrExists, f.name, t.Val())
		case taken == nil:
			taken = fmt.Errorf("%w: %q does not exist, but its key %q holds a %s", ErrExists, f.name, keys[i], t.Val())
		}
	}
	if taken == nil {
		return nil
	}
	lost := &lostError{name: f.name, gens: make([]string, len(gens))}
	found := false
	for i, g := range gens {
		v, err := g.Result()
		if err == nil && validGeneration(v) {
			lost.gens[i], found = v, true
		}
	}
	if found && !all {
		return lost
	}
	return taken
}

// createScript writes the parameter hash when the key is free, atomically,
// and returns 1; when it exists it returns its fields (HGETALL), or the
// WRONGTYPE error when the key holds another type.
var createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
	redis.call('HSET', KEYS[1], unpack(ARGV))
	return 1
end
return redis.call('HGETALL', KEYS[1])
`)

// create writes f's parameters and generation unless the name holds a
// filter already, and checks that one's parameters against f's: when they
// match, f takes its generation. It reports whether it wrote them.
func (f *Filter) create(ctx context.Context) (bool, error) {
	res, err := createScript.Run(ctx, f.c, []string{f.name}, f.p.fields(f.gen)...).Result()
	if err != nil {
		return false, f.wrap("create", f.name, err)
	}
	fields, ok := res.([]any)
	if !ok {
		return true, nil
	}
	h := make(map[string]string, len(fields)/2)
	for i := 0; i+1 < len(fields); i += 2 {
		k, _ := fields[i].(string)
		v, _ := fields[i+1].(string)
		h[k] = v
	}
	p, gen, err := parseParams(h)
	if err != nil {
		return false, fmt.Errorf("%w: %q: %v", ErrNotFilter, f.name, err)
	}
	if p != f.p {
		return false, fmt.Errorf("%w: %q has %s; asked for %s", ErrMismatch, f.name, p.String(), f.p.String())
	}
	f.gen = gen
	return false, nil
}

// allocScript makes a shard at its full length, ARGV[1] bytes of zeros,
// and its generation, ARGV[2], together, unless the shard exists: a second
// maker must not clear the last byte. KEYS are the bits and the
// generation.
var allocScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('EXISTS', KEYS[2]) == 0 then
	redis.call('SETRANGE', KEYS[1], tonumber(ARGV[1]) - 1, '\0')
	redis.call('SET', KEYS[2], ARGV[2])
end
return redis.call('STRLEN', KEYS[1])
`)

// allocate makes the shards of a filter just created at their full length.
func (f *Filter) allocate(ctx context.Context) error {
	cmds := make([]*redis.Cmd, len(f.bits))
	_, _ = f.c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i := range f.bits {
			cmds[i] = allocScript.Eval(ctx, pipe, []string{f.bits[i], f.gens[i]}, f.payloadLen(), f.gen)
		}
		return nil
	})
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			return f.wrap("make", f.bits[i], err)
		}
	}
	return nil
}

// delShardScript deletes a shard's keys (bits, generation, count) when its
// generation is ARGV[1], or absent: what is left of a lost filter, and
// never the shard of a filter made since.
var delShardScript = redis.NewScript(`
local gen = redis.call('GET', KEYS[2])
if gen and gen ~= ARGV[1] then
	return 0
end
return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
`)

// delParamsScript deletes the parameter hash when its generation is
// ARGV[1].
var delParamsScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'generation') == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0
`)

// deleteLost deletes what is left of a lost filter: the keys of shard i
// when its generation is gens[i] (gen when gens is nil) or absent, then the
// parameters when their generation is gen. Keys of a filter made since,
// with another generation, stay.
func (f *Filter) deleteLost(ctx context.Context, gen string, gens []string) error {
	for i := range f.bits {
		want := gen
		if gens != nil {
			want = gens[i]
		}
		if err := delShardScript.Run(ctx, f.c, []string{f.bits[i], f.gens[i], f.counts[i]}, want).Err(); err != nil {
			return f.wrap("delete the lost", f.bits[i], err)
		}
	}
	if gen == "" {
		return nil
	}
	if err := delParamsScript.Run(ctx, f.c, []string{f.name}, gen).Err(); err != nil {
		return f.wrap("delete the lost", f.name, err)
	}
	return nil
}

// shardWait is how long New and Open wait for shards that are missing: the
// process that made the filter may be making them.
const shardWait = 2 * time.Second

// checkShards checks that every shard is a string of its payload's length
// with f's generation, waiting up to shardWait for missing ones.
func (f *Filter) checkShards(ctx context.Context) error {
	deadline := time.Now().Add(shardWait)
	for {
		lens := make([]*redis.IntCmd, len(f.bits))
		gens := make([]*redis.StringCmd, len(f.bits))
		_, _ = f.c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for i := range f.bits {
				lens[i] = pipe.StrLen(ctx, f.bits[i])
				gens[i] = pipe.Get(ctx, f.gens[i])
			}
			return nil
		})
		missing := -1
		for i := range f.bits {
			n, err := lens[i].Result()
			if err != nil {
				return f.wrap("check", f.bits[i], err)
			}
			gen, err := gens[i].Result()
			if err != nil && err != redis.Nil {
				return f.wrap("check", f.gens[i], err)
			}
			switch {
			case n == 0 || err == redis.Nil:
				if missing < 0 {
					missing = i
				}
			case gen != f.gen:
				return fmt.Errorf("%w: shard %q of %q belongs to another filter (generation %s, want %s)", ErrCorrupt, f.bits[i], f.name, gen, f.gen)
			case uint64(n) != f.payloadLen():
				return fmt.Errorf("%w: %q is %d bytes, want %d", ErrCorrupt, f.bits[i], n, f.payloadLen())
			}
		}
		if missing < 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: shard %q of %q is missing (Redis restarted without its data, or evicted or deleted it); with Recreate, New or Restore makes the filter anew", ErrLost, f.bits[missing], f.name)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisfilter: open %q: %w", f.name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (p params) String() string {
	s := fmt.Sprintf("%d shard(s) of m=%d k=%d seed=%d", p.shards, p.m, p.k, p.seed)
	if p.capacity > 0 {
		s += fmt.Sprintf(" (%d keys at %g)", p.capacity, p.fpRate)
	}
	return s
}

// Name returns the filter's name, the key of its parameters.
func (f *Filter) Name() string { return f.name }

// Shards returns the number of shards.
func (f *Filter) Shards() int { return f.p.shards }

// ShardBits returns m, the number of bits of each shard.
func (f *Filter) ShardBits() uint64 { return f.p.m }

// NumBits returns the number of bits of all shards together.
func (f *Filter) NumBits() uint64 { return f.p.m * uint64(f.p.shards) }

// NumHashes returns k, the number of hash functions.
func (f *Filter) NumHashes() uint32 { return f.p.k }

// Seed returns the hash seed of the shards.
func (f *Filter) Seed() uint64 { return f.p.seed }

// Capacity returns the number of keys the filter was made for (the shards'
// capacity times their number), or 0 when it was restored from a filter of
// explicit size.
func (f *Filter) Capacity() uint64 { return f.p.capacity * uint64(f.p.shards) }

// TargetFPR returns the false-positive rate the filter was made for, or 0
// when it was restored from a filter of explicit size.
func (f *Filter) TargetFPR() float64 { return f.p.fpRate }

// Keys returns the Redis keys of the filter: its parameters, then the bits,
// the count and the generation of each shard.
func (f *Filter) Keys() []string {
	keys := []string{f.name}
	for i := range f.bits {
		keys = append(keys, f.bits[i], f.counts[i], f.gens[i])
	}
	return keys
}

// shard returns the shard of key.
func (f *Filter) shard(key string) int {
	if f.router == nil {
		return 0
	}
	return snapshot.Route(f.router, key)
}

// appendOffsets appends the Redis offsets of key's k bits in its shard.
func (f *Filter) appendOffsets(dst []any, key string) []any {
	var pos [bloom.MaxHashes]uint64
	for _, i := range bloom.AppendLocations(pos[:0], []byte(key), f.p.m, f.p.k, f.p.seed) {
		// Bit i of the format is bit i%8 from the least significant of
		// byte i/8; Redis counts from the most significant.
		dst = append(dst, i^7)
	}
	return dst
}

// The scripts check first that the shard belongs to the handle's filter:
// its generation, KEYS[2], is ARGV[3] (a shard whose generation is gone was
// lost; one with another generation belongs to a filter made since), and
// its bits, KEYS[1], are a string of the full length, ARGV[1] bytes, so
// that a missing shard is an error and not a row of zeros. ARGV[2] is k,
// ARGV[4] the largest count the shard may hold (bloom.MaxCountPerBit·m);
// then come the k offsets of each key, from ARGV[5].
const checkShard = `
local gen = redis.call('GET', KEYS[2])
if gen ~= ARGV[3] then
	if not gen then
		return redis.error_reply('EDGEBLOOM LOST shard ' .. KEYS[1] .. ' has lost its generation (Redis restarted without its data, or evicted or deleted it)')
	end
	return redis.error_reply('EDGEBLOOM RECREATED shard ' .. KEYS[1] .. ' belongs to a filter made since (generation ' .. gen .. ', want ' .. ARGV[3] .. ')')
end
local size = redis.call('STRLEN', KEYS[1])
if size ~= tonumber(ARGV[1]) then
	if size == 0 then
		return redis.error_reply('EDGEBLOOM LOST shard ' .. KEYS[1] .. ' is missing (Redis restarted without its data, or evicted or deleted it)')
	end
	return redis.error_reply('EDGEBLOOM CORRUPT shard ' .. KEYS[1] .. ' is ' .. size .. ' bytes, want ' .. ARGV[1])
end
local k = tonumber(ARGV[2])
local n = (#ARGV - 4) / k
local out = {}
`

// addScript sets the bits of keys in one shard. It returns, for each key, 1
// when one of its bits was 0, and adds the number of such keys to the
// shard's count, KEYS[3]. A script runs atomically: of concurrent adds of
// one key, exactly one finds a 0. The count is checked before any bit is
// set: a count that is not a number, or that this call could take past
// ARGV[4], is an error that changes nothing, so INCRBY, last, cannot fail
// and an add never stops half-way. (Each key counted sets a bit, so a
// count within bounds stays within them: restored counts are at most
// (bloom.MaxCountPerBit-1)·m.) With a fourth key, a claim of the one key
// added (see AddClaimed), the script sets it when the key was new and
// answers 1 whenever it is set.
var addScript = redis.NewScript(checkShard + `
local count = redis.call('GET', KEYS[3])
if count then
	local max = tonumber(ARGV[4])
	if not string.match(count, '^%d+$') or #count > 15 or tonumber(count) + math.min(n, max) > max then
		return redis.error_reply('EDGEBLOOM CORRUPT count ' .. KEYS[3] .. ' is ' .. string.sub(count, 1, 40) .. ', more than the bits can hold or not a number')
	end
end
local added = 0
local j = 5
for i = 1, n do
	local new = 0
	for _ = 1, k do
		if redis.call('SETBIT', KEYS[1], ARGV[j], 1) == 0 then new = 1 end
		j = j + 1
	end
	out[i] = new
	added = added + new
end
if added > 0 then redis.call('INCRBY', KEYS[3], added) end
if KEYS[4] then
	if added > 0 then redis.call('SET', KEYS[4], '1') end
	out[1] = redis.call('EXISTS', KEYS[4])
end
return out
`)

// hasScript reads the bits of keys in one shard and returns, for each key,
// 1 when all of its bits are set.
var hasScript = redis.NewScript(checkShard + `
local j = 5
for i = 1, n do
	local has = 1
	for m = 0, k - 1 do
		if redis.call('GETBIT', KEYS[1], ARGV[j + m]) == 0 then
			has = 0
			break
		end
	end
	out[i] = has
	j = j + k
end
return out
`)

// statScript returns the count of a shard, KEYS[3], and with ARGV[5] = 1
// the number of its bits set, after checking that the shard is the
// handle's.
var statScript = redis.NewScript(checkShard + `
local bits = 0
if ARGV[5] == '1' then bits = redis.call('BITCOUNT', KEYS[1]) end
return {redis.call('GET', KEYS[3]) or '0', bits}
`)

// Add adds key and reports whether it was new, that is whether at least one
// of its bits was unset, in one round trip. Of concurrent Adds of one key,
// from any number of processes, exactly one reports it new (but see
// Failures in the package doc about retries). A false return for a key
// never added before is a false positive. Strings are hashed as their UTF-8
// bytes, as bloom.Filter.AddString hashes them.
func (f *Filter) Add(ctx context.Context, key string) (bool, error) {
	return f.one(ctx, addScript, "add to", key)
}

// Has reports whether key is probably in the filter, in one round trip. It
// never reports false for a key that was added; it may report true for one
// that was not.
func (f *Filter) Has(ctx context.Context, key string) (bool, error) {
	return f.one(ctx, hasScript, "check", key)
}

func (f *Filter) one(ctx context.Context, s *redis.Script, op, key string) (bool, error) {
	sh := f.shard(key)
	args := f.appendOffsets(f.scriptArgs(1), key)
	res, err := s.Run(ctx, f.c, f.scriptKeys(sh), args...).Int64Slice()
	if err != nil {
		return false, f.lost(ctx, f.wrap(op, f.bits[sh], err))
	}
	if len(res) != 1 {
		return false, fmt.Errorf("redisfilter: %s %q: script answered %d values for 1 key", op, f.name, len(res))
	}
	return res[0] == 1, nil
}

// scriptArgs starts the arguments of a script call for n keys (see
// checkShard).
func (f *Filter) scriptArgs(n int) []any {
	return append(make([]any, 0, 4+n*int(f.p.k)), f.payloadLen(), f.p.k, f.gen, f.maxCount())
}

// maxCount is the largest count a shard may hold, that of the decoders.
func (f *Filter) maxCount() uint64 { return bloom.MaxCountPerBit * f.p.m }

// scriptKeys returns the keys of a script call on shard sh: its bits,
// generation and count, all in one Cluster slot.
func (f *Filter) scriptKeys(sh int) []string {
	return []string{f.bits[sh], f.gens[sh], f.counts[sh]}
}

// payloadLen is the length of a shard's payload in the portable format.
func (f *Filter) payloadLen() uint64 { return 8 * ((f.p.m + 63) / 64) }

// window is the number of keys AddMany and HasMany send in one pipeline.
const window = 16384

// AddMany adds keys and reports, for each, whether it was new, as Add does,
// in pipelined batches: one script call per shard and 1000 keys, and one
// round trip per 16 384 keys. Each key is added atomically, and a key that
// appears twice is new at most once. On error the keys of the batches sent
// so far may have been added, and the result is nil.
func (f *Filter) AddMany(ctx context.Context, keys []string) ([]bool, error) {
	return f.many(ctx, addScript, "add to", keys)
}

// HasMany reports, for each key, whether it is probably in the filter, as
// Has does, in pipelined batches as AddMany.
func (f *Filter) HasMany(ctx context.Context, keys []string) ([]bool, error) {
	return f.many(ctx, hasScript, "check", keys)
}

func (f *Filter) many(ctx context.Context, s *redis.Script, op string, keys []string) ([]bool, error) {
	out := make([]bool, len(keys))
	for i := 0; i < len(keys); i += window {
		j := min(len(keys), i+window)
		if err := f.runWindow(ctx, s, op, keys[i:j], out[i:j]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// A call is one script call of AddMany or HasMany: keys idx of one shard.
type call struct {
	shard int
	idx   []int
	args  []any
	cmd   *redis.Cmd
}

// runWindow runs s over keys in one pipeline and writes the answers to out.
func (f *Filter) runWindow(ctx context.Context, s *redis.Script, op string, keys []string, out []bool) error {
	groups := make(map[int][]int)
	for i, key := range keys {
		sh := f.shard(key)
		groups[sh] = append(groups[sh], i)
	}
	var calls []*call
	for sh, idx := range groups {
		for len(idx) > 0 {
			n := min(len(idx), f.batch)
			c := &call{shard: sh, idx: idx[:n], args: f.scriptArgs(n)}
			for _, i := range c.idx {
				c.args = f.appendOffsets(c.args, keys[i])
			}
			calls = append(calls, c)
			idx = idx[n:]
		}
	}
	if !f.loaded.Load() {
		if err := f.loadScripts(ctx); err != nil {
			return err
		}
		f.loaded.Store(true)
	}
	for attempt := 0; ; attempt++ {
		_, _ = f.c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, c := range calls {
				c.cmd = s.EvalSha(ctx, pipe, f.scriptKeys(c.shard), c.args...)
			}
			return nil
		})
		// A script cache emptied by a restart of Redis answers NOSCRIPT:
		// those calls did not run, so they are sent again once loaded.
		var again []*call
		for _, c := range calls {
			res, err := c.cmd.Int64Slice()
			switch {
			case redis.HasErrorPrefix(err, "NOSCRIPT") && attempt == 0:
				again = append(again, c)
			case err != nil:
				return f.lost(ctx, f.wrap(op, f.bits[c.shard], err))
			case len(res) != len(c.idx):
				return fmt.Errorf("redisfilter: %s %q: script answered %d values for %d keys", op, f.name, len(res), len(c.idx))
			default:
				for j, i := range c.idx {
					out[i] = res[j] == 1
				}
			}
		}
		if len(again) == 0 {
			return nil
		}
		if err := f.loadScripts(ctx); err != nil {
			return err
		}
		calls = again
	}
}

// loadScripts loads the scripts into Redis (every master of a Cluster), so
// that pipelines can call them by SHA-1.
func (f *Filter) loadScripts(ctx context.Context) error {
	for _, s := range []*redis.Script{addScript, hasScript, statScript} {
		if err := s.Load(ctx, f.c).Err(); err != nil {
			return f.wrap("load the scripts of", f.name, err)
		}
	}
	return nil
}

// Count returns the number of keys added that were new, summed over the
// shards: the Count of the filter Snapshot writes.
func (f *Filter) Count(ctx context.Context) (uint64, error) {
	counts, _, err := f.stats(ctx, false)
	var n uint64
	for _, c := range counts {
		n += c
	}
	return n, err
}

// SetBits returns the number of bits set in all shards (BITCOUNT).
func (f *Filter) SetBits(ctx context.Context) (uint64, error) {
	_, bits, err := f.stats(ctx, true)
	return bits, err
}

// stats reads every shard's count and, withBits, the bits set in all
// shards, with the checks of the scripts: the shards are the handle's
// filter, whole. A missing count is 0.
func (f *Filter) stats(ctx context.Context, withBits bool) (counts []uint64, bits uint64, err error) {
	cmds := make([]*redis.Cmd, len(f.bits))
	_, _ = f.c.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i := range f.bits {
			cmds[i] = statScript.Eval(ctx, pipe, f.scriptKeys(i), append(f.scriptArgs(0), withBits)...)
		}
		return nil
	})
	counts = make([]uint64, len(cmds))
	for i, cmd := range cmds {
		res, err := cmd.Slice()
		if err != nil {
			return nil, 0, f.lost(ctx, f.wrap("read the count of", f.bits[i], err))
		}
		s, _ := res[0].(string)
		set, _ := res[1].(int64)
		if counts[i], err = f.parseCount(i, s); err != nil {
			return nil, 0, err
		}
		bits += uint64(set)
	}
	return counts, bits, nil
}

// parseCount reads shard sh's count, which must be a number no larger than
// maxCount.
func (f *Filter) parseCount(sh int, s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%w: %q: count %q is no number", ErrCorrupt, f.counts[sh], s)
	case n > f.maxCount():
		return 0, fmt.Errorf("%w: %q: count %d, more than the %d a shard of %d bits can have counted", ErrCorrupt, f.counts[sh], n, f.maxCount(), f.p.m)
	}
	return n, nil
}

// Delete removes the filter from Redis: its parameters first, so that no
// process opens it half deleted, then its shards. Only keys of the handle's
// filter are deleted: a filter made under the name since (ErrRecreated)
// stays. Handles on the filter get ErrLost or ErrRecreated from then on.
func (f *Filter) Delete(ctx context.Context) error {
	if err := delParamsScript.Run(ctx, f.c, []string{f.name}, f.gen).Err(); err != nil {
		return f.wrap("delete", f.name, err)
	}
	return f.deleteLost(ctx, "", slices.Repeat([]string{f.gen}, len(f.bits)))
}
