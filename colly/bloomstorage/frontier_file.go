package bloomstorage

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// A listFrontier keeps the frontier in memory and, when it has a file,
// logs every change to it with one write(2) a call, so that a process
// killed at any point (SIGKILL included) leaves a log that replays to the
// frontier as it was: the kernel keeps what was written. Power loss may
// lose the last writes, as it may the filter's; Close syncs both.
//
// The log starts with frontierMagic, then holds records of four kinds:
//
//	'A' uvarint(n) entry[n]   an entry joins the frontier (its number is
//	                          the count of 'A' records before it)
//	'R' uvarint(number)       the entry is marked redo (see entry)
//	'D' uvarint(number)       the entry is done and leaves the frontier
//	'F' uvarint(n) json[n]    a request was given up on (a Failure)
//
// An entry fetched again later is a 'D' of the old one and an 'A' of the
// new one, in one write. Opening replays the log and writes it again with
// only the live entries and the failures (compaction), as does a run whose
// log has grown four times larger than them.
type listFrontier struct {
	mu      sync.Mutex
	path    string   // "" in memory
	f       *os.File // the log, open for appending
	waiting []*item  // in order; waiting[head:] are live
	head    int
	delayed []*item // not due yet, by due time
	taken   map[*item]struct{}
	failed  []failureRecord
	next    uint64 // the number the next 'A' record gets
	records int    // records in the log
	closed  bool

	seen    seen
	stripes *stripes
}

type item struct {
	e   entry
	num uint64
}

const frontierMagic = "edgebloom colly frontier 2\n"

func newMemoryFrontier(seen seen, st *stripes) *listFrontier {
	return &listFrontier{taken: map[*item]struct{}{}, seen: seen, stripes: st}
}

// openFileFrontier opens the log at path, or starts an empty one. The IDs
// of the entries marked redo are added to seen: their run marked them
// before it added them, and may have died between the two.
func openFileFrontier(path string, seen seen, st *stripes) (*listFrontier, error) {
	l := newMemoryFrontier(seen, st)
	l.path = path
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		if err := l.replay(data); err != nil {
			return nil, fmt.Errorf("bloomstorage: frontier %s: %w", path, err)
		}
	}
	for _, it := range append(l.waiting[l.head:], l.delayed...) {
		if it.e.state() == stateRedo {
			if _, err := seen.add(key(it.e.id())); err != nil {
				return nil, err
			}
		}
	}
	if err := l.compact(); err != nil {
		return nil, err
	}
	return l, nil
}

// replay rebuilds the frontier from a log. A record cut short at the end
// (a write torn by a crash) is dropped: it was never acknowledged.
func (l *listFrontier) replay(data []byte) error {
	if !bytes.HasPrefix(data, []byte(frontierMagic)) {
		if bytes.HasPrefix(data, []byte("edgebloom colly frontier ")) {
			return fmt.Errorf("a frontier log of another version (%q); this one reads %q",
				bytes.TrimSpace(data[:min(len(data), len(frontierMagic)+3)]), strings.TrimSpace(frontierMagic))
		}
		return fmt.Errorf("not a frontier log (its first line is not %q)", strings.TrimSpace(frontierMagic))
	}
	r := bytes.NewReader(data[len(frontierMagic):])
	byNum := map[uint64]*item{}
	var order []*item
	for {
		op, err := r.ReadByte()
		if err == io.EOF {
			break
		}
		n, err := binary.ReadUvarint(r)
		if err != nil {
			break // torn
		}
		switch op {
		case 'A', 'F':
			if n > uint64(r.Len()) {
				return l.tail(order, byNum)
			}
			b := make([]byte, n)
			r.Read(b)
			if op == 'F' {
				var f failureRecord
				if err := json.Unmarshal(b, &f); err != nil {
					return fmt.Errorf("failure record %d: %w", len(l.failed), err)
				}
				l.failed = append(l.failed, f)
				continue
			}
			e := entry(b)
			if !e.valid() {
				return fmt.Errorf("entry %d is not an entry", l.next)
			}
			it := &item{e: e, num: l.next}
			byNum[l.next] = it
			order = append(order, it)
			l.next++
		case 'R', 'D':
			it, ok := byNum[n]
			if !ok {
				return fmt.Errorf("record %q names entry %d, which is not live", op, n)
			}
			if op == 'R' {
				it.e[0] = stateRedo
			} else {
				delete(byNum, n)
			}
		default:
			return fmt.Errorf("unknown record %q", op)
		}
	}
	return l.tail(order, byNum)
}

// tail puts the live entries in the frontier: those marked redo first
// (they were being made), then the rest in order; those not due yet wait
// apart.
func (l *listFrontier) tail(order []*item, live map[uint64]*item) error {
	for _, redo := range []bool{true, false} {
		for _, it := range order {
			if _, ok := live[it.num]; ok && (it.e.state() == stateRedo) == redo {
				if it.e.due() != 0 {
					l.delay(it)
				} else {
					l.waiting = append(l.waiting, it)
				}
			}
		}
	}
	return nil
}

// delay puts it among the entries not due yet, in the order of their due
// times.
func (l *listFrontier) delay(it *item) {
	i, _ := slices.BinarySearchFunc(l.delayed, it.e.due(), func(x *item, due int64) int { return cmp.Compare(x.e.due(), due+1) })
	l.delayed = slices.Insert(l.delayed, i, it)
}

// live returns the entries of the frontier: taken, waiting and delayed.
func (l *listFrontier) live() []*item {
	live := make([]*item, 0, len(l.taken)+len(l.waiting)-l.head+len(l.delayed))
	for it := range l.taken {
		live = append(live, it)
	}
	live = append(live, l.waiting[l.head:]...)
	return append(live, l.delayed...)
}

// compact writes the live entries, taken ones first, and the failures to
// a new log and renames it over the old one. l.mu is held or l is not
// shared yet.
func (l *listFrontier) compact() error {
	if l.path == "" {
		return nil
	}
	live := l.live()
	tmp, err := os.CreateTemp(filepath.Dir(l.path), filepath.Base(l.path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	w := bufio.NewWriter(tmp)
	w.WriteString(frontierMagic)
	for i, it := range live {
		it.num = uint64(i)
		w.Write(appendRecord(nil, 'A', it.e))
	}
	for _, f := range l.failed {
		w.Write(appendFailure(nil, f))
	}
	err = w.Flush()
	if err == nil {
		err = tmp.Sync()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), l.path)
	}
	if err != nil {
		tmp.Close()
		return fmt.Errorf("bloomstorage: frontier: %w", err)
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f = tmp // open for writing, at its end, now named l.path
	l.next = uint64(len(live))
	l.records = len(live) + len(l.failed)
	l.waiting = append([]*item(nil), l.waiting[l.head:]...)
	l.head = 0
	return nil
}

func appendRecord(b []byte, op byte, e entry, num ...uint64) []byte {
	b = append(b, op)
	if op == 'A' {
		b = binary.AppendUvarint(b, uint64(len(e)))
		return append(b, e...)
	}
	return binary.AppendUvarint(b, num[0])
}

func appendFailure(b []byte, f failureRecord) []byte {
	j, _ := json.Marshal(f) // a struct of strings and numbers
	b = append(b, 'F')
	b = binary.AppendUvarint(b, uint64(len(j)))
	return append(b, j...)
}

// log writes records to the log in one call. l.mu is held.
func (l *listFrontier) log(b []byte, n int) error {
	if l.closed {
		return ErrClosed
	}
	if l.f == nil {
		return nil
	}
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("bloomstorage: frontier: %w", err)
	}
	l.records += n
	if live := len(l.taken) + len(l.waiting) - l.head + len(l.delayed) + len(l.failed); l.records > 4*live+4096 {
		return l.compact()
	}
	return nil
}

func (l *listFrontier) push(es []entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b []byte
	for _, e := range es {
		b = appendRecord(b, 'A', e)
	}
	if l.closed {
		return ErrClosed
	}
	for _, e := range es {
		l.waiting = append(l.waiting, &item{e: e, num: l.next})
		l.next++
	}
	return l.log(b, len(es))
}

func (l *listFrontier) take() (any, entry, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, nil, false, ErrClosed
	}
	var it *item
	switch {
	case len(l.delayed) > 0 && l.delayed[0].e.due() <= time.Now().UnixMilli():
		it = l.delayed[0]
		l.delayed = slices.Delete(l.delayed, 0, 1)
	case l.head < len(l.waiting):
		it = l.waiting[l.head]
		l.waiting[l.head] = nil
		l.head++
		if l.head > 1024 && l.head*2 > len(l.waiting) {
			l.waiting = append([]*item(nil), l.waiting[l.head:]...)
			l.head = 0
		}
	default:
		return nil, nil, false, nil
	}
	l.taken[it] = struct{}{}
	return it, it.e, true, nil
}

// own tests and adds the request's ID to the visited set, marking the
// entry redo in between: a process killed after the mark leaves an entry
// the next opening adds to the visited set (see openFileFrontier), and
// the stripe keeps this process's other workers out meanwhile.
func (l *listFrontier) own(h any, e entry) (entry, bool, error) {
	if e.state() == stateRedo {
		return e, true, nil
	}
	id := e.id()
	mu := l.stripes.of(id)
	mu.Lock()
	defer mu.Unlock()
	visited, err := l.seen.has(key(id))
	if err != nil || visited {
		return e, false, err
	}
	if err := l.redo(h); err != nil {
		return e, false, err
	}
	if testHookOwning != nil {
		testHookOwning(id)
	}
	// The add tests again: Visited (Colly's own Visit) may have added it
	// since has.
	fresh, err := l.seen.add(key(id))
	return h.(*item).e, fresh, err
}

func (l *listFrontier) redo(h any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	it := h.(*item)
	it.e[0] = stateRedo
	return l.log(appendRecord(nil, 'R', nil, it.num), 1)
}

func (l *listFrontier) done(h any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	it := h.(*item)
	delete(l.taken, it)
	return l.log(appendRecord(nil, 'D', nil, it.num), 1)
}

func (l *listFrontier) again(h any, e entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	it := h.(*item)
	delete(l.taken, it)
	next := &item{e: e, num: l.next}
	l.next++
	l.delay(next)
	return l.log(appendRecord(appendRecord(nil, 'D', nil, it.num), 'A', e), 2)
}

func (l *listFrontier) fail(h any, f Failure, e entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	it := h.(*item)
	delete(l.taken, it)
	r := newFailureRecord(f, e)
	l.failed = append(l.failed, r)
	return l.log(appendFailure(appendRecord(nil, 'D', nil, it.num), r), 2)
}

func (l *listFrontier) failures() ([]Failure, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Failure, len(l.failed))
	for i, r := range l.failed {
		out[i] = r.Failure
	}
	return out, nil
}

// retryFailures moves the failures' entries to the frontier and writes
// the log anew (compact), so that a crash leaves either the failures or
// the entries, never both or neither.
func (l *listFrontier) retryFailures() (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return 0, ErrClosed
	}
	n := 0
	for _, r := range l.failed {
		if e := r.entry(); e != nil {
			l.waiting = append(l.waiting, &item{e: e, num: l.next})
			l.next++
			n++
		}
	}
	l.failed = nil
	return n, l.compact()
}

func (l *listFrontier) release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	back := make([]*item, 0, len(l.taken))
	for it := range l.taken {
		back = append(back, it)
	}
	// In their order: the frontier's numbers grow with it.
	slices.SortFunc(back, func(a, b *item) int { return cmp.Compare(a.num, b.num) })
	clear(l.taken)
	l.waiting = append(back, l.waiting[l.head:]...)
	l.head = 0
	return nil
}

func (l *listFrontier) size() (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.waiting) - l.head + len(l.delayed), nil
}

func (l *listFrontier) busy() (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.delayed) > 0, nil
}

func (l *listFrontier) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	err := l.compact()
	l.closed = true
	if l.f != nil {
		if cerr := l.f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
