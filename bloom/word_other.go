//go:build !wasm

package bloom

import "sync/atomic"

// load64, or64 and and64 are the word operations of SyncFilter and of the
// kinds that add in parallel (WindowFilter, FileFilter): atomic, so that
// goroutines may Add and Has at once without locks. On amd64 and arm64 the
// load is a plain load and the OR, whose old value is not used, one
// instruction (LOCK OR on amd64). Filter uses plain loads and ORs instead.

func load64(p *uint64) uint64 { return atomic.LoadUint64(p) }

func or64(p *uint64, v uint64) { atomic.OrUint64(p, v) }

func and64(p *uint64, v uint64) { atomic.AndUint64(p, v) }

func add64(p *uint64, v uint64) { atomic.AddUint64(p, v) }
