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

// A delta record carries the positions a shard set since a cursor while they
// take at most MaxDeltaBytes in its log, and at most 1/DeltaPayloadShare of
// its payload (DeltaLimit): past that the snapshot is the better deal, or
// near it, and the shard answers 410 changes_gone so that the front sends
// the snapshot.
const (
	MaxDeltaBytes     = 256 << 10
	DeltaPayloadShare = 2
)

// ChangeTailBytes is what a shard keeps of its log after the chunks hold
// it, so that a copy a little behind gets a delta: the rows of one largest
// delta record.
const ChangeTailBytes = MaxDeltaBytes + LogCountBytes

// MaxShardRecord bounds a shard's answer to the front's GET /changes: the
// record header and MaxDeltaBytes of positions as varints.
const MaxShardRecord = DeltaRecordHeader + MaxVarintBytes*MaxDeltaBytes/LogPositionBytes

// DeltaLimit returns how many bytes of log positions a delta record of a
// shard whose payload is payload bytes may carry.
func DeltaLimit(payload int) int { return min(MaxDeltaBytes, payload/DeltaPayloadShare) }
