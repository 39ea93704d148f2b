//go:build !js && !wasip1

package bloom_test

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"

	"github.com/edgebloom/edgebloom/bloom"
)

// docs/go.md's file-backed seen-set: the file is at every moment a filter in
// the portable format, and a reader opens it while the writer has it.
func ExampleCreate() {
	dir, err := os.MkdirTemp("", "edgebloom-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	url := "https://example.com/"

	ff, err := bloom.Create(filepath.Join(dir, "seen.bloom"), 10_000_000, 0.001) // or bloom.Open / bloom.OpenReadOnly
	if err != nil {
		log.Fatal(err)
	}
	ff.AddString(url)
	ff.Sync()  // durable: a process killed later still finds every key added before this
	ff.Close() // syncs; a second writer of the file gets bloom.ErrLocked meanwhile

	ro, err := bloom.OpenReadOnly(filepath.Join(dir, "seen.bloom"))
	if err != nil {
		log.Fatal(err)
	}
	defer ro.Close()
	fmt.Println(ro.HasString(url), ro.Count())
	// Output: true 1
}

// docs/go.md's open-or-create: the first run makes the file, every later
// one opens it and finds what the earlier runs added.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "edgebloom-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "seen.bloom")
	for run, url := range []string{"https://example.com/", "https://example.org/"} {
		func() {
			ff, err := bloom.Open(path) // the seen-set of the runs before
			if errors.Is(err, fs.ErrNotExist) {
				ff, err = bloom.Create(path, 10_000_000, 0.001) // the first run: a new file
			}
			if err != nil {
				log.Fatal(err) // bloom.ErrLocked: another process has it open; or a file that is no filter
			}
			defer ff.Close()

			fmt.Println(run, ff.AddString(url), ff.Count())
		}()
	}
	// Output:
	// 0 true 1
	// 1 true 2
}
