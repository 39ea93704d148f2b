package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/edgebloom/edgebloom/bloom"
	"github.com/edgebloom/edgebloom/internal/abi"
	"github.com/edgebloom/edgebloom/snapshot"
	"github.com/edgebloom/edgebloom/token"
)

// Checkpoints: the read path whose cost does not grow with the number of
// readers (DESIGN.md, "Checkpoints"). The service publishes
// a filter's cursor as a numbered checkpoint at most once every
// EDGEBLOOM_CHECKPOINT_SECONDS; the deltas between two checkpoints never
// change, so every reader of a colo shares one cached copy of each:
//
//	GET /v1/filters/{name}/checkpoints/latest           the newest checkpoint (JSON), cached a few seconds
//	GET /v1/filters/{name}/checkpoints/{G}/{B}/delta?from=A  the delta from checkpoint A to B of generation G, immutable
//	GET /v1/filters/{name}/checkpoints/{G}/{B}/snapshot the filter as of checkpoint B or later, with B's cursor
//
// The front checks the token before it looks in the cache, so a cached
// answer reaches only readers the token check let through.

const (
	// defaultCheckpointSeconds is how often checkpoints are published when
	// EDGEBLOOM_CHECKPOINT_SECONDS is not set.
	defaultCheckpointSeconds = 60
	// maxLatestSeconds bounds how long "latest" is cached: a key
	// acknowledged before a checkpoint reaches a reader at most this long
	// after the checkpoint is published.
	maxLatestSeconds = 5
	// immutableSeconds is the max-age of what never changes.
	immutableSeconds = 365 * 24 * 3600
)

// checkpointObject names the object that keeps a filter's checkpoints
// (checkpoint-object.js).
func checkpointObject(name string) string { return "ckpt:" + name }

// checkpointSeconds reads EDGEBLOOM_CHECKPOINT_SECONDS: a whole number of
// seconds from 1 to 86400, or the default.
func checkpointSeconds() int {
	v, err := strconv.Atoi(strings.TrimSpace(getenv("EDGEBLOOM_CHECKPOINT_SECONDS")))
	if err != nil || v < 1 || v > 86400 {
		return defaultCheckpointSeconds
	}
	return v
}

// checkpointPath splits /v1/filters/{name}/checkpoints[/rest].
func checkpointPath(p string) (name, rest string, ok bool) {
	tail, ok := strings.CutPrefix(p, "/v1/filters/")
	if !ok {
		return "", "", false
	}
	name, tail, _ = strings.Cut(tail, "/")
	if tail != "checkpoints" && !strings.HasPrefix(tail, "checkpoints/") {
		return "", "", false
	}
	return name, strings.TrimPrefix(tail, "checkpoints"), name != ""
}

// serveCheckpoints answers the checkpoint endpoints; serve calls it once the
// token is checked. A read token of the filter may read them all.
func (s *Server) serveCheckpoints(w http.ResponseWriter, r *http.Request, a access, name, rest string) error {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		return errorf(http.StatusMethodNotAllowed, "method_not_allowed", "%s is not allowed on this endpoint; allowed: GET", r.Method)
	}
	if err := checkName(name); err != nil {
		return err
	}
	if err := a.allow(token.Changes, name); err != nil {
		return err
	}
	ctx := r.Context()
	if rest == "/latest" {
		return s.latestCheckpoint(ctx, w, r, name)
	}
	parts := strings.Split(strings.TrimPrefix(rest, "/"), "/")
	if len(parts) == 3 && (parts[2] == "delta" || parts[2] == "snapshot") {
		g, err1 := strconv.ParseUint(parts[0], 10, 64)
		b, err2 := strconv.ParseUint(parts[1], 10, 64)
		if err1 != nil || err2 != nil || g == 0 || b == 0 {
			return errorf(http.StatusNotFound, "not_found", "a checkpoint is /checkpoints/{generation}/{number}/delta or /snapshot, both positive integers")
		}
		if err := s.current(ctx, name, g); err != nil {
			return err
		}
		if parts[2] == "snapshot" {
			return s.checkpointSnapshot(ctx, w, r, name, g, b)
		}
		from, err := strconv.ParseUint(r.URL.Query().Get("from"), 10, 64)
		if err != nil || from == 0 || from >= b {
			return errorf(http.StatusBadRequest, "invalid_params", "from must be the number of an earlier checkpoint than %d", b)
		}
		return s.checkpointDelta(ctx, w, r, name, g, from, b)
	}
	return errorf(http.StatusNotFound, "not_found", "no such endpoint: %s", r.URL.Path)
}

// current checks, before anything is looked up in the edge cache, that g
// is the filter's generation as the front's parameters give it (at most
// metaMaxAge old): 404 when there is no filter, 410 when g is not its
// generation. A deleted generation's cached answers are then never read.
func (s *Server) current(ctx context.Context, name string, g uint64) error {
	p, err := s.params(ctx, name, metaMaxAge)
	if err != nil {
		return err
	}
	if p.Generation != g {
		return generationGone(g)
	}
	return nil
}

func generationGone(g uint64) error {
	return errorf(http.StatusGone, "checkpoint_gone", "generation %d of the filter is gone; read /checkpoints/latest again", g)
}

// A checkpoint as the checkpoint object keeps it.
type checkpoint struct {
	N      uint64 `json:"n"`
	Cursor string `json:"cursor"`
	Time   int64  `json:"time"`
}

type checkpointList struct {
	Generation  uint64       `json:"generation"`
	Checkpoints []checkpoint `json:"checkpoints"`
	Due         bool         `json:"due"`
}

func (l checkpointList) find(n uint64) (checkpoint, bool) {
	for _, c := range l.Checkpoints {
		if c.N == n {
			return c, true
		}
	}
	return checkpoint{}, false
}

// checkpoints reads the filter's checkpoints; when publish is set and one
// is due, it reads the shards' positions and publishes them first (one
// front at a time: the object leases the work to the first that asks).
func (s *Server) checkpoints(ctx context.Context, name string, p filterParams, publish bool) (checkpointList, error) {
	var l checkpointList
	interval := checkpointSeconds() * 1000
	if !publish {
		// No check is ever due this far apart.
		interval = 1 << 52
	}
	res, err := s.call(ctx, checkpointObject(name), "GET", fmt.Sprintf("/checkpoints?generation=%d&interval=%d", p.Generation, interval), nil, nil)
	if err != nil {
		return l, err
	}
	if err := decodeResponse(res, &l); err != nil || !l.Due {
		return l, err
	}
	positions, err := s.positions(ctx, name, p)
	if err != nil {
		return l, err
	}
	var after uint64
	if n := len(l.Checkpoints); n > 0 {
		after = l.Checkpoints[n-1].N
	}
	body, _ := json.Marshal(map[string]any{
		"generation": p.Generation, "after": after,
		"cursor": snapshot.Cursor{Generation: p.Generation, Shards: positions}.Text(),
	})
	res, err = s.call(ctx, checkpointObject(name), "POST", "/checkpoints", nil, body)
	if err != nil {
		return l, err
	}
	err = decodeResponse(res, &l)
	return l, err
}

// latestCheckpoint answers the newest checkpoint:
// {"generation", "checkpoint", "cursor", "oldest", "published"}.
func (s *Server) latestCheckpoint(ctx context.Context, w http.ResponseWriter, r *http.Request, name string) error {
	maxAge := min(maxLatestSeconds, checkpointSeconds())
	// Kept under the generation of the parameters, read at most metaMaxAge
	// ago: a stale entry costs one retry with the parameters read again.
	return s.withParamsWithin(ctx, name, metaMaxAge, func(p filterParams) error {
		a, hit, err := cached(ctx, cacheKey(name, p.Generation, "latest"), maxAge, nil, func() (*cachedAnswer, error) {
			l, err := s.checkpoints(ctx, name, p, true)
			if err != nil {
				return nil, err
			}
			if len(l.Checkpoints) == 0 {
				return nil, errorf(http.StatusServiceUnavailable, "checkpoint_pending", "the first checkpoint of the filter is being published; ask again in a second")
			}
			last := l.Checkpoints[len(l.Checkpoints)-1]
			body, _ := json.Marshal(map[string]any{
				"generation": l.Generation, "checkpoint": last.N, "cursor": last.Cursor,
				"oldest": l.Checkpoints[0].N, "published": time.UnixMilli(last.Time).UTC().Format(time.RFC3339Nano),
				"interval": checkpointSeconds(),
			})
			h := http.Header{}
			h.Set("Content-Type", "application/json")
			h.Set("Cache-Control", "private, max-age="+strconv.Itoa(maxAge))
			return &cachedAnswer{header: h, body: body}, nil
		})
		if err != nil {
			return err
		}
		a.write(w, r, hit)
		return nil
	})
}

// checkpointDelta answers the delta from checkpoint a to checkpoint b of
// generation g: what GET /changes?since=(a's cursor) answers when the
// shards are at b's cursor, byte for byte. A reader the edge cache answers
// takes no share of the front's budget; one that makes the delta takes
// what making it holds (deltaWeight).
func (s *Server) checkpointDelta(ctx context.Context, w http.ResponseWriter, r *http.Request, name string, g, a, b uint64) error {
	enter := func() (func(), error) {
		return s.enterHeavy(ctx, name, func(p filterParams) int64 { return deltaWeight(p, b-a) })
	}
	ans, hit, err := s.deltaBetween(ctx, name, g, a, b, enter)
	if err != nil {
		return err
	}
	ans.write(w, r, hit)
	return nil
}

// deltaBetween returns the delta from checkpoint a to b from the cache, or
// makes it after enter (nil: within a share taken already).
func (s *Server) deltaBetween(ctx context.Context, name string, g, a, b uint64, enter func() (func(), error)) (*cachedAnswer, bool, error) {
	key := cacheKey(name, g, fmt.Sprintf("%d/delta?from=%d", b, a))
	return cached(ctx, key, immutableSeconds, enter, func() (*cachedAnswer, error) {
		var body []byte
		var err error
		if b == a+1 {
			body, err = s.consecutiveDelta(ctx, name, g, a, b)
		} else {
			body, err = s.mergedDelta(ctx, name, g, a, b)
		}
		if err != nil {
			return nil, err
		}
		h := http.Header{}
		h.Set("Content-Type", "application/octet-stream")
		h.Set("X-Edgebloom-Format", "delta")
		h.Set("ETag", fmt.Sprintf(`"%d.%d-%d"`, g, a, b))
		h.Set("Cache-Control", "private, max-age="+strconv.Itoa(immutableSeconds)+", immutable")
		return &cachedAnswer{header: h, body: body}, nil
	})
}

// checkpointsOf reads the checkpoints a and b of generation g, which must
// be kept.
func (s *Server) checkpointsOf(ctx context.Context, name string, g uint64, ns ...uint64) (filterParams, []snapshot.Cursor, error) {
	var (
		p   filterParams
		out []snapshot.Cursor
	)
	err := s.withParams(ctx, name, func(q filterParams) error {
		p, out = q, nil
		if q.Generation != g {
			return generationGone(g)
		}
		l, err := s.checkpoints(ctx, name, q, false)
		if err != nil {
			return err
		}
		for _, n := range ns {
			c, ok := l.find(n)
			if !ok {
				if len(l.Checkpoints) > 0 && n < l.Checkpoints[0].N {
					return errorf(http.StatusGone, "checkpoint_gone", "checkpoint %d is no longer kept (the oldest is %d): load /checkpoints/%d/%d/snapshot", n, l.Checkpoints[0].N, g, l.Checkpoints[len(l.Checkpoints)-1].N)
				}
				return errorf(http.StatusNotFound, "checkpoint_unknown", "no checkpoint %d of generation %d", n, g)
			}
			cur, err := snapshot.ParseCursor(c.Cursor)
			if err != nil || cur.Generation != g || len(cur.Shards) != q.Shards {
				return internalError(http.StatusBadGateway, "shard_protocol", "a stored checkpoint is not a cursor of the filter", err)
			}
			out = append(out, cur)
		}
		return nil
	})
	return p, out, err
}

// consecutiveDelta reads from the shards the delta between two consecutive
// checkpoints: each shard's record between its two positions, bounded above.
func (s *Server) consecutiveDelta(ctx context.Context, name string, g, a, b uint64) ([]byte, error) {
	p, cs, err := s.checkpointsOf(ctx, name, g, a, b)
	if err != nil {
		return nil, err
	}
	from, to := cs[0], cs[1]
	parts := make([][]byte, p.Shards)
	err = fanOut(p.Shards, func(i int) error {
		at, end := from.Shards[i], to.Shards[i]
		if at == end {
			return nil
		}
		if at.Epoch != end.Epoch || end.Position < at.Position {
			return errorf(http.StatusGone, "checkpoint_gone", "shard %d's storage changed between checkpoints %d and %d: load /checkpoints/%d/%d/snapshot", i, a, b, g, b)
		}
		path := fmt.Sprintf("/changes?since=%d&epoch=%d&to=%d", at.Position, at.Epoch, end.Position)
		res, err := s.call(ctx, shardObject(name, i), "GET", path, shardParamsOf(name, p, i), nil)
		if err != nil {
			return err
		}
		if res.StatusCode == http.StatusGone {
			res.Body.Close()
			return errorf(http.StatusGone, "checkpoint_gone", "shard %d no longer holds the changes between checkpoints %d and %d: load /checkpoints/%d/%d/snapshot", i, a, b, g, b)
		}
		if res.StatusCode >= 300 {
			return decodeResponse(res, nil)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(io.LimitReader(res.Body, maxShardRecord+1))
		pos, ok := parsePosition(res.Header.Get(positionHeader))
		if err != nil || !ok || pos != end || len(body) == 0 || len(body) > maxShardRecord {
			return internalError(http.StatusBadGateway, "shard_protocol", fmt.Sprintf("shard %d's changes are not a record from %d to %d", i, at.Position, end.Position),
				fmt.Errorf("position %q, %d bytes, %v", res.Header.Get(positionHeader), len(body), err))
		}
		parts[i] = body
		return nil
	})
	if err != nil {
		return nil, err
	}
	return assembleDelta(p, parts), nil
}

// assembleDelta puts the shards' records (empty for a shard with nothing
// new) into a delta.
func assembleDelta(p filterParams, parts [][]byte) []byte {
	m, k, _ := bloom.Optimal(shardCapacity(p), p.ErrorRate)
	records := 0
	for _, part := range parts {
		if len(part) > 0 {
			records++
		}
	}
	out := snapshot.AppendDeltaHeader(nil, p.Generation, 0, m, k, uint32(p.Shards), uint32(records))
	for _, part := range parts {
		out = append(out, part...)
	}
	return snapshot.AppendDeltaTrailer(out)
}

// mergedDelta joins the consecutive deltas from a to b (each from the cache
// or the shards once) into the one delta from a to b: the objects pay for
// each consecutive delta once, however many readers ask for however many
// spans. The merge sets each delta's positions into a bitset of each shard
// as it reads them (snapshot.DeltaMerger): what it holds is bounded by the
// filter's bits, whatever the number of spans and positions (deltaWeight).
func (s *Server) mergedDelta(ctx context.Context, name string, g, a, b uint64) ([]byte, error) {
	var merge snapshot.DeltaMerger
	for n := a; n < b; n++ {
		ans, _, err := s.deltaBetween(ctx, name, g, n, n+1, nil)
		if err != nil {
			return nil, err
		}
		if err := merge.Add(ans.body); err != nil {
			return nil, internalError(http.StatusBadGateway, "shard_protocol", fmt.Sprintf("the delta from checkpoint %d to %d does not follow the ones before", n, n+1), err)
		}
	}
	return merge.Delta(), nil
}

// checkpointSnapshot answers the filter as it is now, which holds every
// change up to checkpoint b, with b's cursor: a copy that loads it syncs
// on from b. It is kept in the edge cache for a checkpoint interval, so a
// crowd of new readers costs the shards one snapshot a colo an interval.
// It streams to the client (the front never holds a whole shard), and a
// copy is put in the cache only once every shard's record came whole with
// its checksum right (cacheTee): a snapshot cut short is sent short, and
// kept nowhere. Where the cache keeps nothing, the shards are still read
// once for the answer.
func (s *Server) checkpointSnapshot(ctx context.Context, w http.ResponseWriter, r *http.Request, name string, g, b uint64) error {
	key := cacheKey(name, g, fmt.Sprintf("%d/snapshot", b))
	var res *cachedStream
	match := func() bool {
		res = cacheMatchStream(ctx, key)
		return res != nil
	}
	hit, done, err := lookOrMake(ctx, key, match)
	if err != nil {
		return err
	}
	if hit {
		return writeCachedStream(w, res, "hit")
	}
	defer done()
	// Only the request that streams it from the shards takes a share of
	// the budget: a hit streams the cache's body through a copy buffer.
	leave, err := s.enterHeavy(ctx, name, snapshotWeight)
	if err != nil {
		return err
	}
	defer leave()
	p, cs, err := s.checkpointsOf(ctx, name, g, b)
	if err != nil {
		return err
	}
	first, err := s.shardSnapshot(ctx, name, p, 0)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("X-Edgebloom-Cursor", cs[0].Text())
	h.Set("X-Edgebloom-Checkpoint", strconv.FormatUint(b, 10))
	h.Set("Cache-Control", "private, max-age="+strconv.Itoa(snapshotSeconds()))
	h.Set("X-Edgebloom-Cache", "miss")
	tee := &cacheTee{ResponseWriter: w, ctx: ctx, key: key, maxAge: snapshotSeconds()}
	whole := s.streamSnapshot(ctx, tee, name, p, first)
	tee.end(whole)
	return nil
}

// snapshotSeconds is how long a snapshot of a checkpoint is kept: it stays
// right for the checkpoint's cursor (it holds every change up to it) while
// the checkpoint is kept, about keptCheckpoints intervals; a day at most.
func snapshotSeconds() int {
	return min(keptCheckpoints*checkpointSeconds(), 86400)
}

// keptCheckpoints is how many checkpoints the checkpoint object keeps
// (KEPT_CHECKPOINTS of worker/shard/abi.js, generated from the same
// constant).
const keptCheckpoints = abi.KeptCheckpoints
