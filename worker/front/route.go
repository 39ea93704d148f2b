// POST add and check: each key goes to the one shard its hash picks
// (package snapshot's router, the same everywhere a filter is read), the
// shards are asked at once (fanOut), and the answers come back in the
// client's key order. A filter made with "canonicalize" maps its keys to
// canonical URLs first, so that one page under two spellings is one key.

package main

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/edgebloom/edgebloom/snapshot"
	"github.com/edgebloom/edgebloom/urlkey"
)

// fanOut runs do for shards 0..n-1 concurrently and returns the first error.
func fanOut(n int, do func(i int) error) error {
	done := make([]<-chan error, n)
	for i := range n {
		done[i] = spawn(func() error { return do(i) })
	}
	var first error
	for _, d := range done {
		if err := <-d; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (s *Server) keys(ctx context.Context, w http.ResponseWriter, r *http.Request, name, action string) error {
	body, err := readBody(r, keysShape)
	if err != nil {
		return err
	}
	var req struct {
		Keys *[]string `json:"keys"`
	}
	if keys, ok := parseKeys(body); ok {
		req.Keys = &keys
	} else if err := decodeJSON(body, &req, keysShape); err != nil {
		return err
	}
	switch {
	case req.Keys == nil:
		return errorf(http.StatusBadRequest, "invalid_params", "the body must be %s", keysShape)
	case len(*req.Keys) > maxKeys:
		return errorf(http.StatusRequestEntityTooLarge, "too_many_keys", "%d keys; the limit is %d a request", len(*req.Keys), maxKeys)
	}
	keys := *req.Keys
	for i, k := range keys {
		if len(k) > maxKeyBytes {
			return errorf(http.StatusBadRequest, "key_too_long", "key %d is %d bytes; the limit is %d", i, len(k), maxKeyBytes)
		}
	}
	return s.withParams(ctx, name, func(p filterParams) error {
		keys := keys
		if p.Canonicalize {
			var err error
			if keys, err = canonicalKeys(keys); err != nil {
				return err
			}
		}
		return s.route(ctx, w, name, action, p, keys)
	})
}

// route sends each key to its shard and writes the answers in key order.
func (s *Server) route(ctx context.Context, w http.ResponseWriter, name, action string, p filterParams, keys []string) error {
	// Group the keys by shard, remembering where each came from.
	router := snapshot.Router(p.Shards)
	groups := make([][]int, p.Shards)
	for i, k := range keys {
		sh := snapshot.Route(router, k)
		groups[sh] = append(groups[sh], i)
	}
	results := make([]bool, len(keys))
	field := map[string]string{"add": "added", "check": "present"}[action]
	err := fanOut(p.Shards, func(sh int) error {
		if len(groups[sh]) == 0 {
			return nil
		}
		sub := make([]string, len(groups[sh]))
		for j, i := range groups[sh] {
			sub[j] = keys[i]
		}
		body := appendKeysJSON(nil, sub)
		res, err := s.call(ctx, shardObject(name, sh), "POST", "/"+action, shardParamsOf(name, p, sh), body)
		if err != nil {
			return err
		}
		got, err := shardAnswers(res, field, len(sub))
		if err != nil {
			return err
		}
		for j, i := range groups[sh] {
			results[i] = got[j]
		}
		return nil
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, json.RawMessage(appendResultsJSON(nil, field, results)))
	return nil
}

// canonicalKeys maps each key to its canonical URL (package urlkey) for a
// filter made with "canonicalize": true. The first key that is no URL
// urlkey accepts, or whose canonical form is over maxKeyBytes, fails the
// request with the key's index.
func canonicalKeys(keys []string) ([]string, error) {
	out := make([]string, len(keys))
	for i, k := range keys {
		c, err := urlkey.Canonical(k, urlkey.Options{})
		if err != nil {
			e := errorf(http.StatusBadRequest, "invalid_url", "key %d: %v", i, err)
			e.Index = &i
			return nil, e
		}
		if len(c) > maxKeyBytes {
			e := errorf(http.StatusBadRequest, "key_too_long", "key %d is %d bytes once canonicalized; the limit is %d", i, len(c), maxKeyBytes)
			e.Index = &i
			return nil, e
		}
		out[i] = c
	}
	return out, nil
}
