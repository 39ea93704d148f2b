//go:build wasm

package bloom

// On wasm, Go runs one goroutine at a time on one thread and switches
// goroutines only at calls, so a plain load or store of a word is already
// atomic with respect to every other goroutine. sync/atomic's functions are
// real calls there, and were the largest cost of an Add in the npm module.

func load64(p *uint64) uint64 { return *p }

func or64(p *uint64, v uint64) { *p |= v }

func and64(p *uint64, v uint64) { *p &= v }

func add64(p *uint64, v uint64) { *p += v }
