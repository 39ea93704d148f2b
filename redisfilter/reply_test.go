package redisfilter

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/edgebloom/edgebloom/redisfilter/redistest"
	"github.com/edgebloom/edgebloom/redisfilter/redisx"
	"github.com/redis/go-redis/v9"
)

// A replyRewriter changes the replies of one script's calls after Redis
// answered them, as a proxy or a Redis-compatible server that answers
// otherwise would: the filter must return an error, never panic, and keep
// working once the replies are right again.
type replyRewriter struct {
	mu     sync.Mutex
	script *redis.Script
	change func(any) any // nil: replies stay as they are
}

func (h *replyRewriter) set(script *redis.Script, change func(any) any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.script, h.change = script, change
}

// apply changes the reply of cmd when it is a call of the script, by its
// SHA-1 (EVALSHA) or by its source (EVAL).
func (h *replyRewriter) apply(cmd redis.Cmder) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := cmd.(*redis.Cmd)
	args := cmd.Args()
	if !ok || h.change == nil || c.Err() != nil || len(args) < 2 {
		return
	}
	name, _ := args[0].(string)
	body, _ := args[1].(string)
	if name == "evalsha" && body == h.script.Hash() || name == "eval" && redis.NewScript(body).Hash() == h.script.Hash() {
		c.SetVal(h.change(c.Val()))
	}
}

func (h *replyRewriter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *replyRewriter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.apply(cmd)
		return err
	}
}

func (h *replyRewriter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			h.apply(cmd)
		}
		return err
	}
}

// truncate drops the last value of an array reply.
func truncate(v any) any {
	if vals, ok := v.([]any); ok && len(vals) > 0 {
		return vals[:len(vals)-1]
	}
	return v
}

func TestMalformedReplies(t *testing.T) {
	srv := redistest.Start(t)
	ctx, c := testCtx(t), srv.Client()
	hook := &replyRewriter{}
	c.AddHook(hook)
	f, err := NewWithConfig(ctx, c, "crawl", Config{Capacity: 1000, FPRate: 0.01, Shards: 2})
	if err != nil {
		t.Fatal(err)
	}
	keys := urls("r", 50)
	if _, err := f.AddMany(ctx, keys); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		script *redis.Script
		change func(any) any
		call   func() error
		want   string
	}{
		{"Count, a reply of one value", statScript, truncate, func() error { return second(f.Count(ctx)) }, "1 values, want 2"},
		{"SetBits, a reply of none", statScript, func(any) any { return []any{} }, func() error { return second(f.SetBits(ctx)) }, "0 values, want 2"},
		{"Count, a count that is an integer", statScript, func(v any) any { return []any{int64(3), int64(0)} }, func() error { return second(f.Count(ctx)) }, "the integer 3, want a string"},
		{"SetBits, bits that are a string", statScript, func(v any) any { return []any{"3", "9"} }, func() error { return second(f.SetBits(ctx)) }, `the string "9", want an integer`},
		{"Snapshot, a reply of one value", statScript, truncate, func() error { return second(f.Snapshot(ctx)) }, "1 values, want 2"},
		{"Add, a reply of none", addScript, truncate, func() error { return second(f.Add(ctx, "https://new.example/")) }, "0 values, want 1"},
		{"Has, a reply that is no array", hasScript, func(any) any { return "OK" }, func() error { return second(f.Has(ctx, keys[0])) }, "redisfilter: check"},
		{"AddMany, a reply too short", addScript, truncate, func() error { return second(f.AddMany(ctx, urls("s", 10))) }, "values, want"},
		{"HasMany, a nil among the answers", hasScript, func(v any) any {
			vals := v.([]any)
			vals[0] = nil
			return vals
		}, func() error { return second(f.HasMany(ctx, keys)) }, "a nil, want an integer"},
		{"New, parameters of an odd length", createScript, truncate, func() error {
			return second(NewWithConfig(ctx, c, "crawl", Config{Capacity: 1000, FPRate: 0.01, Shards: 2}))
		}, "want an array of fields and values"},
		{"New, a reply that is a string", createScript, func(any) any { return "1" }, func() error {
			return second(NewWithConfig(ctx, c, "crawl", Config{Capacity: 1000, FPRate: 0.01, Shards: 2}))
		}, `the string "1", want an array`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hook.set(tt.script, tt.change)
			defer hook.set(nil, nil)
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panicked: %v", p)
					}
				}()
				err = tt.call()
			}()
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "redisfilter: ") {
				t.Errorf("got %v; want a redisfilter error saying %q", err, tt.want)
			}
			if tt.want != "redisfilter: check" && !errors.Is(err, redisx.ErrUnexpectedReply) {
				t.Errorf("got %v; want it to wrap redisx.ErrUnexpectedReply", err)
			}
		})
	}
	// The filter answers as before once the replies are right again.
	got, err := f.HasMany(ctx, keys)
	if err != nil || !allTrue(got) {
		t.Errorf("HasMany after the bad replies: got %v, %v; want every key", got, err)
	}
	// The calls whose replies were bad ran in Redis: Add's key and AddMany's
	// ten were added.
	if n, err := f.Count(ctx); err != nil || n < uint64(len(keys)) || n > uint64(len(keys)+11) {
		t.Errorf("Count after the bad replies: got %d, %v; want %d to %d", n, err, len(keys), len(keys)+11)
	}
}
