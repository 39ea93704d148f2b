//go:build !wasm

package bloom

import "sync/atomic"

// load64 and or64 are the word operations of the hot path: atomic, so that
// goroutines may Add and Has at once without locks. On amd64 and arm64 the
// load is a plain load and the OR, whose old value is not used, one
// instruction.

func load64(p *uint64) uint64 { return atomic.LoadUint64(p) }

func or64(p *uint64, v uint64) { atomic.OrUint64(p, v) }
