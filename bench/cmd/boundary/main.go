//go:build js && wasm

// Command boundary measures, in Go's js/wasm port, what the engine's design
// (wasm/main.go) rests on: a call of a syscall/js function with a string
// beside a call of a //go:wasmexport function, the same export with a
// deferred recover, and a collection of a heap of large bitsets.
// bench/js/boundary.mjs builds it and times the calls from Node.
package main

import (
	"runtime"
	"syscall/js"
	"time"
)

func main() {
	js.Global().Set("boundaryViaJS", js.FuncOf(func(this js.Value, args []js.Value) any {
		return len(args[0].String())
	}))
	select {}
}

//go:wasmexport plain
func plain(x int32) int32 { return x + 1 }

//go:wasmexport recovering
func recovering(x int32) (r int32) {
	defer func() {
		if recover() != nil {
			r = -1
		}
	}()
	return x + 1
}

var bitsets [][]uint64

// collect makes n bitsets of mib MiB each, drops them, and returns the
// nanoseconds runtime.GC takes to collect them.
//
//go:wasmexport collect
func collect(n, mib int32) int64 {
	for range n {
		bitsets = append(bitsets, make([]uint64, int(mib)<<17))
	}
	bitsets = nil
	start := time.Now()
	runtime.GC()
	return int64(time.Since(start))
}
