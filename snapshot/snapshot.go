// Package snapshot reads and writes the snapshot that the edge service's
// GET /v1/filters/{name}/snapshot returns, and that redisfilter's Snapshot
// writes, and routes keys to shards the way both do.
//
// A filter with one shard is snapshotted in the plain format of docs/format.md:
// bloom.Decode and the npm module's fromBytes load it as they are.
//
// A filter with several shards is a sharded container, little-endian:
//
//	offset   size  field
//	0        4     magic "EBSC"
//	4        1     container version, 1
//	5        1     routing scheme, 1
//	6        2     reserved, 0
//	8        4     s: number of shards, 2 or more
//	12       4     reserved, 0
//	16       8     r: length of the router record
//	24       8·s   length of each shard record, in shard order
//	24+8s    r     router: a classic filter record (docs/format.md) with
//	               m = s, k = 1, seed = RouteSeed and no bits set
//	...            the s shard records back to back: classic filters in the
//	               plain format, each with its own checksum
//
// Nothing follows the last shard. The header has no checksum of its own: its
// lengths must add up to the whole input exactly, and every record in it is
// checksummed.
//
// # Routing
//
// A key belongs to the shard router.Locations(key)[0], that is
// floor(XXH64(key, RouteSeed) · s / 2^64). The router's seed differs from the
// shards' seed (0), so the bits a key sets inside its shard are independent of
// the shard it was sent to. In JavaScript, fromBytes(routerBytes) gives a
// BloomFilter whose positions(key)[0] is the same shard index.
package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
)

// RouteSeed is the XXH64 seed of the routing hash. It is part of the
// container format: changing it moves keys between shards.
const RouteSeed = 0x9e3779b97f4a7c15

// Magic starts a sharded container.
const Magic = "EBSC"

const (
	version       = abi.ContainerVersion
	routingScheme = abi.ContainerRouting
	fixedHeader   = abi.ContainerHeader
	// MaxShards bounds s when reading, before anything is allocated.
	MaxShards = 1 << 16
)

// ErrFormat is wrapped by every error about a malformed container. Each
// such error also wraps the bloom error (or io.ErrUnexpectedEOF) that names
// what is wrong, so errors.Is(err, bloom.ErrCorrupt) holds for a container
// whose lengths or router lie, as it does for a lying filter record, and the
// npm module's fromBytes refuses the same bytes with the matching code
// (bloom/testdata/malformed.json).
var ErrFormat = errors.New("snapshot: malformed sharded container")

// formatError wraps ErrFormat and base, one of the bloom errors or
// io.ErrUnexpectedEOF, with detail.
func formatError(base error, format string, args ...any) error {
	return fmt.Errorf("%w: %w: "+format, append([]any{ErrFormat, base}, args...)...)
}

// Router returns the filter whose first location of a key is its shard.
// It panics if shards is 0.
func Router(shards int) *bloom.Filter {
	r, err := bloom.NewWithSeed(uint64(shards), 1, RouteSeed)
	if err != nil {
		panic(err)
	}
	return r
}

// HeaderSize returns the length of a container header for s shards, router
// included.
func HeaderSize(s int) int {
	return fixedHeader + 8*s + int(Router(s).EncodedSize())
}

// AppendHeader appends the container header for shard records of the given
// lengths, router included, to dst. The records follow it in order.
func AppendHeader(dst []byte, lengths []uint64) []byte {
	router, _ := Router(len(lengths)).MarshalBinary()
	le := binary.LittleEndian
	dst = append(dst, Magic...)
	dst = append(dst, version, routingScheme, 0, 0)
	dst = le.AppendUint32(dst, uint32(len(lengths)))
	dst = le.AppendUint32(dst, 0)
	dst = le.AppendUint64(dst, uint64(len(router)))
	for _, n := range lengths {
		dst = le.AppendUint64(dst, n)
	}
	return append(dst, router...)
}

// A Set is a loaded snapshot: a plain filter or a sharded one.
type Set interface {
	Has(key []byte) bool
	HasString(key string) bool
}

// Load reads a snapshot, plain or sharded, from data. Every filter in it may
// have at most maxBits bits.
func Load(data []byte, maxBits uint64) (Set, error) {
	if len(data) >= 4 && string(data[:4]) == Magic {
		return LoadSharded(data, maxBits)
	}
	r := bytes.NewReader(data)
	f, err := bloom.Decode(r, maxBits)
	if err != nil {
		return nil, err
	}
	if r.Len() != 0 {
		return nil, formatError(bloom.ErrCorrupt, "%d bytes after the filter", r.Len())
	}
	return f, nil
}

// LoadSharded reads a sharded container from data. Lengths, shard count and
// the router's header are checked before any record is decoded.
func LoadSharded(data []byte, maxBits uint64) (*Sharded, error) {
	le := binary.LittleEndian
	if len(data) < fixedHeader {
		return nil, formatError(io.ErrUnexpectedEOF, "%d bytes is shorter than a header", len(data))
	}
	s := uint64(le.Uint32(data[abi.ContainerAtShards:]))
	switch {
	case string(data[:4]) != Magic:
		return nil, formatError(bloom.ErrNotFilter, "bad magic")
	case data[abi.ContainerAtVersion] != version:
		return nil, formatError(bloom.ErrVersion, "container version %d", data[abi.ContainerAtVersion])
	case data[abi.ContainerAtRouting] != routingScheme:
		return nil, formatError(bloom.ErrVersion, "routing scheme %d", data[abi.ContainerAtRouting])
	case le.Uint16(data[abi.ContainerAtReserved:]) != 0 || le.Uint32(data[abi.ContainerAtReserved2:]) != 0:
		return nil, formatError(bloom.ErrCorrupt, "reserved bytes set")
	case s < 2 || s > MaxShards:
		return nil, formatError(bloom.ErrCorrupt, "%d shards", s)
	case uint64(len(data)) < fixedHeader+8*s:
		return nil, formatError(io.ErrUnexpectedEOF, "truncated header")
	}
	lengths := make([]uint64, 1+s)
	total := uint64(fixedHeader + 8*s)
	for i := range lengths {
		lengths[i] = le.Uint64(data[abi.ContainerAtLengths+8*i:])
		if lengths[i] > uint64(len(data)) {
			return nil, formatError(io.ErrUnexpectedEOF, "record %d longer than the input", i)
		}
		total += lengths[i]
	}
	switch {
	case total > uint64(len(data)):
		return nil, formatError(io.ErrUnexpectedEOF, "lengths add up to %d bytes, input has %d", total, len(data))
	case total < uint64(len(data)):
		return nil, formatError(bloom.ErrCorrupt, "lengths add up to %d bytes, input has %d", total, len(data))
	}
	off := uint64(fixedHeader + 8*s)
	// The router before the shards: it must be the one for s shards (a
	// router of another seed would send keys to shards that do not hold
	// them, and report present keys absent). Its m is checked before it is
	// decoded, its seed, k and bits after (so a damaged router is a
	// checksum error).
	if n := lengths[0]; n < bloom.HeaderSize || le.Uint64(data[off+abi.RecordAtBits:]) != s {
		return nil, formatError(bloom.ErrCorrupt, "router is not the one for %d shards", s)
	}
	filters := make([]*bloom.Filter, 1+s)
	for i, n := range lengths {
		bound := maxBits
		if i == 0 {
			bound = s
		}
		f, err := bloom.Decode(bytes.NewReader(data[off:off+n]), bound)
		if err != nil {
			return nil, fmt.Errorf("snapshot: record %d: %w", i, err)
		}
		if f.EncodedSize() != n {
			return nil, formatError(bloom.ErrCorrupt, "record %d is %d bytes, its header says %d", i, n, f.EncodedSize())
		}
		if i == 0 && !f.Equal(Router(int(s))) {
			return nil, formatError(bloom.ErrCorrupt, "router is not the one for %d shards", s)
		}
		filters[i] = f
		off += n
	}
	return &Sharded{Router: filters[0], Shards: filters[1:]}, nil
}

// ReadAll reads the whole snapshot from r, refusing more than limit bytes,
// and loads it.
func ReadAll(r io.Reader, limit int64, maxBits uint64) (Set, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("snapshot: larger than %d bytes", limit)
	}
	return Load(data, maxBits)
}
