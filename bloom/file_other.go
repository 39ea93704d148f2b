//go:build !js && !wasip1 && !windows && !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package bloom

import "os"

// openWriter opens path for reading and writing, with flag added. These
// systems get no lock.
func openWriter(path string, flag int) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|flag, 0o666)
}

func lockFile(*os.File, string) error { return nil }

// replaceFile renames tmp to path.
func replaceFile(tmp *os.File, path string) (*os.File, error) {
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, err
	}
	return tmp, nil
}

// replaceLocked renames tmp over path and returns the file path names now.
func replaceLocked(held, tmp *os.File, path string) (*os.File, error) {
	if err := os.Rename(tmp.Name(), path); err != nil {
		return held, err
	}
	held.Close()
	return tmp, nil
}

// mapFile does not map here: the payload is read into memory.
func mapFile(*os.File, int, bool) ([]byte, error) { return nil, nil }

func unmapFile([]byte) error { return nil }
