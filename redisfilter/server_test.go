package redisfilter

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The tests run a real redis-server through package redistest, which fails
// them, never skips them, when there is none.

// noRetries turns go-redis's retries off, so a broken connection shows as
// an error at once.
func noRetries(o *redis.Options) { o.MaxRetries = -1 }

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// go-redis logs every failed dial; the outage tests cause many on purpose
// and check the errors the calls return instead.
func init() { redis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
