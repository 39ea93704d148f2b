package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/edgebloom/edgebloom/redisfilter"
	"github.com/redis/go-redis/v9"
)

func init() {
	commands = append(commands, &command{
		name: "push",
		args: "[--name N] [--cluster] [--recreate] FILE URL\n       push [--name N] [--state F] [--restart] [--parallel P] FILE http(s)://SERVICE[/v1/filters/N]\n       push --keys [--name N] [-n N -p P --shards S] [--state F] [INPUT...] http(s)://SERVICE[/v1/filters/N]",
		about: `With an http(s) URL, push publishes to the edge service (worker/README.md),
with the credential of EDGEBLOOM_TOKEN or --token-file (the secret or a
write token): FILE, a filter built with build (or a sharded snapshot), is
sent as its bits through the service's merge endpoint, making the filter
with FILE's parameters if it does not exist; with --keys, the keys of the
inputs, one a line ("-" or none: stdin), are added in batches of 10,000,
--parallel at once (-n, -p and --shards make the filter first). Either
records its progress after every acknowledged request in a state file
(--state, default .edgebloom-push-NAME.json): run the same command again
after an interruption and it resumes there; the file is removed when the
push ends. A bar on a terminal, lines every --progress otherwise.

Push copies the filter in FILE into Redis at URL (redis://[user:password@]host:port/db,
rediss:// for TLS, unix://path) as the filter called N, by default FILE's
name without its extension. FILE holds a classic filter, or a sharded snapshot
of the edge service or of pull. The name must be free in Redis: delete the
old filter first to replace it. When the filter under the name was lost
(Redis restarted without its data, or evicted keys of it), push says so and
replaces it only with --recreate; processes still using the lost filter
then get errors, never its answers. Go programs then use it with package
redisfilter, and check and add with --redis.`,
		flags: pushFlags,
	}, &command{
		name: "pull",
		args: "[--name N] [--cluster] URL FILE\n       pull [--name N] [--mode changes|checkpoints] [--every D] http(s)://SERVICE[/v1/filters/N] FILE",
		about: `With an http(s) URL, pull writes the service's filter N (by default FILE's
name without its extension) to FILE, and FILE.cursor beside it: run again,
it fetches only what changed since (a delta), or the whole filter when it
was made again; with --every it keeps FILE in sync until interrupted. It
needs the secret or a read token (EDGEBLOOM_TOKEN or --token-file).

Pull writes the filter called N in Redis at URL (by default FILE's name
without its extension) to FILE in the portable format: a classic filter, or
a sharded snapshot when the filter has several shards. "-" is stdout.`,
		flags: pullFlags,
	})
}

// redisOpts are the flags that name a filter in Redis.
type redisOpts struct {
	url, name string
	cluster   bool
}

// redisTargetFlags adds --name and --cluster, and with withURL --redis, to
// fs.
func redisTargetFlags(fs *flag.FlagSet, withURL bool) *redisOpts {
	o := &redisOpts{}
	if withURL {
		fs.StringVar(&o.url, "redis", "", "use the filter in Redis at this URL (with --name) instead of a file")
	}
	fs.StringVar(&o.name, "name", "", "the filter's name in Redis")
	fs.BoolVar(&o.cluster, "cluster", false, "URL names a node of a Redis Cluster (more with ?addr=host:port)")
	return o
}

// client connects to the Redis of o.url. Retries are off: a broken
// connection is an error of the command, and an add is never run twice.
// go-redis's own log lines are off too: the command reports its errors in
// one line.
func (o *redisOpts) client() (redis.UniversalClient, error) {
	redis.SetLogger(silent{})
	if o.cluster {
		opt, err := redis.ParseClusterURL(o.url)
		if err != nil {
			return nil, fmt.Errorf("redis URL %q: %w", o.url, err)
		}
		opt.MaxRetries = -1
		return redis.NewClusterClient(opt), nil
	}
	opt, err := redis.ParseURL(o.url)
	if err != nil {
		return nil, fmt.Errorf("redis URL %q: %w", o.url, err)
	}
	opt.MaxRetries = -1
	return redis.NewClient(opt), nil
}

type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}

// defaultName is the filter name a file stands for: its base name without
// its extension.
func defaultName(path string) string {
	base := filepath.Base(path)
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	return base
}

// redisError drops the "redisfilter: " that package redisfilter starts its
// errors with: after "edgebloom: cmd:" it says nothing more. A filter that
// is lost gets the command that replaces it.
func redisError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, redisfilter.ErrRecreated):
		err = fmt.Errorf("%w (run the command again to use the filter that has the name now)", err)
	case errors.Is(err, redisfilter.ErrLost):
		// The library's detail names a shard and its own option.
		err = fmt.Errorf("%w (Redis restarted without its data, or evicted or deleted some); to replace the filter from a file: edgebloom push --recreate FILE URL", redisfilter.ErrLost)
	}
	return trimmedPrefix{err, "redisfilter: "}
}

type trimmedPrefix struct {
	error
	prefix string
}

func (t trimmedPrefix) Error() string { return strings.TrimPrefix(t.error.Error(), t.prefix) }
func (t trimmedPrefix) Unwrap() error { return t.error }

func pushFlags(fs *flag.FlagSet) func(*env, []string) (int, error) {
	o := redisTargetFlags(fs, false)
	recreate := fs.Bool("recreate", false, "replace a lost filter of the same name (its keys gone from Redis)")
	so := serviceFlags(fs, true)
	return func(e *env, args []string) (int, error) {
		if len(args) > 0 && isServiceURL(args[len(args)-1]) {
			return pushService(e, args, o.name, so)
		}
		if len(args) != 2 {
			return 2, fmt.Errorf("want FILE and URL, got %d arguments", len(args))
		}
		path := args[0]
		o.url = args[1]
		if o.name == "" {
			o.name = defaultName(path)
		}
		info, err := inspect(path)
		if err != nil && !isContainer(path) {
			return 2, err
		}
		if err == nil && info.Kind != "classic" {
			return 2, fmt.Errorf("%s: a %s filter; Redis holds classic filters", path, info.Kind)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return 2, err
		}
		c, err := o.client()
		if err != nil {
			return 2, err
		}
		defer c.Close()
		f, err := redisfilter.RestoreWithOptions(context.Background(), c, o.name, data, maxBits, redisfilter.RestoreOptions{Recreate: *recreate})
		if err != nil {
			return 2, redisError(err)
		}
		fmt.Fprintf(e.stderr, "%s -> %s: %s, %d bits in %d shard(s), k=%d\n", path, o.name, redact(o.url), f.NumBits(), f.Shards(), f.NumHashes())
		return 0, nil
	}
}

// isContainer reports whether the file at path starts as a sharded snapshot.
func isContainer(path string) bool {
	fd, err := os.Open(path)
	if err != nil {
		return false
	}
	defer fd.Close()
	magic := make([]byte, 4)
	_, err = io.ReadFull(fd, magic)
	return err == nil && string(magic) == "EBSC"
}

// redact hides a password in a Redis URL for messages.
func redact(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	at := strings.LastIndexByte(rest, '@')
	if !ok || at < 0 {
		return url
	}
	user, _, _ := strings.Cut(rest[:at], ":")
	return scheme + "://" + user + ":***" + rest[at:]
}

// snapshotTo makes a Redis filter's snapshot an io.WriterTo.
type snapshotTo struct {
	ctx context.Context
	f   *redisfilter.Filter
}

func (s snapshotTo) WriteTo(w io.Writer) (int64, error) { return s.f.WriteSnapshot(s.ctx, w) }

func pullFlags(fs *flag.FlagSet) func(*env, []string) (int, error) {
	o := redisTargetFlags(fs, false)
	so := serviceFlags(fs, false)
	return func(e *env, args []string) (int, error) {
		if len(args) == 2 && isServiceURL(args[0]) {
			return pullService(e, args, o.name, so)
		}
		if len(args) != 2 {
			return 2, fmt.Errorf("want URL and FILE, got %d arguments", len(args))
		}
		o.url = args[0]
		path := args[1]
		if o.name == "" {
			if path == "-" {
				return 2, errors.New("--name is needed when FILE is stdout")
			}
			o.name = defaultName(path)
		}
		f, closeClient, err := o.open()
		if err != nil {
			return 2, err
		}
		defer closeClient()
		ctx := context.Background()
		if path == "-" {
			if isTerminal(e.stdout) {
				return 2, errors.New("refusing to write a filter to a terminal: name a FILE or redirect stdout")
			}
			_, err = f.WriteSnapshot(ctx, e.stdout)
		} else {
			err = writeFileAtomic(path, snapshotTo{ctx, f})
		}
		if err != nil {
			return 2, redisError(err)
		}
		fmt.Fprintf(e.stderr, "%s: %s -> %s: %d bytes\n", redact(o.url), o.name, path, f.SnapshotSize())
		return 0, nil
	}
}

// open connects and opens the filter o names, which must exist.
func (o *redisOpts) open() (*redisfilter.Filter, func(), error) {
	if o.name == "" {
		return nil, nil, errors.New("--redis needs --name")
	}
	c, err := o.client()
	if err != nil {
		return nil, nil, err
	}
	f, err := redisfilter.Open(context.Background(), c, o.name)
	if err != nil {
		c.Close()
		if errors.Is(err, redisfilter.ErrNotFound) {
			err = fmt.Errorf("%w (make one with edgebloom build, then push)", err)
		}
		return nil, nil, redisError(err)
	}
	return f, func() { c.Close() }, nil
}

// A redisBatch collects keys for one round trip of AddMany or HasMany.
type redisBatch struct {
	shown, keys []string // as given, and as hashed (canonical)
	err         error
}

// redisBatchSize is the number of keys a command sends in one call.
const redisBatchSize = 10000

// add collects a key and runs flush when the batch is full, unless an
// earlier flush failed.
func (b *redisBatch) add(key, canonical []byte, flush func([]string, []string) error) {
	if b.err != nil {
		return
	}
	b.shown = append(b.shown, string(key))
	b.keys = append(b.keys, string(canonical))
	if len(b.keys) == redisBatchSize {
		b.done(flush)
	}
}

// done runs flush on the keys collected and empties the batch.
func (b *redisBatch) done(flush func([]string, []string) error) {
	if b.err == nil && len(b.keys) > 0 {
		b.err = flush(b.shown, b.keys)
	}
	b.shown, b.keys = b.shown[:0], b.keys[:0]
}
