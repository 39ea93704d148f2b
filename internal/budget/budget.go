// Package budget turns the room the npm module's memory budget has left into
// a bound on the bits of a filter it loads, so that the engine refuses a
// filter that would not fit from its header, at the same step and with the
// same error (bloom.ErrTooLarge) as a filter over the caller's maxBits:
// before a byte of the payload is copied, read or checked. The engine
// (wasm/) applies it, and the Go tests that say which code the npm module
// gives each malformed input apply the same bound.
package budget

import "github.com/edgebloom/edgebloom/bloom"

// Scratch is the smallest scratch buffer the engine keeps, in bytes.
const Scratch = 64 << 10

// LoadRecord returns the largest encoding, in bytes, that a load may copy
// into an engine that has room bytes left: the input is copied into a
// scratch buffer of its own length (at least Scratch) and becomes a filter
// of about the same size, so a load needs twice its length.
func LoadRecord(room uint64) uint64 {
	if room < Scratch {
		return 0
	}
	return (room - Scratch) / 2
}

// ShardRecord returns the largest shard record that a sharded container of
// s shards may hold in an engine that has room bytes left: every shard stays
// loaded while the next is copied in, beside the router, so a container of
// s shards of this size, its router and one copy fit the room.
func ShardRecord(room uint64, s uint64) uint64 {
	router := 2 * (72 + 8*((s+63)/64))
	if s == 0 || room < Scratch+router {
		return 0
	}
	return (room - Scratch - router) / (s + 1)
}

// Bits returns the largest m that a filter of kind (numbered as the format
// numbers kinds; an unknown kind is read as classic) may have so that its
// encoding is at most size bytes, whatever its other header fields say.
func Bits(kind uint8, size uint64) uint64 {
	const record = 72          // a header and a checksum
	over := uint64(record + 8) // and up to a word of padding
	switch kind {
	case 3: // scalable: up to MaxLayers layers, each a record of its own
		over += bloom.MaxLayers * (record + 8)
	case 4: // window: up to MaxGenerations generations
		over += bloom.MaxGenerations * (record + 8)
	}
	if size <= over {
		return 0
	}
	if kind == 2 { // counting: 4 bits a counter
		return 2 * (size - over)
	}
	return 8 * (size - over)
}
