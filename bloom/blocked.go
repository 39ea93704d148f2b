package bloom

import (
	"math"
	"math/bits"
	"unsafe"
)

// A BlockedFilter is a split-block Bloom filter, exactly the Split Block
// Bloom Filter (SBBF) of the Apache Parquet format (parquet-format,
// BloomFilter.md): its bitset is what a Parquet file stores for a column
// whose BYTE_ARRAY values are the keys, so Parquet readers can use a
// filter built here and BlockedFromParquet reads one a Parquet writer made.
//
// The bits are in blocks of 256 bits, eight 32-bit words each. A key is
// hashed once, h = XXH64 of its bytes with seed 0; the upper 32 bits of h
// choose the block, ((h >> 32) · blocks) >> 32, and the lower 32 bits set one
// bit in each of the block's eight words: bit (uint32(h) · salt[i]) >> 27 of
// word i, with Parquet's eight odd salts. All eight probes of a key hit one
// 32-byte block, so an Add or Has costs one cache miss, where a classic
// filter of the same rate pays about seven, and derives its positions with
// 32-bit multiplies, cheap everywhere including wasm.
//
// The price is space: blocks receive unequal numbers of keys (a Poisson
// number with mean λ = n/blocks), and a crowded block answers wrongly more
// often than an empty one saves, so a split-block filter needs 10.5 bits a
// key for 1% where a classic filter needs 9.6. NewBlocked sizes the filter
// from that real rate (see OptimalBlocks), not from the classic formula,
// which would under-size it, and aims at 0.9% for 1%: 10.8 bits a key.
//
// A BlockedFilter is safe for any number of concurrent readers (Has,
// HasString and the statistics) while nobody writes. Add, AddString, Union,
// Intersect, Clear and decoding into it need one writer at a time, with no
// reader at the same time.
//
// The zero value is not usable; make one with NewBlocked, NewBlockedWithSize
// or BlockedFromParquet.
type BlockedFilter struct {
	// blocks holds the bitset, four 64-bit words a block: Parquet's 32-bit
	// word 2j of a block is the low half of its word j, word 2j+1 the high
	// half. Read as little-endian bytes, the words are the Parquet bitset.
	blocks   [][4]uint64
	n        uint64 // len(blocks)
	count    uint64
	capacity uint64  // 0 when made from an explicit size
	fpRate   float64 // 0 when made from an explicit size
}

// HashParquet is the identifier, stored in the header of every encoded
// BlockedFilter, of the key → bits mapping of Parquet's split-block filter:
// XXH64 with seed 0, the block from the upper 32 bits, one bit a word from
// the lower 32 bits and the salts. It differs from HashXXH64 in everything
// after the XXH64 digest, so it has an identifier of its own.
const HashParquet = 2

// Limits of a BlockedFilter.
const (
	// BlockBits is the number of bits in a block of a BlockedFilter.
	BlockBits = 256
	// MaxBlocks is the largest number of blocks: 2^32, so that the block
	// index ((h >> 32) · blocks) >> 32 is computed in 64 bits without
	// overflow, and 256 · MaxBlocks = MaxBits.
	MaxBlocks = MaxBits / BlockBits
	// MaxParquetBytes is the largest bitset BlockedFromParquet accepts and
	// ParquetBlocks sizes: 128 MiB (2^22 blocks), the most Apache Arrow
	// (C++ and Go) reads or writes and parquet-java writes; a file with a
	// larger filter is one those readers refuse.
	MaxParquetBytes = 128 << 20
)

// salt holds Parquet's eight odd 32-bit constants, one a word of a block.
var salt = [8]uint32{
	0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d,
	0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31,
}

// Each salt is also a constant, so that the hot path multiplies by
// immediates instead of loading the table.
const (
	salt0 = 0x47b6137b
	salt1 = 0x44974d91
	salt2 = 0x8824ad5b
	salt3 = 0xa2b7289d
	salt4 = 0x705495c7
	salt5 = 0x2df1424b
	salt6 = 0x9efc4947
	salt7 = 0x5c6bfb31
)

// blockedSizingMargin is the share of the target rate that NewBlocked aims
// at: the expected rate at capacity is at most 0.9·p, so that a real filter,
// whose rate scatters around the expected one, stays under p.
const blockedSizingMargin = 0.9

// NewBlocked returns an empty split-block filter sized by OptimalBlocks for
// capacity keys at false-positive rate fpRate. It returns an error naming
// the argument when either is out of range; nothing is allocated in that
// case.
func NewBlocked(capacity uint64, fpRate float64) (*BlockedFilter, error) {
	return newBlockedFor(OptimalBlocks, capacity, fpRate)
}

// NewBlockedForParquet returns an empty split-block filter of
// ParquetBlocks(capacity, fpRate) blocks, a power of two, which every
// Parquet reader accepts (Arrow C++/pyarrow, Velox and ClickHouse refuse a
// bitset whose length is not a power of two; arrow-go, DuckDB and
// parquet-java take any multiple of 32 bytes). It returns the error of
// ParquetBlocks; nothing is allocated in that case.
func NewBlockedForParquet(capacity uint64, fpRate float64) (*BlockedFilter, error) {
	return newBlockedFor(ParquetBlocks, capacity, fpRate)
}

// newBlockedFor returns a filter of size(capacity, fpRate) blocks made for
// capacity keys at fpRate.
func newBlockedFor(size func(uint64, float64) (uint64, error), capacity uint64, fpRate float64) (*BlockedFilter, error) {
	blocks, err := size(capacity, fpRate)
	if err != nil {
		return nil, err
	}
	f := newBlocked(blocks)
	f.capacity, f.fpRate = capacity, fpRate
	return f, nil
}

// NewBlockedWithSize returns an empty split-block filter of the given number
// of 256-bit blocks: 32·blocks bytes, NumBits 256·blocks. It returns an
// error naming the argument when blocks is 0 or above MaxBlocks; nothing is
// allocated in that case. A Parquet writer's bitset of b bytes has b/32
// blocks.
func NewBlockedWithSize(blocks uint64) (*BlockedFilter, error) {
	if err := checkBlocks(blocks); err != nil {
		return nil, err
	}
	return newBlocked(blocks), nil
}

func checkBlocks(blocks uint64) error {
	switch {
	case blocks == 0:
		return argError("blocks", "must be at least 1")
	case blocks > MaxBlocks:
		return argError("blocks", "must be at most MaxBlocks (2^32), got "+utoa(blocks))
	case blocks >= math.MaxInt/32:
		return argError("blocks", "does not fit in this platform's address space")
	}
	return nil
}

func newBlocked(blocks uint64) *BlockedFilter {
	f := &BlockedFilter{blocks: make([][4]uint64, blocks), n: blocks}
	// One probe a key, but at a random block: on a large filter each is a
	// TLB miss too, which huge pages take away (see adviseHugePages).
	adviseHugePages(f.words())
	return f
}

// words returns the bitset as one slice of 64-bit words, without copying.
func (f *BlockedFilter) words() []uint64 {
	if len(f.blocks) == 0 {
		return nil
	}
	return unsafe.Slice(&f.blocks[0][0], 4*len(f.blocks))
}

// blocksOf returns words, whose length is a multiple of 4, as blocks,
// without copying.
func blocksOf(words []uint64) [][4]uint64 {
	if len(words) == 0 {
		return nil
	}
	return unsafe.Slice((*[4]uint64)(unsafe.Pointer(&words[0])), len(words)/4)
}

// BlockedFromParquet returns a split-block filter whose bits are a copy of
// bitset, the bitset of a Parquet split-block Bloom filter (the bytes after
// the BloomFilterHeader in a Parquet file) or of ParquetBitset. Its Count is
// estimated from the bits (see EstimatedCount) and its capacity and target
// rate are unknown (0). It returns an error naming bitset when its length is
// not a positive multiple of 32 bytes or is above MaxParquetBytes.
func BlockedFromParquet(bitset []byte) (*BlockedFilter, error) {
	if err := checkParquetLen(uint64(len(bitset))); err != nil {
		return nil, err
	}
	f := newBlocked(uint64(len(bitset)) / 32)
	words := f.words()
	for i := range words {
		words[i] = wire.Uint64(bitset[8*i:])
	}
	f.recount()
	return f, nil
}

func checkParquetLen(n uint64) error {
	switch {
	case n == 0 || n%32 != 0:
		return argError("bitset", "length must be a positive multiple of 32 bytes, got "+utoa(n))
	case n > MaxParquetBytes:
		return argError("bitset", "must be at most MaxParquetBytes (128 MiB, Arrow's limit), got "+utoa(n)+" bytes")
	}
	return nil
}

// ParquetBitset returns a copy of the filter's bitset as a Parquet file
// stores it after the BloomFilterHeader: the blocks in order, each as its
// eight 32-bit words, each word little-endian; 32·blocks bytes. A Parquet
// BloomFilterHeader for it has numBytes = len, algorithm BLOCK, hash XXHASH
// and compression UNCOMPRESSED.
func (f *BlockedFilter) ParquetBitset() []byte {
	words := f.words()
	b := make([]byte, 8*len(words))
	for i, w := range words {
		wire.PutUint64(b[8*i:], w)
	}
	return b
}

// Add adds key to the filter and reports whether it was new, that is whether
// at least one of its eight bits was unset before. A false return for a key
// never added before is a false positive. Add never panics and does not
// allocate.
func (f *BlockedFilter) Add(key []byte) bool {
	// Add, AddString, Has and HasString each spell out their few lines
	// rather than call a shared add(h) or has(h), which Go does not
	// inline: one call a key fewer (bench/README.md, "Go's split-block
	// kind, single keys, against blobloom").
	h := xxh64Seed0(key)
	b := f.block(h)
	m0, m1, m2, m3 := masks(uint32(h))
	if missing(b, m0, m1, m2, m3) == 0 {
		return false
	}
	b[0], b[1], b[2], b[3] = b[0]|m0, b[1]|m1, b[2]|m2, b[3]|m3
	f.count++
	return true
}

// AddString is Add for a string, hashed as its UTF-8 bytes.
func (f *BlockedFilter) AddString(key string) bool {
	h := xxh64Seed0String(key)
	b := f.block(h)
	m0, m1, m2, m3 := masks(uint32(h))
	if missing(b, m0, m1, m2, m3) == 0 {
		return false
	}
	b[0], b[1], b[2], b[3] = b[0]|m0, b[1]|m1, b[2]|m2, b[3]|m3
	f.count++
	return true
}

// Has reports whether key is probably in the filter. It never returns false
// for a key that was added; it may return true for a key that was not. Has
// never panics and does not allocate.
func (f *BlockedFilter) Has(key []byte) bool {
	h := xxh64Seed0(key)
	m0, m1, m2, m3 := masks(uint32(h))
	return missing(f.block(h), m0, m1, m2, m3) == 0
}

// HasString is Has for a string, hashed as its UTF-8 bytes.
func (f *BlockedFilter) HasString(key string) bool {
	h := xxh64Seed0String(key)
	m0, m1, m2, m3 := masks(uint32(h))
	return missing(f.block(h), m0, m1, m2, m3) == 0
}

// block returns the four words of the block that h selects.
func (f *BlockedFilter) block(h uint64) *[4]uint64 {
	// h>>32 < 2^32 and n ≤ 2^32, so the product fits 64 bits and the
	// index is below n. Indexing blocks of [4]uint64 costs one bounds
	// check; slicing 4 words out of a []uint64 cost 10% more time a key
	// at 10M keys.
	return &f.blocks[(h>>32)*f.n>>32]
}

// masks returns the eight one-bit masks of the low 32 bits x of a key's
// hash, paired into 64-bit words the way a block holds them: word 2j in the
// low half of mj, word 2j+1 in the high half.
func masks(x uint32) (m0, m1, m2, m3 uint64) {
	m0 = 1<<(x*salt0>>27) | 1<<(x*salt1>>27+32)
	m1 = 1<<(x*salt2>>27) | 1<<(x*salt3>>27+32)
	m2 = 1<<(x*salt4>>27) | 1<<(x*salt5>>27+32)
	m3 = 1<<(x*salt6>>27) | 1<<(x*salt7>>27+32)
	return
}

// missing returns the bits of the masks that b lacks, without branches. A
// key already present, most of a crawler's traffic, then writes nothing, so
// its cache line stays clean and shared.
func missing(b *[4]uint64, m0, m1, m2, m3 uint64) uint64 {
	return m0&^b[0] | m1&^b[1] | m2&^b[2] | m3&^b[3]
}

// NumBits returns the number of bits, 256 times NumBlocks.
func (f *BlockedFilter) NumBits() uint64 { return BlockBits * f.n }

// NumBlocks returns the number of 256-bit blocks.
func (f *BlockedFilter) NumBlocks() uint64 { return f.n }

// NumHashes returns 8, the number of bits a key sets: one in each word of
// its block.
func (f *BlockedFilter) NumHashes() uint32 { return 8 }

// Locations returns the eight bits that key sets, one in each word of its
// block, as indexes into the bitset read as little-endian bytes (the
// ParquetBitset): bit 32·word + (uint32(h)·salt[word] >> 27) of block
// ((h >> 32)·NumBlocks) >> 32 is index 256·block + 32·word + bit. They are
// what Filter.Locations is for a classic filter; unlike Add and Has,
// Locations allocates.
func (f *BlockedFilter) Locations(key []byte) []uint64 {
	h := xxh64Seed0(key)
	first := BlockBits * ((h >> 32) * f.NumBlocks() >> 32)
	pos := make([]uint64, len(salt))
	for i, s := range salt {
		pos[i] = first + 32*uint64(i) + uint64(uint32(h)*s>>27)
	}
	return pos
}

// Count returns the number of Add calls that returned true. After Union,
// Intersect or BlockedFromParquet it is EstimatedCount, rounded.
func (f *BlockedFilter) Count() uint64 { return f.count }

// Capacity returns the capacity the filter was made for by NewBlocked, or 0
// when it was made from an explicit size or a Parquet bitset.
func (f *BlockedFilter) Capacity() uint64 { return f.capacity }

// TargetFPR returns the false-positive rate the filter was made for by
// NewBlocked, or 0 when it was made from an explicit size or a Parquet
// bitset.
func (f *BlockedFilter) TargetFPR() float64 { return f.fpRate }

// SetBits returns the number of bits set. It counts all of them, so it
// takes time proportional to NumBits.
func (f *BlockedFilter) SetBits() uint64 {
	var n int
	for _, w := range f.words() {
		n += bits.OnesCount64(w)
	}
	return uint64(n)
}

// FillRatio returns the fraction of bits set, SetBits/NumBits.
func (f *BlockedFilter) FillRatio() float64 { return float64(f.SetBits()) / float64(f.NumBits()) }

// EstimatedCount estimates the number of distinct keys added from the number
// X of bits set. Each key sets one bit of word i of its block, so the words
// i of all blocks form a classic filter of 32·blocks bits with one hash
// function, however unequal the blocks' loads: after n keys, 256·blocks ·
// (1 - (1 - 1/(32·blocks))^n) bits are set on average. EstimatedCount
// inverts that, ln(1 - X/NumBits) / ln(1 - 1/(32·blocks)). It is close to
// Count for a filter filled by Add, and meaningful after Union too. It is
// +Inf when every bit is set.
func (f *BlockedFilter) EstimatedCount() float64 {
	return estimateBlockedCount(f.n, f.SetBits())
}

// EstimatedFPR returns the false-positive rate at the current bits: the
// probability that a key never added, which falls in a block chosen
// uniformly, finds its bit set in each of the eight words, averaged over
// the blocks: mean over blocks of Π_i popcount(word i)/32. Unlike
// FillRatio^8 it counts that crowded blocks answer wrongly more often. It
// takes time proportional to NumBits.
func (f *BlockedFilter) EstimatedFPR() float64 {
	var sum float64
	for _, b := range f.blocks {
		p := 1.0
		for _, w := range b {
			p *= float64(bits.OnesCount32(uint32(w))) * float64(bits.OnesCount32(uint32(w>>32)))
		}
		sum += p
	}
	return sum / float64(f.n) / (1 << 40) // 32^8
}

// OverCapacity reports whether the filter holds more keys than it was made
// for, so its false-positive rate is above target. For a filter made by
// NewBlocked that is Count > Capacity; for one made from an explicit size or
// a Parquet bitset, whose capacity is unknown, it is a fill ratio above one
// half, the fill at which eight bits a key are optimal (as for Filter).
func (f *BlockedFilter) OverCapacity() bool {
	if f.capacity > 0 {
		return f.Count() > f.capacity
	}
	return 2*f.SetBits() > f.NumBits()
}

// Clear removes every key and resets Count.
func (f *BlockedFilter) Clear() {
	clear(f.blocks)
	f.count = 0
}

// Equal reports whether f and o have the same number of blocks and the same
// bits. Counts and targets are not compared.
func (f *BlockedFilter) Equal(o *BlockedFilter) bool {
	if f.compatible(o) != nil {
		return false
	}
	for i, b := range f.blocks {
		if b != o.blocks[i] {
			return false
		}
	}
	return true
}

// Union adds every key of o to f, so f reports present whatever either
// reported present. It returns an error wrapping ErrIncompatible, and leaves
// f unchanged, when the numbers of blocks differ.
func (f *BlockedFilter) Union(o *BlockedFilter) error {
	if err := f.compatible(o); err != nil {
		return err
	}
	words := f.words()
	for i, w := range o.words() {
		words[i] |= w
	}
	f.recount()
	return nil
}

// Intersect keeps in f only the bits also set in o. Every key added to both
// stays present; the false-positive rate of the result is at most that of
// either. It returns an error wrapping ErrIncompatible, and leaves f
// unchanged, when the numbers of blocks differ.
func (f *BlockedFilter) Intersect(o *BlockedFilter) error {
	if err := f.compatible(o); err != nil {
		return err
	}
	words := f.words()
	for i, w := range o.words() {
		words[i] &= w
	}
	f.recount()
	return nil
}

func (f *BlockedFilter) recount() {
	c := f.EstimatedCount()
	if math.IsInf(c, 1) {
		c = float64(f.NumBits())
	}
	f.count = uint64(math.Round(c))
}

func (f *BlockedFilter) compatible(o *BlockedFilter) error {
	if f.n != o.n {
		return wrap(ErrIncompatible, "different number of blocks")
	}
	return nil
}

// Sizing.

// Encoding.
