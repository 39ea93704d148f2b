//go:build wasm

package bloom

// presentAsm returns the mask of the n digests at hs whose k positions in
// the m bits at words are all set, as Filter.present does (probe_wasm.s).
// m ≥ 1 and k ≥ 1, and words holds at least m bits.
//
//go:noescape
func presentAsm(words *uint64, m uint64, k uint64, hs *uint64, n int) uint64

// addGroupAsm adds the n keys of digests hs in order, as Filter.add does,
// sets out[i] to 1 when key i was new, else 0, and returns how many were.
// A key whose bit is set in present (all its bits were set before the
// group) is not new and writes nothing (probe_wasm.s).
//
//go:noescape
func addGroupAsm(words *uint64, m uint64, k uint64, hs *uint64, n int, present uint64, out *byte) uint64

// blockedGroupAsm answers the count keys of digests hs in a split-block
// filter of n blocks: it reads every key's block first, without a branch,
// then sets out[i] to 1 when key i is present (add false), or adds the
// keys in order and sets out[i] to 1 when key i was new (add true), as
// addDigest does. It returns how many were new (blockedprobe_wasm.s).
//
//go:noescape
func blockedGroupAsm(blocks *[4]uint64, n uint64, hs *uint64, count int, add bool, out *byte) uint64
