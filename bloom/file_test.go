//go:build !js && !wasip1

package bloom

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// bothModes runs test with the file mapped (where the platform maps) and
// read into memory.
func bothModes(t *testing.T, test func(t *testing.T)) {
	mapped := mapFiles
	t.Run("mapped", func(t *testing.T) {
		if !mapped {
			t.Skip("files are not mapped on this platform")
		}
		test(t)
	})
	t.Run("read", func(t *testing.T) {
		mapFiles = false
		defer func() { mapFiles = mapped }()
		test(t)
	})
}

func tempPath(t *testing.T) string { return filepath.Join(t.TempDir(), "seen.bloom") }

// TestFileRoundTrip creates, fills, syncs, closes and opens again, in both
// modes, and checks every answer against an in-memory filter.
func TestFileRoundTrip(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		path := tempPath(t)
		ff := must(Create(path, 2000, 0.01))
		mem := must(New(2000, 0.01))
		var buf []byte
		for i := range 1500 {
			buf = urlKey(buf, "a", i)
			var got, want bool
			if i%2 == 0 {
				got, want = ff.Add(buf), mem.Add(buf)
			} else {
				got, want = ff.AddString(string(buf)), mem.AddString(string(buf))
			}
			if got != want {
				t.Fatalf("Add(%q): got %v; in memory %v", buf, got, want)
			}
		}
		checkFileStats(t, ff, mem)
		if err := ff.Err(); err != nil {
			t.Errorf("Err: %v", err)
		}
		if err := ff.Sync(); err != nil {
			t.Fatalf("Sync: %v", err)
		}
		if err := ff.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := ff.Close(); !errors.Is(err, os.ErrClosed) {
			t.Errorf("second Close: got %v; want os.ErrClosed", err)
		}

		ff = must(Open(path))
		checkHasAll(t, ff, "a", 1500)
		checkFileStats(t, ff, mem)
		addKeys(ff, "b", 100)
		addKeys(mem, "b", 100)
		if err := ff.Close(); err != nil { // Close syncs
			t.Fatalf("Close: %v", err)
		}

		ro := must(OpenReadOnly(path))
		defer ro.Close()
		checkHasAll(t, ro, "b", 100)
		checkFileStats(t, ro, mem)
		if ro.AddString("https://example.com/new") || ro.HasString("https://example.com/new") {
			t.Errorf("Add on a read-only filter: got true or changed it; want false and no change")
		}
		if err := ro.Err(); !errors.Is(err, ErrReadOnly) {
			t.Errorf("Err after Add on a read-only filter: got %v; want ErrReadOnly", err)
		}
		if err := ro.Sync(); !errors.Is(err, ErrReadOnly) {
			t.Errorf("Sync on a read-only filter: got %v; want ErrReadOnly", err)
		}
		if err := ro.Union(mem); !errors.Is(err, ErrReadOnly) {
			t.Errorf("Union on a read-only filter: got %v; want ErrReadOnly", err)
		}
	})
}

func checkFileStats(t *testing.T, ff *FileFilter, mem *Filter) {
	t.Helper()
	if !ff.Clone().Equal(mem) || ff.NumBits() != mem.NumBits() || ff.NumHashes() != mem.NumHashes() || ff.Seed() != 0 {
		t.Errorf("bits, m, k or seed differ from the in-memory filter")
	}
	if ff.Count() != mem.Count() || ff.SetBits() != mem.SetBits() || ff.Capacity() != mem.Capacity() || ff.TargetFPR() != mem.TargetFPR() {
		t.Errorf("Count, SetBits, Capacity, TargetFPR: got %d, %d, %d, %g; want %d, %d, %d, %g",
			ff.Count(), ff.SetBits(), ff.Capacity(), ff.TargetFPR(), mem.Count(), mem.SetBits(), mem.Capacity(), mem.TargetFPR())
	}
	if ff.FillRatio() != mem.FillRatio() || ff.EstimatedCount() != mem.EstimatedCount() || ff.EstimatedFPR() != mem.EstimatedFPR() || ff.OverCapacity() != mem.OverCapacity() {
		t.Errorf("FillRatio, EstimatedCount, EstimatedFPR or OverCapacity differ from the in-memory filter")
	}
	if b, want := must(ff.MarshalBinary()), must(mem.MarshalBinary()); !bytes.Equal(b, want) || ff.EncodedSize() != uint64(len(want)) {
		t.Errorf("MarshalBinary differs from the in-memory filter's")
	}
}

// TestFileIsEncoding checks that a synced file is, byte for byte, the
// in-memory filter's encoding, which Decode reads.
func TestFileIsEncoding(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		path := tempPath(t)
		ff := must(Create(path, 1000, 0.001))
		defer ff.Close()
		mem := must(New(1000, 0.001))
		empty := must(os.ReadFile(path))
		if want := must(mem.MarshalBinary()); !bytes.Equal(empty, want) {
			t.Errorf("new file: got %d bytes; want the %d of an empty filter's encoding", len(empty), len(want))
		}
		addKeys(ff, "a", 700)
		addKeys(mem, "a", 700)
		if err := ff.Sync(); err != nil {
			t.Fatal(err)
		}
		b := must(os.ReadFile(path))
		if want := must(mem.MarshalBinary()); !bytes.Equal(b, want) {
			t.Errorf("synced file differs from MarshalBinary")
		}
		g, err := Decode(bytes.NewReader(b), DefaultMaxBits)
		if err != nil || !g.Equal(mem) || g.Count() != 700 {
			t.Errorf("Decode of the file: %v; want the in-memory filter with Count 700", err)
		}
		info, err := Inspect(b, MaxBits)
		if err != nil || info.Dirty || info.Kind != "classic" {
			t.Errorf("Inspect: %+v, %v; want a clean classic filter", info, err)
		}
	})
}

// TestFileDirty copies the file between a change and the next Sync, which
// is what a killed writer leaves, and opens the copy.
func TestFileDirty(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		path := tempPath(t)
		ff := must(Create(path, 1000, 0.01))
		defer ff.Close()
		addKeys(ff, "a", 300)
		if err := ff.Sync(); err != nil {
			t.Fatal(err)
		}
		addKeys(ff, "b", 300)
		b := must(os.ReadFile(path))
		if b[offFlags] != flagDirty {
			t.Fatalf("flags after Add without Sync: got %d; want %d (dirty)", b[offFlags], flagDirty)
		}
		if _, err := Decode(bytes.NewReader(b), DefaultMaxBits); !errors.Is(err, ErrChecksum) {
			t.Errorf("Decode of a dirty file: got %v; want ErrChecksum", err)
		}
		if info, err := Inspect(b, MaxBits); err != nil || !info.Dirty {
			t.Errorf("Inspect of a dirty file: %+v, %v; want Dirty", info, err)
		}

		crashed := filepath.Join(t.TempDir(), "crashed.bloom")
		if err := os.WriteFile(crashed, b, 0o644); err != nil {
			t.Fatal(err)
		}
		ro := must(OpenReadOnly(crashed))
		checkHasAll(t, ro, "a", 300)
		if got := must(os.ReadFile(crashed)); !bytes.Equal(got, b) {
			t.Errorf("OpenReadOnly of a dirty file changed it")
		}
		ro.Close()

		g := must(Open(crashed))
		checkHasAll(t, g, "a", 300)
		if c := g.Count(); c < 300 {
			t.Errorf("Count after repair: got %d; want the estimate, at least 300", c)
		}
		repaired := must(os.ReadFile(crashed))
		if _, err := Decode(bytes.NewReader(repaired), DefaultMaxBits); err != nil {
			t.Errorf("Decode after Open repaired the file: %v", err)
		}
		g.Close()
	})
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := must(must(New(100, 0.01)).MarshalBinary())
	corrupt := bytes.Clone(good)
	corrupt[headerSize] ^= 1
	for _, tt := range []struct {
		name string
		path string
		want error
	}{
		{"missing", filepath.Join(dir, "missing"), os.ErrNotExist},
		{"empty", write("empty", nil), io.ErrUnexpectedEOF},
		{"not a filter", write("text", bytes.Repeat([]byte("not a filter\n"), 10)), ErrNotFilter},
		{"truncated", write("truncated", good[:len(good)-1]), io.ErrUnexpectedEOF},
		{"trailing bytes", write("trailing", append(bytes.Clone(good), 0)), ErrCorrupt},
		{"checksum", write("checksum", corrupt), ErrChecksum},
		{"counting", write("counting", must(must(NewCounting(100, 0.01)).MarshalBinary())), ErrKind},
	} {
		for _, open := range []func(string) (*FileFilter, error){Open, OpenReadOnly} {
			ff, err := open(tt.path)
			if ff != nil || !errors.Is(err, tt.want) {
				t.Errorf("%s: got %v, %v; want %v", tt.name, ff, err, tt.want)
			}
		}
	}
	if got := must(os.ReadFile(filepath.Join(dir, "checksum"))); !bytes.Equal(got, corrupt) {
		t.Errorf("Open of a corrupt file changed it")
	}
	var ae *ArgError
	if _, err := Create(filepath.Join(dir, "bad"), 0, 0.01); !errors.As(err, &ae) {
		t.Errorf("Create with capacity 0: got %v; want an ArgError", err)
	}
	if _, err := Create(filepath.Join(dir, "no", "such", "dir"), 10, 0.01); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Create in a missing directory: got %v; want os.ErrNotExist", err)
	}
}

func TestFileLock(t *testing.T) {
	switch runtime.GOOS {
	case "plan9", "solaris", "illumos", "aix":
		t.Skip("no file lock on " + runtime.GOOS)
	}
	path := tempPath(t)
	ff := must(Create(path, 1000, 0.01))
	ff.AddString("https://example.com/")
	if err := ff.Sync(); err != nil {
		t.Fatal(err)
	}
	before := must(os.ReadFile(path))
	if g, err := Open(path); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Errorf("second Open for writing: got %v, %v; want ErrLocked naming the file", g, err)
	}
	if g, err := Create(path, 10, 0.5); !errors.Is(err, ErrLocked) {
		t.Errorf("Create over a file open for writing: got %v, %v; want ErrLocked", g, err)
	}
	if got := must(os.ReadFile(path)); !bytes.Equal(got, before) {
		t.Errorf("a refused Create changed the file")
	}
	ro := must(OpenReadOnly(path))
	defer ro.Close()
	if !ro.HasString("https://example.com/") {
		t.Errorf("reader: HasString of a synced key: got false; want true")
	}
	if mapFiles {
		// The reader maps the same pages: it sees new keys at once.
		ff.AddString("https://example.com/later")
		if !ro.HasString("https://example.com/later") {
			t.Errorf("mapped reader: HasString of a key the writer just added: got false; want true")
		}
	}
	if err := ff.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := Open(path)
	if err != nil {
		t.Fatalf("Open after the writer closed: %v", err)
	}
	g.Close()
}

func TestFileUseAfterClose(t *testing.T) {
	ff := must(Create(tempPath(t), 10, 0.01))
	ff.Close()
	if err := ff.Sync(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Sync after Close: got %v; want os.ErrClosed", err)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Errorf("Has after Close: no panic")
		}
	}()
	ff.HasString("x")
}

// TestFileConcurrent adds from many goroutines while another syncs; run
// with -race.
func TestFileConcurrent(t *testing.T) {
	path := tempPath(t)
	ff := must(Create(path, 50_000, 0.01))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := range 5000 {
				buf = urlKey(buf, "c"+strconv.Itoa(g), i)
				ff.Add(buf)
				if !ff.Has(buf) {
					t.Errorf("Has right after Add: got false")
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 5 {
			if err := ff.Sync(); err != nil {
				t.Error(err)
			}
			ff.Count()
		}
	}()
	wg.Wait()
	if err := ff.Close(); err != nil {
		t.Fatal(err)
	}
	g := must(Open(path))
	defer g.Close()
	for i := range 4 {
		checkHasAll(t, g, "c"+strconv.Itoa(i), 5000)
	}
}

// The crash test: a child process (this test binary, run again) adds keys
// to a file and syncs now and then, printing "synced N" after each Sync
// once keys 0..N-1 are in; the parent kills it at a random moment, opens
// the file and checks for those keys.
const crashEnv = "EDGEBLOOM_CRASH_CHILD"

func TestFileCrashChild(t *testing.T) {
	spec := os.Getenv(crashEnv)
	if spec == "" {
		t.Skip("run by TestFileCrash")
	}
	path, name, _ := strings.Cut(spec, "|")
	ff, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("started\n")
	rng := rand.New(rand.NewPCG(sumString(name, 0), 1))
	next := 1 + rng.IntN(300)
	var buf []byte
	for i := 0; ; i++ {
		if i == next {
			if err := ff.Sync(); err != nil {
				t.Fatal(err)
			}
			os.Stdout.WriteString("synced " + strconv.Itoa(i) + "\n")
			next = i + 1 + rng.IntN(300)
		}
		buf = urlKey(buf, name, i)
		ff.Add(buf)
	}
}

func TestFileCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no executable to run again:", err)
	}
	path := tempPath(t)
	ff := must(Create(path, 1_000_000, 0.01))
	if err := ff.Close(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(6, 2024))
	synced := map[string]int{} // keys of each run that must be present
	dirty := 0                 // runs that left a dirty file
	deadline := time.Now().Add(30 * time.Second)
	for run := 0; run < 20 && time.Now().Before(deadline); run++ {
		name := "run" + strconv.Itoa(run)
		cmd := testCommand(exe, "-test.run=^TestFileCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path+"|"+name)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		last := make(chan int)
		started := make(chan struct{})
		go func() {
			n := 0
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == "started" {
					close(started)
				} else if s, ok := strings.CutPrefix(sc.Text(), "synced "); ok {
					n, _ = strconv.Atoi(s)
				}
			}
			last <- n
		}()
		// Once the child has opened the file (its start takes from a few
		// milliseconds to a second, on a loaded machine or an emulator),
		// kill it anywhere from before its first Sync to well into its run.
		select {
		case <-started:
		case <-time.After(time.Until(deadline) + 30*time.Second):
			cmd.Process.Kill()
			t.Fatalf("run %d: the child did not open the file: %s", run, stderr.String())
		}
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		cmd.Process.Kill() // SIGKILL on unix: no deferred call, no Close
		synced[name] = <-last
		state, _ := cmd.Process.Wait()
		if state != nil && state.Success() {
			t.Fatalf("run %d: the child ended by itself: %s", run, stderr.String())
		}

		if b := must(os.ReadFile(path)); b[offFlags]&flagDirty != 0 {
			dirty++
		}
		g, err := Open(path)
		if err != nil {
			t.Fatalf("run %d: Open after a kill: %v (child: %s)", run, err, stderr.String())
		}
		for n, s := range synced {
			checkHasAll(t, g, n, s)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(bytes.NewReader(must(os.ReadFile(path))), DefaultMaxBits); err != nil {
			t.Fatalf("run %d: Decode after Open repaired the file: %v", run, err)
		}
		t.Logf("run %d: killed after %d synced keys", run, synced[name])
	}
	if dirty == 0 {
		t.Errorf("no run left a dirty file: the kills missed the time between Syncs")
	}
}

// TestFileReplace checks that files are replaced by rename, never in place
// and never over a writer: a reader of the old file keeps reading it whole
// (in place, its mapping would fault past the new end), and Create,
// WriteFile, LockFile and Open all refuse a file that a writer holds.
func TestFileReplace(t *testing.T) {
	switch runtime.GOOS {
	case "plan9", "solaris", "illumos", "aix", "windows":
		t.Skip("no file lock, or no rename of an open file, on " + runtime.GOOS)
	}
	bothModes(t, func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "seen.bloom")
		ff := must(Create(path, 100_000, 0.01))
		checkAddAll(t, ff, "old", 1000)
		if err := ff.Close(); err != nil {
			t.Fatal(err)
		}
		old := must(OpenReadOnly(path))
		defer old.Close()

		// A smaller filter replaces the file; the reader keeps the old one.
		ff = must(Create(path, 10, 0.01))
		checkHasAll(t, old, "old", 1000)
		if old.NumBits() == ff.NumBits() {
			t.Fatalf("the new filter has the old one's size")
		}

		mem := must(New(10, 0.01))
		for _, replace := range []func() error{
			func() error { _, err := Create(path, 10, 0.01); return err },
			func() error { return WriteFile(path, mem) },
			func() error { _, err := LockFile(path); return err },
			func() error { _, err := Open(path); return err },
		} {
			if err := replace(); !errors.Is(err, ErrLocked) {
				t.Errorf("while Create's filter is open: got %v; want ErrLocked", err)
			}
		}
		ff.AddString("kept")
		if err := ff.Close(); err != nil {
			t.Fatal(err)
		}
		if g := must(OpenReadOnly(path)); !g.HasString("kept") {
			t.Errorf("a refused replace lost the writer's key")
		}

		// A FileLock excludes writers, and keeps excluding them after its
		// Replace: the lock moves to the new file.
		l := must(LockFile(path))
		mem.AddString("replaced")
		for i := range 2 {
			if err := WriteFile(path, mem); !errors.Is(err, ErrLocked) {
				t.Errorf("WriteFile over a FileLock (%d): got %v; want ErrLocked", i, err)
			}
			if _, err := Open(path); !errors.Is(err, ErrLocked) {
				t.Errorf("Open under a FileLock (%d): got %v; want ErrLocked", i, err)
			}
			if err := l.Replace(mem); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		g := must(Open(path))
		if !g.HasString("replaced") || g.HasString("kept") && g.NumBits() != mem.NumBits() {
			t.Errorf("after FileLock.Replace: the file does not hold the new filter")
		}
		g.Close()
		if err := WriteFile(path, mem); err != nil {
			t.Errorf("WriteFile of a free file: %v", err)
		}
		if tmp, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(tmp) > 0 {
			t.Errorf("temporary files left behind: %v", tmp)
		}
	})
}

// TestFileTruncated checks that a file shorter or longer than its header
// says is refused before it is mapped, with both lengths in the error.
func TestFileTruncated(t *testing.T) {
	path := tempPath(t)
	ff := must(Create(path, 1000, 0.01))
	size := int64(ff.EncodedSize())
	ff.Close()
	for _, n := range []int64{size / 2, size + 100} {
		if err := os.Truncate(path, n); err != nil {
			t.Fatal(err)
		}
		want := io.ErrUnexpectedEOF
		if n > size {
			want = ErrCorrupt
		}
		_, err := OpenReadOnly(path)
		if !errors.Is(err, want) || !strings.Contains(err.Error(), strconv.FormatInt(n, 10)+" bytes, its header says "+strconv.FormatInt(size, 10)) {
			t.Errorf("OpenReadOnly of a %d-byte file: got %v; want %v with both lengths", n, err, want)
		}
	}
}

func checkAddAll(t *testing.T, ff *FileFilter, name string, n int) {
	t.Helper()
	var buf []byte
	for i := range n {
		buf = urlKey(buf, name, i)
		ff.Add(buf)
	}
}

// testCommand runs this test binary again with args. Where go test runs it
// through an emulator (-exec qemu-arm, named again in EDGEBLOOM_TEST_EXEC:
// the 32-bit run on a kernel without IA32 emulation), the child runs under
// it too.
func testCommand(exe string, args ...string) *exec.Cmd {
	if emulator := os.Getenv("EDGEBLOOM_TEST_EXEC"); emulator != "" {
		return exec.Command(emulator, append([]string{exe}, args...)...)
	}
	return exec.Command(exe, args...)
}
