package redisfilter

// A filter's parameters: how a Config is sized into shards, and the hash
// at the filter's name that holds them for every process.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/redisfilter/redisx"
	"github.com/edgebloom/edgebloom/snapshot"
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

func (p params) String() string {
	s := fmt.Sprintf("%d shard(s) of m=%d k=%d seed=%d", p.shards, p.m, p.k, p.seed)
	if p.capacity > 0 {
		s += fmt.Sprintf(" (%d keys at %g)", p.capacity, p.fpRate)
	}
	return s
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
	case strings.Contains(name, "}") && redisx.HashTag(name) == "":
		return errors.New(`redisfilter: invalid name: a "}" must close a hash tag such as "{crawl}"`)
	}
	return nil
}
