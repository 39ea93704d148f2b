package bloom

import "github.com/edgebloom/edgebloom/internal/abi"

// Batches: AddMany, HasMany, AddManyString and HasManyString on every kind.
//
// A loop of single calls waits for each key's cache misses in turn: the
// key's bytes (a crawler's URLs lie all over the heap), then the bitset's
// words, behind branches that depend on them. A batch takes the keys a
// group at a time instead: it first loads a byte at each end of every key
// of the group, in a loop of independent loads, so that their misses are
// in flight together; hashes the group into a small array of digests; then
// reads every word the group's keys probe, again as independent loads
// without branches, before it answers or changes anything, in key order.
// The answers are exactly those of the single calls made in order: a key
// that appears twice in one batch is new only the first time.

// group is the number of keys hashed before any of them is probed. The
// words a group of 32 keys reads (7 each for a classic filter at 1%) stay
// inside the first-level cache. At 10M keys (bench/, 3 passes on one
// machine), groups of 32 took 12% less time a key than groups of 16 for
// the split-block kind and the same for the classic one; groups of 8 took
// 10-30% more.
const group = abi.BatchGroup

// A groupMask has bit i set for key i of a group.
type groupMask = uint32

// touchBytes loads the first and last byte of every key and returns their
// sum, so the loads are not optimized away; it is not inlined, so the
// caller may drop the sum.
//
//go:noinline
func touchBytes(keys [][]byte) (sink uint64) {
	for _, k := range keys {
		if len(k) > 0 {
			sink += uint64(k[0]) + uint64(k[len(k)-1])
		}
	}
	return sink
}

// touchStrings is touchBytes for strings.
//
//go:noinline
func touchStrings(keys []string) (sink uint64) {
	for _, k := range keys {
		if len(k) > 0 {
			sink += uint64(k[0]) + uint64(k[len(k)-1])
		}
	}
	return sink
}

// A keyList is the keys of a batch, as byte slices or as strings.
type keyList struct {
	b [][]byte
	s []string
}

func bytesList(keys [][]byte) keyList { return keyList{b: keys} }

func stringList(keys []string) keyList { return keyList{s: keys} }

func (l *keyList) len() int { return len(l.b) + len(l.s) }

// next hashes the next group keys (or all that are left, when fewer) into
// hs, drops them from l, and returns their digests: none when l is empty.
func (l *keyList) next(hs *[group]uint64, seed uint64) []uint64 {
	if len(l.s) > 0 {
		keys := l.s[:min(len(l.s), group)]
		l.s = l.s[len(keys):]
		touchStrings(keys)
		for i, k := range keys {
			hs[i] = sumString(k, seed)
		}
		return hs[:len(keys)]
	}
	keys := l.b[:min(len(l.b), group)]
	l.b = l.b[len(keys):]
	touchBytes(keys)
	for i, k := range keys {
		hs[i] = sum(k, seed)
	}
	return hs[:len(keys)]
}

// grow returns dst with room for n more answers.
func grow(dst []bool, n int) []bool {
	if cap(dst)-len(dst) < n {
		dst = append(make([]bool, 0, len(dst)+n), dst...)
	}
	return dst
}

// present returns the mask of the digests in hs (at most group) whose k
// bits are all set. It reads every word of every key, without a branch on
// any of them, so their misses overlap.
func (f *Filter) present(hs []uint64) (mask groupMask) {
	words, m, k := f.words, f.m, uint64(f.k)
	for i, h := range hs {
		x, y := start(h, m)
		all := uint64(1)
		for j := uint64(1); ; j++ {
			all &= load64(&words[x>>6]) >> (x & 63)
			if j == k {
				break
			}
			x, y = step(x, y, j, m)
		}
		mask |= groupMask(all&1) << (i & 31)
	}
	return mask
}

// addDigests adds the keys of digests hs in order and appends whether each
// was new. A key whose bits were all set before the group is not new and
// writes nothing; the others go through add, which sees the keys before
// them, so a key repeated in the group is new only the first time.
func (f *Filter) addDigests(hs []uint64, dst []bool) []bool {
	present := f.present(hs)
	for i, h := range hs {
		dst = append(dst, present>>(i&31)&1 == 0 && f.add(h))
	}
	return dst
}

// addDigestsAtomic is addDigests with atomic ORs, for concurrent writers.
func (f *Filter) addDigestsAtomic(hs []uint64, dst []bool) []bool {
	present := f.present(hs)
	for i, h := range hs {
		dst = append(dst, present>>(i&31)&1 == 0 && f.addAtomic(h))
	}
	return dst
}

// hasDigests appends whether each key of digests hs is probably present.
func (f *Filter) hasDigests(hs []uint64, dst []bool) []bool {
	return appendMask(dst, f.present(hs), len(hs))
}

// appendMask appends bits 0 to n-1 of mask.
func appendMask(dst []bool, mask groupMask, n int) []bool {
	for i := range n {
		dst = append(dst, mask>>(i&31)&1 != 0)
	}
	return dst
}

// many runs a batch: it hashes keys a group at a time, and adds (add) or
// tests each group.
func (f *Filter) many(keys keyList, add bool, dst []bool) []bool {
	dst = grow(dst, keys.len())
	var hs [group]uint64
	for h := keys.next(&hs, f.seed); len(h) > 0; h = keys.next(&hs, f.seed) {
		if add {
			dst = f.addDigests(h, dst)
		} else {
			dst = f.hasDigests(h, dst)
		}
	}
	return dst
}

// AddMany adds keys in order and appends to dst whether each was new, as
// Add reports it, and returns the extended slice. A key that appears twice
// is new (at most) the first time. It answers as a loop of Add calls does,
// but overlaps the cache misses of many keys: for a crawler, the links of
// a page in one call. It allocates only when dst lacks room.
func (f *Filter) AddMany(keys [][]byte, dst []bool) []bool { return f.many(bytesList(keys), true, dst) }

// AddManyString is AddMany for strings, hashed as their UTF-8 bytes.
func (f *Filter) AddManyString(keys []string, dst []bool) []bool {
	return f.many(stringList(keys), true, dst)
}

// HasMany appends to dst whether each key is probably present, as Has
// reports it, and returns the extended slice.
func (f *Filter) HasMany(keys [][]byte, dst []bool) []bool {
	return f.many(bytesList(keys), false, dst)
}

// HasManyString is HasMany for strings, hashed as their UTF-8 bytes.
func (f *Filter) HasManyString(keys []string, dst []bool) []bool {
	return f.many(stringList(keys), false, dst)
}

func (s *SyncFilter) many(keys keyList, add bool, dst []bool) []bool {
	if !add {
		return s.f.many(keys, false, dst) // the same loads: atomic where it matters
	}
	dst = grow(dst, keys.len())
	var hs [group]uint64
	for h := keys.next(&hs, s.f.seed); len(h) > 0; h = keys.next(&hs, s.f.seed) {
		dst = s.f.addDigestsAtomic(h, dst)
	}
	return dst
}

// AddMany is Filter.AddMany; batches may run concurrently with each other
// and with every other call, as Add does.
func (s *SyncFilter) AddMany(keys [][]byte, dst []bool) []bool {
	return s.many(bytesList(keys), true, dst)
}

// AddManyString is AddMany for strings, hashed as their UTF-8 bytes.
func (s *SyncFilter) AddManyString(keys []string, dst []bool) []bool {
	return s.many(stringList(keys), true, dst)
}

// HasMany is Filter.HasMany.
func (s *SyncFilter) HasMany(keys [][]byte, dst []bool) []bool {
	return s.many(bytesList(keys), false, dst)
}

// HasManyString is HasMany for strings, hashed as their UTF-8 bytes.
func (s *SyncFilter) HasManyString(keys []string, dst []bool) []bool {
	return s.many(stringList(keys), false, dst)
}

// The split-block kind: one block a key.

// present returns the mask of the digests in hs whose eight bits are all
// set, reading every key's block without a branch.
func (f *BlockedFilter) present(hs []uint64) (mask groupMask) {
	for i, h := range hs {
		m0, m1, m2, m3 := masks(uint32(h))
		lack := missing(f.block(h), m0, m1, m2, m3)
		mask |= groupMask((lack|-lack)>>63^1) << (i & 31)
	}
	return mask
}

func (f *BlockedFilter) addDigests(hs []uint64, dst []bool) []bool {
	present := f.present(hs)
	for i, h := range hs {
		dst = append(dst, present>>(i&31)&1 == 0 && f.addDigest(h))
	}
	return dst
}

func (f *BlockedFilter) many(keys keyList, add bool, dst []bool) []bool {
	dst = grow(dst, keys.len())
	var hs [group]uint64
	for h := keys.next(&hs, 0); len(h) > 0; h = keys.next(&hs, 0) {
		if add {
			dst = f.addDigests(h, dst)
		} else {
			dst = appendMask(dst, f.present(h), len(h))
		}
	}
	return dst
}

// AddMany is Filter.AddMany for the split-block kind.
func (f *BlockedFilter) AddMany(keys [][]byte, dst []bool) []bool {
	return f.many(bytesList(keys), true, dst)
}

// AddManyString is AddMany for strings, hashed as their UTF-8 bytes.
func (f *BlockedFilter) AddManyString(keys []string, dst []bool) []bool {
	return f.many(stringList(keys), true, dst)
}

// HasMany is Filter.HasMany for the split-block kind.
func (f *BlockedFilter) HasMany(keys [][]byte, dst []bool) []bool {
	return f.many(bytesList(keys), false, dst)
}

// HasManyString is HasMany for strings, hashed as their UTF-8 bytes.
func (f *BlockedFilter) HasManyString(keys []string, dst []bool) []bool {
	return f.many(stringList(keys), false, dst)
}

// The counting kind: an Add increments every counter of its key, so each
// key of a group goes through add; the group's counters are read first.

// present returns the mask of the digests in hs whose k counters are all
// above zero, reading every counter without a branch.
func (f *CountingFilter) present(hs []uint64) (mask groupMask) {
	m, k := f.m, uint64(f.k)
	for i, h := range hs {
		x, y := start(h, m)
		all := uint64(1)
		for j := uint64(1); ; j++ {
			all &= (f.counter(x) + 15) >> 4 // 1 for a counter of 1 to 15
			if j == k {
				break
			}
			x, y = step(x, y, j, m)
		}
		mask |= groupMask(all) << (i & 31)
	}
	return mask
}

// touch reads every counter of the digests in hs; it is not inlined, so
// the loads stay although the caller drops the result.
//
//go:noinline
func (f *CountingFilter) touch(hs []uint64) groupMask { return f.present(hs) }

func (f *CountingFilter) many(keys keyList, add bool, dst []bool) []bool {
	dst = grow(dst, keys.len())
	var hs [group]uint64
	for h := keys.next(&hs, f.seed); len(h) > 0; h = keys.next(&hs, f.seed) {
		if !add {
			dst = appendMask(dst, f.present(h), len(h))
			continue
		}
		f.touch(h)
		for _, h := range h {
			dst = append(dst, f.add(h))
		}
	}
	return dst
}

// AddMany is Filter.AddMany for the counting kind: each key's counters go
// up by one, as with Add.
func (f *CountingFilter) AddMany(keys [][]byte, dst []bool) []bool {
	return f.many(bytesList(keys), true, dst)
}

// AddManyString is AddMany for strings, hashed as their UTF-8 bytes.
func (f *CountingFilter) AddManyString(keys []string, dst []bool) []bool {
	return f.many(stringList(keys), true, dst)
}

// HasMany is Filter.HasMany for the counting kind.
func (f *CountingFilter) HasMany(keys [][]byte, dst []bool) []bool {
	return f.many(bytesList(keys), false, dst)
}

// HasManyString is HasMany for strings, hashed as their UTF-8 bytes.
func (f *CountingFilter) HasManyString(keys []string, dst []bool) []bool {
	return f.many(stringList(keys), false, dst)
}

// The layered kinds, scalable and window: a group takes the lock once.
// Their Has is the same; their Add differ.

// presentLocked returns the mask of the digests in hs that some layer
// holds. The caller holds mu.
func (l *layers) presentLocked(hs []uint64) (mask groupMask) {
	for _, f := range l.fs {
		mask |= f.present(hs)
	}
	return mask
}

// hasMany runs a batch of Has on the layered kinds.
func (l *layers) hasMany(keys keyList, dst []bool) []bool {
	dst = grow(dst, keys.len())
	var hs [group]uint64
	for h := keys.next(&hs, l.seed); len(h) > 0; h = keys.next(&hs, l.seed) {
		l.mu.RLock()
		mask := l.presentLocked(h)
		l.mu.RUnlock()
		dst = appendMask(dst, mask, len(h))
	}
	return dst
}

// HasMany is Filter.HasMany for the layered kinds: a key is present when
// any layer holds it.
func (l *layers) HasMany(keys [][]byte, dst []bool) []bool { return l.hasMany(bytesList(keys), dst) }

// HasManyString is HasMany for strings, hashed as their UTF-8 bytes.
func (l *layers) HasManyString(keys []string, dst []bool) []bool {
	return l.hasMany(stringList(keys), dst)
}

// addDigests adds as add does, holding the lock for the group: a key any
// layer held before the group is not new; the others go through the same
// steps as add, in order.
func (s *ScalableFilter) addDigests(hs []uint64, dst []bool) []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	present := s.presentLocked(hs)
	for i, h := range hs {
		fresh := false
		if present>>(i&31)&1 == 0 && !s.hasLocked(h) {
			last := s.fs[len(s.fs)-1]
			if last.Count() >= last.capacity && s.grow() {
				last = s.fs[len(s.fs)-1]
			}
			fresh = last.add(h)
		}
		dst = append(dst, fresh)
	}
	return dst
}

func (s *ScalableFilter) addMany(keys keyList, dst []bool) []bool {
	dst = grow(dst, keys.len())
	var hs [group]uint64
	for h := keys.next(&hs, s.seed); len(h) > 0; h = keys.next(&hs, s.seed) {
		dst = s.addDigests(h, dst)
	}
	return dst
}

// AddMany is Filter.AddMany for the scalable kind, which grows a layer
// when the newest fills, as with Add.
func (s *ScalableFilter) AddMany(keys [][]byte, dst []bool) []bool {
	return s.addMany(bytesList(keys), dst)
}

// AddManyString is AddMany for strings, hashed as their UTF-8 bytes.
func (s *ScalableFilter) AddManyString(keys []string, dst []bool) []bool {
	return s.addMany(stringList(keys), dst)
}

// addDigests adds as add does, holding the lock shared for the group (so
// Rotate waits): a key is new when the newest generation did not hold it
// and no older one does.
func (w *WindowFilter) addDigests(hs []uint64, dst []bool) []bool {
	w.mu.RLock()
	n := len(w.fs) - 1
	var old groupMask
	for _, g := range w.fs[:n] {
		old |= g.present(hs)
	}
	newest := w.fs[n]
	held := newest.present(hs)
	for i, h := range hs {
		dst = append(dst, held>>(i&31)&1 == 0 && newest.addAtomic(h) && old>>(i&31)&1 == 0)
	}
	w.mu.RUnlock()
	return dst
}

func (w *WindowFilter) addMany(keys keyList, dst []bool) []bool {
	dst = grow(dst, keys.len())
	var hs [group]uint64
	for h := keys.next(&hs, w.seed); len(h) > 0; h = keys.next(&hs, w.seed) {
		dst = w.addDigests(h, dst)
	}
	return dst
}

// AddMany is Filter.AddMany for the window kind: keys go into the newest
// generation, and a key is new when no generation held it, as with Add.
func (w *WindowFilter) AddMany(keys [][]byte, dst []bool) []bool {
	return w.addMany(bytesList(keys), dst)
}

// AddManyString is AddMany for strings, hashed as their UTF-8 bytes.
func (w *WindowFilter) AddManyString(keys []string, dst []bool) []bool {
	return w.addMany(stringList(keys), dst)
}
