//go:build wasm

package bloom

// presentAsm returns the mask of the n digests at hs whose k positions in
// the m bits at words are all set, as Filter.present does (probe_wasm.s).
// m ≥ 1 and k ≥ 1, and words holds at least m bits.
//
//go:noescape
func presentAsm(words *uint64, m uint64, k uint64, hs *uint64, n int) uint64
