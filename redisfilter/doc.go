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
// Cluster, of Redis 7 or later (whose scripts' errors keep their codes, such
// as WRONGTYPE). Each shard's count and generation live beside its bits
// under the keys {N:i}:n and {N:i}:g, which Cluster places in the slot of
// N:i, so a script touches one slot. Shards carry no common hash tag, so
// Cluster spreads them over its nodes. To keep every key of a filter in one
// slot instead (for MULTI, or a node of its own), give the filter a name
// with a hash tag: "{crawl}" makes the keys {crawl}, {crawl}:0, {crawl}:0:n,
// {crawl}:0:g, …
//
// The scripts are the files of lua/. A reply of another shape than a script
// gives (from a proxy, say) is an error wrapping redisx.ErrUnexpectedReply,
// never a panic.
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
