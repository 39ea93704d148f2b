package bloom

import (
	"syscall"
	"unsafe"
)

const hugePage = 2 << 20 // bytes, the transparent huge page size of x86-64 and most arm64 kernels

// adviseHugePages asks Linux to back the 2 MiB-aligned inside of a new bitset
// of at least 4 MiB (about 3.5 M keys at 1%) with transparent huge pages,
// before its first write. Positions are random, so each probe of a large
// filter is also a TLB miss on 4 KiB pages, which huge pages take away
// (bench/README.md, "Figures the code's design rests on"). It is a hint:
// where transparent huge pages are off ("never"), unsupported or refused,
// nothing changes, and errors are ignored. With the default "madvise" setting
// only memory advised so gets huge pages; Go's heap is not.
func adviseHugePages(words []uint64) {
	size := uintptr(len(words)) * 8
	if size < 2*hugePage {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), size)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := (p+hugePage-1)&^(hugePage-1) - p
	end := (p+size)&^(hugePage-1) - p
	syscall.Madvise(b[start:end], syscall.MADV_HUGEPAGE)
}
