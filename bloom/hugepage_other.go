//go:build !linux

package bloom

// adviseHugePages does nothing where transparent huge pages are a Linux
// feature only (see hugepage_linux.go).
func adviseHugePages([]uint64) {}
