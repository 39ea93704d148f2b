package bloomstorage

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log"
	"net/url"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	whatwgURL "github.com/nlnwa/whatwg-url/url"
)

// An entry is one request of the frontier as it is stored:
//
//	[0]      state
//	[1:9]    the request's Colly ID, little-endian (the visited set's key)
//	[9]      the fetches that failed so far
//	[10:18]  the Unix time in milliseconds before which it is not made
//	         again (0: at once), little-endian
//	[18:34]  the claim under which a Redis frontier added it (see own)
//	[34:]    the request as colly.Request.Marshal writes it
//
// The state is stateNew for a request not yet tested against the visited
// set; stateRedo for one a run added to the visited set, to be made
// without testing it again (one being made when its run ended or died,
// or one waiting to be fetched again); and, in a Redis frontier,
// stateClaim for one whose run may have added it, under its claim.
type entry []byte

const (
	stateNew   = 'n'
	stateRedo  = 'r'
	stateClaim = 'c'
	entryHead  = 34
)

func newEntry(id uint64, req []byte) entry {
	e := make(entry, entryHead, entryHead+len(req))
	e[0] = stateNew
	binary.LittleEndian.PutUint64(e[1:], id)
	return append(e, req...)
}

func (e entry) valid() bool {
	return len(e) > entryHead && (e[0] == stateNew || e[0] == stateRedo || e[0] == stateClaim)
}
func (e entry) state() byte     { return e[0] }
func (e entry) id() uint64      { return binary.LittleEndian.Uint64(e[1:]) }
func (e entry) failed() int     { return int(e[9]) }
func (e entry) due() int64      { return int64(binary.LittleEndian.Uint64(e[10:])) }
func (e entry) claim() string   { return hex.EncodeToString(e[18:entryHead]) }
func (e entry) request() []byte { return e[entryHead:] }

// with returns a copy of e in state, with claim when it is not nil.
func (e entry) with(state byte, claim []byte) entry {
	c := append(entry(nil), e...)
	c[0] = state
	if claim != nil {
		copy(c[18:entryHead], claim)
	}
	return c
}

// again returns the copy of e to fetch again: in stateRedo, one more
// failed fetch, not before due.
func (e entry) again(due time.Time) entry {
	c := e.with(stateRedo, nil)
	if c[9] < 255 {
		c[9]++
	}
	binary.LittleEndian.PutUint64(c[10:], uint64(due.UnixMilli()))
	return c
}

// A frontier is the persisted list of requests not yet made, and of those
// given up on. Entries taken and not done stay in it: a run that ends or
// dies puts them back for the next one.
type frontier interface {
	// push appends entries.
	push(es []entry) error
	// take returns the next entry that is due and a handle of it, or ok
	// false when no entry is due.
	take() (h any, e entry, ok bool, err error)
	// own decides whether this run makes the taken entry, and returns it
	// as stored then: the request's ID is tested and added to the visited
	// set so that, of all runs and processes, whatever dies when, one
	// makes it (see Storage.Run).
	own(h any, e entry) (entry, bool, error)
	// done removes a taken entry: it was made, or need not be.
	done(h any) error
	// again replaces a taken entry by e, to be made again once due.
	again(h any, e entry) error
	// fail removes a taken entry, e, and records it as given up on.
	fail(h any, f Failure, e entry) error
	// A shared frontier's own, done, again and fail return errTakenOver,
	// and change nothing, when the entry was taken over.
	// failures lists the requests given up on, oldest first.
	failures() ([]Failure, error)
	// retryFailures puts the entries given up on back, and forgets their
	// failures.
	retryFailures() (int, error)
	// release puts the entries this run took and did not finish back at
	// the head, in their states.
	release() error
	// size is the number of entries waiting, due or not, taken ones not
	// counted.
	size() (int, error)
	// busy reports whether there may be more to take: entries waiting to
	// be due, another process that holds taken entries of a shared
	// frontier (it may push more), or those of processes that died, which
	// busy put back.
	busy() (bool, error)
	close() error
}

// testHookOwning, when set by a test, is called after a run marked an
// entry as its own in the frontier and before it adds the request to the
// visited set: where a process killed leaves a request marked and not
// visited.
var testHookOwning func(id uint64)

// ErrRunning is returned by Run when the storage's frontier is already
// being run.
var ErrRunning = errors.New("bloomstorage: Run called while the frontier runs")

// errTakenOver is returned by a shared frontier's own, done, again and fail
// when the taken entry is no longer the run's: its process did not renew
// its lease in time (paused, say) and the entry went back to the frontier
// for the others. Nothing changed; Run drops the outcome with a log line.
var errTakenOver = errors.New("taken over by another collector: this one did not renew its lease (RedisLease) in time")

// ErrClosed is returned by the frontier's methods after Close.
var ErrClosed = errors.New("bloomstorage: storage closed")

var urlParser = whatwgURL.NewParser(whatwgURL.WithPercentEncodeSinglePercentSign())

// requestID is Colly's ID of a request (its requestHash, unexported in
// colly v2.3.0): FNV-1a of the URL as the WHATWG parser writes it, then
// of the body. The visited set holds these IDs, so that Colly's own
// checks (Request.Visit, Collector.HasVisited) and the frontier's agree;
// TestRequestID checks the two against each other.
func requestID(u string, body []byte) uint64 {
	if p, err := urlParser.Parse(u); err == nil {
		u = p.String()
	}
	h := fnv.New64a()
	h.Write([]byte(u))
	h.Write(body)
	return h.Sum64()
}

// AddURL adds a GET request of rawURL to the frontier, unless it was
// visited already: then it returns an error wrapping ErrVisited. The
// frontier is persisted with the visited set (see Run).
func (s *Storage) AddURL(rawURL string) error {
	p, err := urlParser.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("bloomstorage: %w", err)
	}
	u, err := url.Parse(p.Href(false))
	if err != nil {
		return fmt.Errorf("bloomstorage: %w", err)
	}
	return s.AddRequest(&colly.Request{URL: u, Method: "GET"})
}

// AddRequest adds r (its method, URL, body, headers, depth and context,
// as r.Marshal keeps them) to the frontier, unless it was visited
// already: then it returns an error wrapping ErrVisited. When the visited
// set cannot be asked, the request joins the frontier all the same.
func (s *Storage) AddRequest(r *colly.Request) error {
	if r.URL == nil {
		return errors.New("bloomstorage: AddRequest: a request without a URL")
	}
	var body []byte
	if r.Body != nil {
		b := new(bytes.Buffer)
		if _, err := b.ReadFrom(r.Body); err != nil {
			return err
		}
		body = b.Bytes()
		r.Body = bytes.NewReader(body)
	}
	req, err := r.Marshal()
	if err != nil {
		return err
	}
	if r.Body != nil {
		r.Body = bytes.NewReader(body)
	}
	id := requestID(r.URL.String(), body)
	// A visited set that cannot be asked now (a service filter's 502 after
	// its retries) loses no link: the frontier keeps the request, and Run
	// tests it when it takes it.
	if v, err := s.seen.has(key(id)); err == nil && v {
		return fmt.Errorf("%w (%s)", ErrVisited, r.URL)
	}
	return s.front.push([]entry{newEntry(id, req)})
}

// QueueSize returns the number of requests waiting in the frontier; those
// being made are not counted.
func (s *Storage) QueueSize() (int, error) { return s.front.size() }

// Run makes the frontier's requests with c, threads at a time, until none
// is left, c refuses one for its MaxRequests, or Stop or Close is called.
// Links that c's callbacks pass to AddURL or AddRequest join the
// frontier; Run returns once every request it started has finished.
//
// Run makes each request once: it tests and adds its ID to the visited
// set as Visited does, and marks it in the frontier as its own in the same
// step (see Marked and killed below), makes it (colly.Request.Retry, as
// Colly's own check was done), and removes it from the frontier when Colly
// returns. A request that Colly refused for its MaxRequests, and one being
// made when the process was killed, stay in the frontier marked, and the
// next Run makes them without testing the visited set. c must not be
// asynchronous (colly.Async): Run needs each request to be finished when
// Colly returns it.
//
// A fetch that fails calls c's OnError callbacks, as Colly always does;
// then Run fetches the request again or gives up on it as the storage's
// Retry says (SetRetry; DefaultRetry tries 3 times): a request waiting to
// be fetched again stays in the frontier, and Run waits for it before it
// returns. Do not call Request.Retry from OnError: Run does.
//
// Marked and killed: a file storage writes the mark to its log before it
// adds the ID, and adds the IDs of every marked request when it opens the
// log again. A Redis storage marks the request with a random claim, then
// adds the ID under that claim in one atomic step
// (redisfilter.Filter.AddClaimed): a collector that picks up a killed
// one's marked request asks with the same claim whether the add was the
// dead one's, and makes the request only then. So a request is made by
// one collector, whenever any of them dies.
//
// Paused: a Redis collector that stops renewing its lease for longer than
// RedisLease (SIGSTOP, say) loses the requests it was making to the
// others, which make them. When it carries on, the frontier takes no
// outcome of those requests from it: each is dropped with a log line, so
// the pause costs at most the fetches it had in flight, made again.
func (s *Storage) Run(c *colly.Collector, threads int) error {
	if c.Async {
		return errors.New("bloomstorage: Run needs a collector that is not asynchronous (colly.Async(false)); Run makes threads requests at a time")
	}
	if threads < 1 {
		threads = 1
	}
	s.runMu.Lock()
	if s.running != nil {
		s.runMu.Unlock()
		return ErrRunning
	}
	if s.closed {
		s.runMu.Unlock()
		return ErrClosed
	}
	s.hook(c)
	r := &run{s: s, c: c, end: make(chan struct{})}
	r.cond = sync.NewCond(&r.mu)
	s.running = r
	s.runMu.Unlock()

	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.work()
		}()
	}
	// A shared frontier may be given work by other processes while this
	// one has none: look again at this pace.
	tick := time.NewTicker(50 * time.Millisecond)
	stopTick := make(chan struct{})
	go func() {
		for {
			select {
			case <-tick.C:
				r.cond.Broadcast()
			case <-stopTick:
				return
			}
		}
	}()
	wg.Wait()
	tick.Stop()
	close(stopTick)
	err := s.front.release()
	r.mu.Lock()
	if r.err != nil {
		err = r.err
	}
	r.mu.Unlock()

	s.runMu.Lock()
	s.running = nil
	s.runMu.Unlock()
	close(r.end)
	return err
}

// Stop makes Run take no more requests: it returns once those it is
// making have finished. The frontier keeps the rest for the next Run.
// Stop may be called from Colly's callbacks.
func (s *Storage) Stop() {
	s.runMu.Lock()
	r := s.running
	s.runMu.Unlock()
	if r != nil {
		r.stop(nil)
	}
}

// A run is one call of Run.
type run struct {
	s    *Storage
	c    *colly.Collector
	mu   sync.Mutex
	cond *sync.Cond
	// active counts the requests being made; stopped ends the workers.
	active  int
	stopped bool
	err     error
	end     chan struct{} // closed when Run returns
}

func (r *run) stop(err error) {
	r.mu.Lock()
	r.stopped = true
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
	r.cond.Broadcast()
}

// next takes the next entry, waiting while other workers (or, on a
// shared frontier, other processes) may still add some.
func (r *run) next() (any, entry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for !r.stopped {
		h, e, ok, err := r.s.front.take()
		if err != nil {
			r.stopped, r.err = true, err
			break
		}
		if ok {
			r.active++
			return h, e, true
		}
		if r.active == 0 {
			busy, err := r.s.front.busy()
			if err != nil {
				r.stopped, r.err = true, err
				break
			}
			if !busy {
				r.stopped = true // nothing left anywhere
				break
			}
		}
		r.cond.Wait()
	}
	r.cond.Broadcast()
	return nil, nil, false
}

func (r *run) work() {
	for {
		h, e, ok := r.next()
		if !ok {
			return
		}
		err := r.make(h, e)
		r.mu.Lock()
		r.active--
		r.mu.Unlock()
		r.cond.Broadcast()
		if err != nil {
			r.stop(err)
		}
	}
}

// make makes one taken entry; it returns only the errors that end the run.
// An outcome the frontier no longer takes from this run (errTakenOver) is
// dropped with a log line.
func (r *run) make(h any, e entry) error {
	var req struct {
		Method, URL string
		Depth       int
	}
	json.Unmarshal(e.request(), &req) // what a log line names; Colly reads it below
	outcome, err := r.outcome(h, e, req.Depth)
	if errors.Is(err, errTakenOver) {
		log.Printf("bloomstorage: %s %s: outcome dropped (%s): %v", req.Method, req.URL, outcome, err)
		return nil
	}
	return err
}

// outcome makes one taken entry of the request's depth, and records the
// outcome in the frontier: it returns what it recorded and the error of
// recording it.
func (r *run) outcome(h any, e entry, depth int) (string, error) {
	s, f := r.s, r.s.front
	// Colly refuses a request deeper than MaxDepth before it marks it
	// visited; so does Run, so that the page may still be made from a
	// shallower link.
	if r.c.MaxDepth > 0 && depth > r.c.MaxDepth {
		return "too deep", f.done(h)
	}
	e, mine, err := f.own(h, e)
	if err != nil {
		return "taken, not made", err
	}
	if !mine {
		return "visited", f.done(h)
	}
	req, err := r.c.UnmarshalRequest(e.request())
	if err != nil {
		// Not a request Colly can read: it will never be made.
		return "not a request", f.done(h)
	}
	a := new(attempt)
	s.attempts.Store(req.Ctx, a)
	err = req.Retry()
	s.attempts.Delete(req.Ctx)
	switch {
	case errors.Is(err, colly.ErrMaxRequests):
		r.stop(nil) // the entry stays, marked, for the next run
		return "", nil
	case err == nil:
		return "fetched", f.done(h)
	case !a.failed || a.refused:
		// Refused by the collector (its domain, URL and robots.txt
		// rules, before the fetch or on a redirect), as Colly's Visit
		// refuses.
		return "refused", f.done(h)
	}
	policy, now := s.retryPolicy(), time.Now()
	fetches := e.failed() + 1
	if transient(a.status) && !a.certificate && fetches < policy.Attempts {
		return "to fetch again", f.again(h, e.again(now.Add(policy.wait(fetches, a.retryAfter, now))))
	}
	return "given up", f.fail(h, Failure{
		URL: req.URL.String(), Method: req.Method, Attempts: fetches,
		Status: a.status, Err: a.err, Time: now.UTC(),
	}, e)
}
