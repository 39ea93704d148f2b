// A filter's parameters, read from its meta object and cached per instance
// (Server.metas), because one kept Go instance serves many requests and
// most of them need only the parameters it read before. A cache can be
// stale; generations that only move forward make a stale entry cost one
// retry (withParams), never data. Reading meta is also where a deleted
// generation's clean-up is finished (metaCall, cleanUp): the protocol is in
// objects.go.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
)

// maxCachedMetas bounds the meta cache; when full it starts over.
const maxCachedMetas = 4096

// params returns the parameters of an existing filter, or 404: from the
// cache, or from the meta object when fresh is set or nothing is cached.
func (s *Server) params(ctx context.Context, name string, fresh bool) (filterParams, error) {
	if !fresh {
		s.metaMu.Lock()
		p, ok := s.metas[name]
		s.metaMu.Unlock()
		if ok {
			return p, nil
		}
	}
	status, p, _, err := s.metaCall(ctx, name, "GET", nil)
	if err != nil {
		return p, err
	}
	if status == http.StatusNotFound {
		s.remember(name, nil)
		return p, errorf(http.StatusNotFound, "not_found", "no filter named %q", name)
	}
	s.remember(name, &p)
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

// remember caches p as the parameters of name, or forgets name when p is
// nil. A generation never moves back: an answer older than what is cached
// (two requests that read meta across a PUT) does not replace it.
func (s *Server) remember(name string, p *filterParams) {
	s.metaMu.Lock()
	defer s.metaMu.Unlock()
	if p == nil {
		delete(s.metas, name)
		return
	}
	if have, ok := s.metas[name]; ok && have.Generation > p.Generation {
		return
	}
	if s.metas == nil || len(s.metas) >= maxCachedMetas {
		s.metas = make(map[string]filterParams)
	}
	s.metas[name] = *p
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
	p, err := s.params(ctx, name, false)
	if err != nil {
		return err
	}
	if err = op(p); !isStale(err) {
		return err
	}
	s.remember(name, nil)
	if p, err = s.params(ctx, name, true); err != nil {
		return err
	}
	return op(p)
}
