// A filter's parameters, read from its meta object and cached per instance
// (Server.metas), because one kept Go instance serves many requests and
// most of them need only the parameters it read before. A cache can be
// stale; generations that only move forward make a stale entry cost one
// retry (withParams), never data. The answers the edge cache keeps are
// served only while the cached generation is theirs (checkpoint_cache.go),
// and for that an entry is trusted only for metaMaxAge after the read that
// gave it began, so a front serves none of a deleted generation later than
// that after the DELETE. Reading meta is also where a deleted generation's clean-up is
// finished (metaCall, cleanUp): the protocol is in objects.go.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"math"
	"net/http"
	"time"
)

// maxCachedMetas bounds the meta cache; when full it starts over.
const maxCachedMetas = 4096

// metaMaxAge is how long a front trusts a filter's cached parameters
// before it serves an answer of the edge cache: the lifetime of "latest"
// there, so a DELETE is seen by every front at most as late as a new
// checkpoint is. The other endpoints trust them at any age (anyAge): a
// shard refuses a stale generation, and the front reads meta again.
const (
	metaMaxAge = maxLatestSeconds * time.Second
	anyAge     = time.Duration(math.MaxInt64)
)

// A cachedMeta is what a front knows of a filter's name: its parameters,
// when the read that gave them began, and the newest generation deleted
// through this front, which no read begun before the DELETE brings back.
type cachedMeta struct {
	params  filterParams
	known   bool // params holds parameters
	read    time.Time
	deleted uint64
}

// params returns the parameters of an existing filter, or 404: from the
// cache when they were read less than maxAge ago, else from the meta
// object (maxAge 0: always).
func (s *Server) params(ctx context.Context, name string, maxAge time.Duration) (filterParams, error) {
	s.metaMu.Lock()
	e := s.metas[name]
	s.metaMu.Unlock()
	if e.known && time.Since(e.read) < maxAge {
		return e.params, nil
	}
	read := time.Now()
	status, p, _, err := s.metaCall(ctx, name, "GET", nil)
	if err != nil {
		return p, err
	}
	if status == http.StatusNotFound {
		s.forget(name, 0)
		return p, errorf(http.StatusNotFound, "not_found", "no filter named %q", name)
	}
	s.remember(name, p, read)
	return p, nil
}

// metaCall sends method /meta (with body) to the meta object of name and
// returns its status (2xx or 404) and parameters, and the clean-up it
// carried, done (see Objects). Its answer is used only after the clean-up:
// until then a shard could still acknowledge a request of a deleted
// generation. A shard that cannot be told fails the call, and the next
// answer of meta carries the clean-up again.
func (s *Server) metaCall(ctx context.Context, name, method string, body []byte) (int, filterParams, *cleanup, error) {
	var ans metaAnswer
	res, err := s.call(ctx, metaObject(name), method, "/meta", nil, body)
	if err != nil {
		return 0, ans.filterParams, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, ans.filterParams, nil, internalError(http.StatusBadGateway, "shard_unavailable", "reading an internal response failed", err)
	}
	if res.StatusCode >= 300 && res.StatusCode != http.StatusNotFound {
		return 0, ans.filterParams, nil, objectError(res.StatusCode, b)
	}
	if err := json.Unmarshal(b, &ans); err != nil {
		return 0, ans.filterParams, nil, internalError(http.StatusBadGateway, "shard_protocol", "an internal response is not the expected JSON", err)
	}
	if ans.Cleanup != nil {
		if err := s.cleanUp(ctx, name, *ans.Cleanup); err != nil {
			return 0, ans.filterParams, nil, err
		}
	}
	return res.StatusCode, ans.filterParams, ans.Cleanup, nil
}

// cleanUp tells shards 0 to c.Shards-1 of name that generation
// c.Generation, and every older one, is deleted, then tells meta it is done.
// A shard that already holds a newer generation refuses as stale: it has
// moved on, which is what was asked.
func (s *Server) cleanUp(ctx context.Context, name string, c cleanup) error {
	err := fanOut(c.Shards, func(sh int) error {
		b, _ := json.Marshal(shardParams{Filter: name, Index: sh, Generation: c.Generation})
		res, err := s.call(ctx, shardObject(name, sh), "DELETE", "/shard", http.Header{shardHeader: {string(b)}}, nil)
		if err != nil {
			return err
		}
		if err := decodeResponse(res, nil); !isStale(err) {
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	body, _ := json.Marshal(c)
	res, err := s.call(ctx, metaObject(name), "POST", "/cleanup", nil, body)
	if err == nil {
		err = decodeResponse(res, nil)
	}
	if err != nil {
		// The shards refuse the deleted generations, which is what counts;
		// meta keeps the clean-up and the next front to read it does it again.
		log.Printf("edgebloom: request %s: the shards of %q refuse generation %d, but telling meta failed: %v", requestID(ctx), name, c.Generation, err)
	}
	return nil
}

// remember caches p as the parameters of name, read by a meta read begun
// at read. A generation never moves back: an answer older than what is
// cached (two requests that read meta across a PUT), or of a generation
// deleted through this front, does not replace it.
func (s *Server) remember(name string, p filterParams, read time.Time) {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	e := s.metas[name]
	switch {
	case p.Generation <= e.deleted && e.deleted != 0:
		return
	case e.known && e.params.Generation > p.Generation:
		return
	case e.known && e.params.Generation == p.Generation && e.read.After(read):
		return
	}
	e.params, e.known, e.read = p, true, read
	s.store(name, e)
}

// forget drops the cached parameters of name; deleted, when not 0, is a
// generation of it this front deleted.
func (s *Server) forget(name string, deleted uint64) {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	e := s.metas[name]
	e.params, e.known = filterParams{}, false
	e.deleted = max(e.deleted, deleted)
	if e.deleted == 0 {
		delete(s.metas, name)
		return
	}
	s.store(name, e)
}

func (s *Server) store(name string, e cachedMeta) {
	if _, ok := s.metas[name]; !ok && (s.metas == nil || len(s.metas) >= maxCachedMetas) {
		s.metas = make(map[string]cachedMeta)
	}
	s.metas[name] = e
}

// staleGeneration is the code a shard refuses a request with when the
// request's generation is older than the shard's own.
const staleGeneration = "stale_generation"

func isStale(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Code == staleGeneration
}

// withParams runs op with the parameters of filter name. If a shard refused
// op's request as being of an older generation (the filter was deleted or
// made again since the parameters were read, here or in another instance),
// it reads the parameters from the meta object and runs op once more. op
// must not have written the response when it fails.
func (s *Server) withParams(ctx context.Context, name string, op func(p filterParams) error) error {
	return s.withParamsWithin(ctx, name, anyAge, op)
}

// withParamsWithin is withParams with parameters read less than maxAge ago.
func (s *Server) withParamsWithin(ctx context.Context, name string, maxAge time.Duration, op func(p filterParams) error) error {
	p, err := s.params(ctx, name, maxAge)
	if err != nil {
		return err
	}
	if err = op(p); !isStale(err) {
		return err
	}
	s.forget(name, 0)
	if p, err = s.params(ctx, name, 0); err != nil {
		return err
	}
	return op(p)
}
