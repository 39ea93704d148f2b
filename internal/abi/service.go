package abi

// The edge service's numbers (worker/): its Go front, its Durable Object
// shards (worker/*.js) and its in-memory stand-in for tests (memory.go)
// take them from here, generated into worker/shard/abi.js.

// MaxShardBits bounds one shard's bitset: 2^28 bits, 32 MiB. A Durable
// Object isolate has 128 MB: see worker/DESIGN.md, "Capacity and memory".
const MaxShardBits = 1 << 28

// A log row of a shard: the filter's count after the add (uint64), then the
// position of each bit it set (uint32).
const (
	LogCountBytes    = 8
	LogPositionBytes = 4
)

// A delta record carries the positions a shard set since a cursor, Rice
// coded, while they take at most DeltaLimit bytes: MaxDeltaBytes, and
// 1/DeltaPayloadShare of the shard's payload, past which the shard itself
// is the better deal, or near it; the shard then answers 410 changes_gone
// and the front sends the shard whole. MaxDeltaPositions bounds the
// positions a shard gathers for one record (4 bytes each in its memory).
const (
	MaxDeltaBytes     = 2 << 20
	DeltaPayloadShare = 2
	MaxDeltaPositions = 1 << 22
)

// MaxShardRecord bounds a shard's answer to the front's GET /changes: the
// record header and MaxDeltaBytes of coded positions.
const MaxShardRecord = DeltaRecordHeader + MaxDeltaBytes

// DeltaLimit returns how many bytes of coded positions (a record's body) a
// delta record of a shard whose payload is payload bytes may carry.
func DeltaLimit(payload int) int { return min(MaxDeltaBytes, payload/DeltaPayloadShare) }

// KeptCheckpoints is how many checkpoints of a generation the checkpoint
// object keeps: a copy older than the oldest loads a snapshot.
const KeptCheckpoints = 64

// MaxLogPosition is the largest position of a shard's log: a shard numbers
// its rows with JavaScript numbers, exact up to 2^53 - 1. A cursor with a
// position past it is not one the service wrote.
const MaxLogPosition = 1<<53 - 1
