// Package bloomstorage is a Colly storage (github.com/gocolly/colly/v2,
// storage.Storage) whose set of visited requests is an edgebloom Bloom
// filter: a few bits a request instead of a map entry, kept in memory
// (NewMemory), in a file (NewFile), or in Redis, shared by collectors on
// several machines (NewRedis). Beside the visited set, each storage keeps
// a frontier, the requests found and not yet made, in the same place: a
// crawl stopped or killed and started again with the same code carries on
// where it was.
//
//	store, err := bloomstorage.NewFile("crawl.bloom", 10_000_000, 1e-6)
//	defer store.Close()
//	c := colly.NewCollector()
//	err = c.SetStorage(store)
//	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
//		store.AddURL(e.Request.AbsoluteURL(e.Attr("href")))
//	})
//	c.OnError(func(r *colly.Response, err error) { log.Println(r.Request.URL, err) })
//	store.AddURL("https://example.com/") // ErrVisited when resumed
//	err = store.Run(c, 8)
//	failed, err := store.Failures() // given up on
//
// # Resuming
//
// AddURL and AddRequest put a request in the frontier, unless it was
// visited; Run makes the frontier's requests, threads at a time, until
// none is left. A file storage keeps its frontier in a log beside the
// filter (path + ".frontier"), a Redis storage in a list beside the
// filter's keys. A crawl stopped by the collector's MaxRequests, by Stop
// or by Close leaves the requests it did not make in the frontier; one
// killed (SIGKILL) leaves those too, and the ones it was making: the next
// Run makes each of them once, those being made at the kill again (their
// responses were never handled). On Redis, a killed collector's requests
// come back once its lease (RedisLease) runs out; Run waits for them, and
// for other collectors that run the same frontier, before it returns.
//
// Colly counts a request Run reads from the frontier as one of its
// MaxRequests and its fetch as another, as it does for its own queue: a
// collector with MaxRequests 1000 makes about 500.
//
// # Failed fetches
//
// Colly never fetches a request again by itself. Run does, as Retry says
// (DefaultRetry: 3 fetches in all, 1 s then twice as long each time, up to
// 1 min): a fetch with no response (a network error, a reset, a timeout)
// or a 408, 429 or 5xx leaves the request in the frontier with its count
// of failed fetches, and this Run or the next makes it again once due; any
// other error status, or the last fetch failing, gives it up, and
// Failures lists it with why (RetryFailures puts those back). Colly calls
// OnError for every failed fetch.
//
// # Visited at most once
//
// Colly asks IsVisited, then calls Visited, before it fetches a request.
// Visited here adds the request to the filter and tests it in one atomic
// step: when the request was already there, because another goroutine,
// another collector or an earlier run added it since IsVisited answered,
// Visited returns an error wrapping ErrVisited and Colly does not fetch it.
// So of any number of collectors sharing one storage, one fetches each
// request, and a request is never fetched twice.
//
// A Bloom filter has false positives: a request never visited is reported
// visited at the filter's false-positive rate, and Colly then skips it.
// Size the filter for the number of requests a crawl makes at a rate you
// can afford to skip: at 10 million requests and a rate of one in a
// million, the filter takes 34 MiB.
//
// # Cookies
//
// Cookies are kept as Colly's InMemoryStorage keeps them: in a
// net/http/cookiejar.Jar in memory, set and read through Colly's cookie
// strings. They are not persisted or shared.
package bloomstorage

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http/cookiejar"
	"net/url"
	"os"
	"sync"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/redisfilter"
	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/storage"
	"github.com/redis/go-redis/v9"
)

// ErrVisited is wrapped by the error of Visited when the request was
// already visited: another collector or goroutine visited it after
// IsVisited reported that none had.
var ErrVisited = errors.New("bloomstorage: request already visited")

// A seen is the set of visited request IDs.
type seen interface {
	add(key []byte) (bool, error) // reports whether key was new
	has(key []byte) (bool, error)
	close() error
}

// A Storage is a colly storage.Storage backed by an edgebloom filter. It
// is safe for concurrent use, as Colly's asynchronous collectors need.
type Storage struct {
	seen  seen
	front frontier

	runMu   sync.Mutex
	running *run // the Run under way
	closed  bool
	// stripes serialize the Visited calls of one request ID: the atomic
	// ORs of a SyncFilter or FileFilter tell each caller whether it set a
	// bit, and of two goroutines adding one key at once, each may set some
	// of its bits and both hear "new". The Redis filter's script is atomic
	// by itself; its calls take the stripe all the same, which costs
	// nothing next to a round trip.
	stripes *stripes

	retryMu sync.Mutex
	retry   Retry

	hookMu   sync.Mutex
	hooked   map[*colly.Collector]bool
	attempts sync.Map // *colly.Context → *attempt, for the fetches Run makes

	mu  sync.Mutex
	jar *cookiejar.Jar
}

type stripes [64]sync.Mutex

func (s *stripes) of(id uint64) *sync.Mutex { return &s[id%uint64(len(s))] }

func newStorage(seen seen, front frontier, st *stripes) *Storage {
	return &Storage{seen: seen, front: front, stripes: st, retry: DefaultRetry}
}

var _ storage.Storage = (*Storage)(nil)

// NewMemory returns a storage whose visited set is a bloom.SyncFilter in
// memory, sized for capacity requests at false-positive rate fpRate.
func NewMemory(capacity uint64, fpRate float64) (*Storage, error) {
	f, err := bloom.NewSync(capacity, fpRate)
	if err != nil {
		return nil, err
	}
	st := new(stripes)
	seen := memory{f}
	return newStorage(seen, newMemoryFrontier(seen, st), st), nil
}

// NewFile returns a storage whose visited set is the file-backed filter
// (bloom.FileFilter) at path and whose frontier is a log at path +
// ".frontier": it opens the files when they exist, so a crawl started
// again skips what an earlier run visited and makes what it left (the
// filter's size is then the file's, and capacity and fpRate are not
// used), and creates them, the filter sized for capacity requests at
// fpRate, otherwise. The filter stays locked until Close; a second storage
// on it, in this process or another, gets an error wrapping
// bloom.ErrLocked. A run killed without Close loses no visit on Linux and
// the BSDs, where the file is mapped (see bloom.FileFilter), and no
// request of the frontier (see the package documentation).
func NewFile(path string, capacity uint64, fpRate float64) (*Storage, error) {
	f, err := bloom.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		f, err = bloom.Create(path, capacity, fpRate)
	}
	if err != nil {
		return nil, err
	}
	st := new(stripes)
	front, err := openFileFrontier(path+".frontier", file{f}, st)
	if err != nil {
		f.Close()
		return nil, err
	}
	return newStorage(file{f}, front, st), nil
}

// NewRedis returns a storage whose visited set is the Redis filter called
// name (package redisfilter), made for capacity requests at fpRate when it
// does not exist yet, and whose frontier is a list beside it: collectors
// on several machines that use the same Redis and name share one visited
// set and one frontier, and none fetches a request another fetched. Every
// call to Redis is made with ctx; the client stays the caller's to close.
// Colly's storage calls cannot return an error from Cookies, and
// IsVisited and Visited return Redis's errors.
func NewRedis(ctx context.Context, client redis.UniversalClient, name string, capacity uint64, fpRate float64) (*Storage, error) {
	f, err := redisfilter.New(ctx, client, name, capacity, fpRate)
	if err != nil {
		return nil, err
	}
	front, err := newRedisFrontier(ctx, client, name, f)
	if err != nil {
		return nil, err
	}
	return newStorage(shared{ctx, f}, front, new(stripes)), nil
}

// Init makes the cookie jar. Colly's SetStorage calls it.
func (s *Storage) Init() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jar == nil {
		jar, err := cookiejar.New(nil)
		if err != nil {
			return err
		}
		s.jar = jar
	}
	return nil
}

// key is the filter key of a request ID: its 8 bytes, little-endian.
func key(requestID uint64) []byte { return binary.LittleEndian.AppendUint64(nil, requestID) }

// Visited records the request as visited. When it was already recorded
// (see the package documentation), it returns an error wrapping ErrVisited,
// and Colly does not fetch the request.
func (s *Storage) Visited(requestID uint64) error {
	mu := s.stripes.of(requestID)
	mu.Lock()
	fresh, err := s.seen.add(key(requestID))
	mu.Unlock()
	if err != nil {
		return err
	}
	if !fresh {
		return fmt.Errorf("%w (request %016x)", ErrVisited, requestID)
	}
	return nil
}

// IsVisited reports whether the request was probably visited. It may
// report true for one that was not, at the filter's false-positive rate.
func (s *Storage) IsVisited(requestID uint64) (bool, error) {
	return s.seen.has(key(requestID))
}

// Cookies returns the cookies to send to u, as Colly's InMemoryStorage
// does.
func (s *Storage) Cookies(u *url.URL) string {
	return storage.StringifyCookies(s.cookieJar().Cookies(u))
}

// SetCookies stores the cookies that u set, as Colly's InMemoryStorage
// does.
func (s *Storage) SetCookies(u *url.URL, cookies string) {
	s.cookieJar().SetCookies(u, storage.UnstringifyCookies(cookies))
}

func (s *Storage) cookieJar() *cookiejar.Jar {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jar == nil {
		s.jar, _ = cookiejar.New(nil) // New(nil) never fails
	}
	return s.jar
}

// Close stops Run, waits until it has returned (so Close must not be
// called from Colly's callbacks: call Stop there), and closes the storage:
// a file storage's visits and frontier are made durable and the files
// unlocked; a Redis storage's taken requests go back to the shared
// frontier. The Redis client is the caller's to close.
func (s *Storage) Close() error {
	s.runMu.Lock()
	if s.closed {
		s.runMu.Unlock()
		return nil
	}
	s.closed = true
	r := s.running
	s.runMu.Unlock()
	if r != nil {
		r.stop(nil)
		<-r.end
	}
	return errors.Join(s.front.close(), s.seen.close())
}

type memory struct{ f *bloom.SyncFilter }

func (m memory) add(k []byte) (bool, error) { return m.f.Add(k), nil }
func (m memory) has(k []byte) (bool, error) { return m.f.Has(k), nil }
func (m memory) close() error               { return nil }

type file struct{ f *bloom.FileFilter }

func (f file) add(k []byte) (bool, error) {
	fresh := f.f.Add(k)
	if err := f.f.Err(); err != nil {
		return false, err
	}
	return fresh, nil
}
func (f file) has(k []byte) (bool, error) { return f.f.Has(k), nil }
func (f file) close() error               { return f.f.Close() }

type shared struct {
	ctx context.Context
	f   *redisfilter.Filter
}

func (r shared) add(k []byte) (bool, error) { return r.f.Add(r.ctx, string(k)) }
func (r shared) has(k []byte) (bool, error) { return r.f.Has(r.ctx, string(k)) }
func (r shared) close() error               { return nil }
