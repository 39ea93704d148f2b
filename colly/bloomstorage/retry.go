package bloomstorage

import (
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/gocolly/colly/v2"
)

// Retry says how Run fetches again a request whose fetch failed for a
// reason that can pass: no response (a network error, a reset connection,
// a timeout) or a status of 408, 429 or 5xx. Such a request stays in the
// frontier with the number of its failed fetches and is made again after
// a wait, by this Run or, when it ends first, by the next one on the same
// storage. A request that fails for good (another status of 203 or more,
// which Colly reports as an error, a TLS certificate that does not verify,
// or the last of its Attempts) leaves the frontier and is recorded with
// why (see Failures). A redirect the collector's rules refuse ends the
// request as a refused Visit does.
type Retry struct {
	// Attempts is the number of fetches a request gets, the first one
	// included: 1 never fetches again.
	Attempts int
	// Backoff is the wait before the second fetch; each later one waits
	// twice as long as the one before, up to MaxBackoff, and each wait is
	// taken at random between half and all of that, so that collectors
	// do not come back together. A Retry-After header (seconds or a date)
	// of a 429 or 503 lengthens the wait to what it asks, up to
	// MaxBackoff; that of another status is not read. A MaxBackoff
	// of math.MaxInt64 (292 years) sets no cap: the waits double until
	// they reach it, and never overflow.
	Backoff, MaxBackoff time.Duration
}

// DefaultRetry is the retry of a new storage.
var DefaultRetry = Retry{Attempts: 3, Backoff: time.Second, MaxBackoff: time.Minute}

// SetRetry sets how Run fetches failed requests again; it applies from
// the next request Run makes.
func (s *Storage) SetRetry(r Retry) error {
	switch {
	case r.Attempts < 1 || r.Attempts > 255:
		return fmt.Errorf("bloomstorage: SetRetry: Attempts is %d; want 1 to 255", r.Attempts)
	case r.Backoff < 0 || r.MaxBackoff < r.Backoff:
		return fmt.Errorf("bloomstorage: SetRetry: Backoff %v and MaxBackoff %v; want 0 <= Backoff <= MaxBackoff", r.Backoff, r.MaxBackoff)
	}
	s.retryMu.Lock()
	s.retry = r
	s.retryMu.Unlock()
	return nil
}

func (s *Storage) retryPolicy() Retry {
	s.retryMu.Lock()
	defer s.retryMu.Unlock()
	return s.retry
}

// A Failure is a request that Run gave up on.
type Failure struct {
	URL    string `json:"url"`
	Method string `json:"method"`
	// Attempts is the number of fetches made.
	Attempts int `json:"attempts"`
	// Status is the HTTP status of the last response, 0 when none came.
	Status int `json:"status,omitempty"`
	// Err is the error of the last fetch, as Colly reported it.
	Err string `json:"error"`
	// Time is when Run gave up.
	Time time.Time `json:"time"`
}

func (f Failure) String() string {
	return fmt.Sprintf("%s %s: %s after %d fetch(es)", f.Method, f.URL, f.Err, f.Attempts)
}

// Failures lists the requests Run gave up on, oldest first: kept with the
// frontier, so a file or Redis storage lists those of earlier runs too.
// Their IDs stay in the visited set, so AddURL refuses them.
func (s *Storage) Failures() ([]Failure, error) { return s.front.failures() }

// RetryFailures puts the requests Run gave up on back in the frontier, to
// be made by the next Run with a fresh count of fetches (when the site is
// back, say), and empties the list of failures. It returns how many it
// put back. Their IDs stay in the visited set, so nothing else fetches
// them meanwhile.
func (s *Storage) RetryFailures() (int, error) { return s.front.retryFailures() }

// A failureRecord is a Failure as a frontier keeps it: with its entry,
// hex-encoded, as RetryFailures puts it back.
type failureRecord struct {
	Failure
	Entry string `json:"entry"`
}

func newFailureRecord(f Failure, e entry) failureRecord {
	back := e.with(stateRedo, make([]byte, entryHead-18))
	back[9] = 0
	clear(back[10:18])
	return failureRecord{f, hex.EncodeToString(back)}
}

// entry returns the record's entry, or nil when it is not one.
func (r failureRecord) entry() entry {
	e, err := hex.DecodeString(r.Entry)
	if err != nil || !entry(e).valid() {
		return nil
	}
	return e
}

// An attempt is what the collector's error callbacks saw of one fetch Run
// made.
type attempt struct {
	failed      bool
	status      int
	retryAfter  string
	err         string
	refused     bool // a redirect the collector's rules refuse
	certificate bool // a certificate that does not verify
}

// hook makes c tell s about the fetches that fail: Colly returns a status
// only as its text, and Run needs the code and the Retry-After header.
// Each collector is hooked once; Run tells its fetches apart by their
// Colly context, which each request Run unmarshals gets anew.
func (s *Storage) hook(c *colly.Collector) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	if s.hooked == nil {
		s.hooked = map[*colly.Collector]bool{}
	}
	if s.hooked[c] {
		return
	}
	s.hooked[c] = true
	c.OnError(func(r *colly.Response, err error) {
		v, ok := s.attempts.Load(r.Ctx)
		if !ok {
			return
		}
		a := v.(*attempt)
		if a.failed {
			// A request the callbacks made with the same context (a
			// synchronous Visit) failed after this one succeeded.
			return
		}
		a.failed, a.status, a.err = true, r.StatusCode, err.Error()
		a.refused, a.certificate = refused(err), badCertificate(err)
		if r.Headers != nil && (r.StatusCode == http.StatusTooManyRequests || r.StatusCode == http.StatusServiceUnavailable) {
			// The statuses whose Retry-After says when the service is
			// back (RFC 9110 section 10.2.3, RFC 6585 section 4); on
			// another it waits its backoff.
			a.retryAfter = r.Headers.Get("Retry-After")
		}
	})
}

// refused reports whether err is the collector refusing a request (a
// redirect) by its own rules, as Colly's Visit refuses one.
func refused(err error) bool {
	var visited *colly.AlreadyVisitedError
	return errors.As(err, &visited) || errors.Is(err, colly.ErrForbiddenDomain) || errors.Is(err, colly.ErrForbiddenURL) ||
		errors.Is(err, colly.ErrNoURLFiltersMatch) || errors.Is(err, colly.ErrRobotsTxtBlocked) || errors.Is(err, colly.ErrMaxDepth)
}

// badCertificate reports whether err is a TLS certificate that does not
// verify, which fetching again does not change.
func badCertificate(err error) bool {
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var host x509.HostnameError
	return errors.As(err, &unknown) || errors.As(err, &invalid) || errors.As(err, &host)
}

// transient reports whether a fetch that ended with status (0: no
// response) may succeed when made again.
func transient(status int) bool {
	return status == 0 || status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// wait is how long to wait before the fetch after the failed-th one.
func (r Retry) wait(failed int, retryAfter string, now time.Time) time.Duration {
	d := r.Backoff
	for i := 1; i < failed && d < r.MaxBackoff; i++ {
		if d > r.MaxBackoff/2 {
			d = r.MaxBackoff // doubling d would pass it, or int64
			break
		}
		d *= 2
	}
	d = d/2 + rand.N(d/2+1)
	if ra := parseRetryAfter(retryAfter, now); ra > d {
		d = min(ra, r.MaxBackoff)
	}
	return d
}

func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(min(s, 1<<20)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now)
	}
	return 0
}
