//go:build js && wasm

package main

// lengths returns the sum of ls and whether one of them is above limit. It
// takes four lengths a turn and tests them without a branch: in Go's wasm
// code every taken branch, a loop's included, is a jump through the
// function's dispatch loop, and a batch's lengths are checked on every
// call.
func lengths(ls []uint32, limit uint32) (total uint64, over bool) {
	var above uint64 // bit 63 set once a length was above limit
	lim := uint64(limit)
	for ; len(ls) >= 4; ls = ls[4:] {
		a, b, c, d := uint64(ls[0]), uint64(ls[1]), uint64(ls[2]), uint64(ls[3])
		total += a + b + c + d
		above |= (lim - a) | (lim - b) | (lim - c) | (lim - d)
	}
	for _, l := range ls {
		total += uint64(l)
		above |= lim - uint64(l)
	}
	return total, above>>63 != 0
}
