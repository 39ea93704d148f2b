//go:build linux

package bench

import (
	"syscall"
	"testing"
	"unsafe"
)

// BenchmarkHugePages is a random probe of a 12 MiB bitset, as a large
// filter's, on 4 KiB pages and on transparent huge pages, the choice
// bloom/hugepage_linux.go makes for bitsets of 4 MiB or more. Each is
// mapped and advised alike (MADV_NOHUGEPAGE, MADV_HUGEPAGE) before its
// first write, so only the page size differs. Where the kernel's huge
// pages are off ("never") both run on 4 KiB pages.
//
//	go test -run '^$' -bench HugePages -count 5 .
func BenchmarkHugePages(b *testing.B) {
	const size = 12 << 20
	for _, c := range []struct {
		name   string
		advice int
	}{{"4KiB", syscall.MADV_NOHUGEPAGE}, {"huge", syscall.MADV_HUGEPAGE}} {
		b.Run(c.name, func(b *testing.B) {
			mem, err := syscall.Mmap(-1, 0, size+2<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
			if err != nil {
				b.Fatal(err)
			}
			defer syscall.Munmap(mem)
			// The 2 MiB-aligned 12 MiB inside the mapping.
			skip := (2<<20 - int(uintptr(unsafe.Pointer(&mem[0])))%(2<<20)) % (2 << 20)
			region := mem[skip : skip+size]
			if err := syscall.Madvise(region, c.advice); err != nil {
				b.Fatalf("madvise: %v", err)
			}
			words := unsafe.Slice((*uint64)(unsafe.Pointer(&region[0])), size/8)
			for i := range words {
				words[i] = uint64(i) * 0x9e3779b97f4a7c15
			}
			x, sum := uint64(0x2545f4914f6cdd1d), uint64(0)
			b.ResetTimer()
			for range b.N {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				sum += words[x%uint64(len(words))] >> (x & 63) & 1
			}
			sink = sum
		})
	}
}

var sink uint64
