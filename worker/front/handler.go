// The front's door: the Server, the API's limits, and serve, which checks a
// request (CORS, the token, the path, the method, the filter's name and
// what the token allows) before it hands it to the one room that serves
// that endpoint. Each room is a file: filter.go (PUT, DELETE), route.go
// (add, check), merge.go (merge), stats.go (GET), snapshot.go, changes.go, auth.go (tokens),
// hooks.go (/_test/); what they share is in errors.go, request.go, meta.go
// and objects.go. A reader starts here to find where a request goes.

package main

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/edgebloom/edgebloom/internal/abi"
	edgebloom "github.com/edgebloom/edgebloom/internal/release"
)

// Limits of the HTTP API.
const (
	maxBodyBytes = 1 << 20 // a request body, 1 MiB
	maxKeys      = 10_000  // keys in one add or check
	maxKeyBytes  = 8 << 10 // one key, 8 KiB of UTF-8
	maxShards    = 64      // shards of one filter; each request fans out to all of them at most
	maxNameBytes = 64
	// maxShardBits bounds one shard's bitset (abi.MaxShardBits, which
	// shard.js takes from abi.js). The shard never encodes its filter whole
	// (an add logs the bits it set, compaction and snapshots read byte
	// ranges, a load writes chunk by chunk), so the engine's memory stays
	// near the bitset (worker/DESIGN.md, "Capacity and memory"); a
	// snapshot is sent a megabyte at a time (snapshot-stream.js).
	maxShardBits = abi.MaxShardBits
)

// Server is the HTTP front of the edge service: it authenticates, validates
// and routes each key to its shard, a Durable Object reached through
// Objects. It is plain net/http, so it runs under syumai/workers in workerd
// and under httptest on the host alike.
type Server struct {
	// Token returns the service's secret (EDGEBLOOM_TOKEN): the bearer
	// token that allows everything, and the key scoped tokens are signed
	// with (auth.go); "" refuses every request with 500, so an unset secret
	// never opens the service.
	Token func() string
	// PreviousToken returns the secret before a rotation
	// (EDGEBLOOM_TOKEN_PREVIOUS), accepted as Token is while it is set.
	PreviousToken func() string
	// AllowedOrigins returns the origins whose pages may call the read
	// endpoints (EDGEBLOOM_ALLOWED_ORIGINS, cors.go).
	AllowedOrigins func() string
	Objects        Objects
	// TestHooks, when it returns true, serves the endpoints under /_test/
	// (testHook); nil or false answers them 404.
	TestHooks func() bool

	// metas caches each filter's parameters as the meta object last gave
	// them (meta.go). One Go instance serves many requests
	// (front.js keeps it per isolate), so most requests skip reading meta.
	// A cached generation
	// that is no longer current costs one retry, never data: a shard
	// refuses a request of a generation older than its own or deleted
	// there (409 stale_generation; every shard of a deleted generation is
	// told before a PUT of the name is answered, see metaCall), and
	// withParams then reads meta again and runs the request once more.
	metaMu sync.Mutex
	metas  map[string]cachedMeta
}

// versionHeader names the header of every answer that gives the service's
// version (version.txt); a page on an allowed origin can read it (cors.go).
const versionHeader = "X-Edgebloom-Version"

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	served.Add(1)
	w.Header().Set(versionHeader, edgebloom.Version)
	id := newRequestID(r)
	r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
	defer func() {
		// A panic would end the Go program: the client would get workerd's
		// error page (with a stack trace in local development) and the
		// request id nothing. Answer 500 and log it instead.
		if v := recover(); v != nil {
			writeError(w, id, panicError(v))
		}
	}()
	if err := s.serve(w, r); err != nil {
		// What failed because the request's context ended (its client
		// left, its deadline passed) is answered as that.
		if ended := endedError(r.Context()); ended != nil {
			err = ended
		}
		writeError(w, id, err)
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) error {
	w, answered := s.cors(w, r)
	if answered {
		return nil
	}
	access, err := s.authenticate(r)
	if err != nil {
		return err
	}
	if r.URL.Path == tokensPath {
		return s.mintToken(w, r, access)
	}
	if strings.HasPrefix(r.URL.Path, "/_test/") && s.TestHooks != nil && s.TestHooks() {
		if err := access.adminOnly("a test hook"); err != nil {
			return err
		}
		return s.testHook(w, r)
	}
	if name, rest, ok := checkpointPath(r.URL.Path); ok {
		return s.serveCheckpoints(w, r, access, name, rest)
	}
	name, action, ok := splitPath(r.URL.Path)
	if !ok {
		return errorf(http.StatusNotFound, "not_found", "no such endpoint: %s", r.URL.Path)
	}
	allowed := map[string]string{"": "PUT, GET, DELETE", "add": "POST", "check": "POST", "snapshot": "GET", "changes": "GET", "merge": "POST"}[action]
	if !methodIn(r.Method, allowed) {
		w.Header().Set("Allow", allowed)
		return errorf(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not allowed on this endpoint; allowed: %s", r.Method, allowed)
	}
	if err := checkName(name); err != nil {
		return err
	}
	if err := access.allow(operation(action, r.Method), name); err != nil {
		return err
	}
	ctx := r.Context()
	switch action + " " + r.Method {
	case " PUT":
		return s.create(ctx, w, r, name)
	case " GET":
		return s.stats(ctx, w, name)
	case " DELETE":
		return s.remove(ctx, w, name)
	case "add POST", "check POST":
		return s.keys(ctx, w, r, name, action)
	case "snapshot GET":
		return s.snapshot(ctx, w, name)
	case "changes GET":
		return s.changes(ctx, w, r, name)
	case "merge POST":
		return s.merge(ctx, w, r, name)
	}
	return errorf(http.StatusNotFound, "not_found", "no such endpoint")
}

// splitPath splits /v1/filters/{name}[/{action}].
func splitPath(p string) (name, action string, ok bool) {
	rest, ok := strings.CutPrefix(p, "/v1/filters/")
	if !ok {
		return "", "", false
	}
	name, action, _ = strings.Cut(rest, "/")
	switch action {
	case "", "add", "check", "snapshot", "changes", "merge":
		return name, action, name != ""
	}
	return "", "", false
}

func checkName(name string) error {
	ok := len(name) <= maxNameBytes
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0
	}
	if !ok {
		return errorf(http.StatusBadRequest, "invalid_name", "a filter name is 1 to %d of A-Z a-z 0-9 - _ . and does not start with a dot", maxNameBytes)
	}
	return nil
}

func methodIn(method, allowed string) bool {
	for _, m := range strings.Split(allowed, ", ") {
		if m == method {
			return true
		}
	}
	return false
}
