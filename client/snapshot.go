package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/edgebloom/edgebloom/snapshot"
)

// maxSnapshotBytes bounds a snapshot: MaxShards shards of MaxShardBits
// bits, their headers and the container's.
const maxSnapshotBytes = MaxShards*(MaxShardBits/8+1024) + 4096

// Snapshot downloads the filter name and loads it: a *bloom.Filter for a
// filter of one shard, a *snapshot.Sharded for several. Its Has and
// HasString answer as Check would, locally. It needs the secret or a read
// token. A download cut short is sent again as the retry policy says.
func (c *Client) Snapshot(ctx context.Context, name string) (snapshot.Set, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	b, err := c.getBinary(ctx, filterPath(name, "/snapshot"), "")
	if err != nil {
		return nil, err
	}
	return loadSnapshot(b)
}

// WriteSnapshot writes the filter name's snapshot to w as the service sends
// it (docs/format.md: the plain format for one shard, the sharded container
// for several) and returns how many bytes it wrote. It streams: the filter
// is never held in memory. Once bytes have reached w, a failure is not sent
// again: w then holds part of a snapshot, and the error says so.
func (c *Client) WriteSnapshot(ctx context.Context, name string, w io.Writer) (int64, error) {
	if err := checkName(name); err != nil {
		return 0, err
	}
	path := filterPath(name, "/snapshot")
	res, err := c.send(ctx, http.MethodGet, path, "", nil, nil)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	n, err := io.Copy(w, res.Body)
	if err == nil && res.ContentLength >= 0 && n != res.ContentLength {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return n, fmt.Errorf("client: GET %s: %d bytes written, then: %w", path, n, err)
	}
	return n, nil
}

// A download is a binary answer read whole.
type download struct {
	body   []byte
	header http.Header
}

// getBinary GETs a binary answer and reads it whole; an answer cut short is
// asked for again, as the retry policy allows.
func (c *Client) getBinary(ctx context.Context, path, rawQuery string) (*download, error) {
	for attempt := 1; ; attempt++ {
		res, err := c.send(ctx, http.MethodGet, path, rawQuery, nil, nil)
		if err != nil {
			return nil, err
		}
		body, err := readBody(res, maxSnapshotBytes)
		if err == nil {
			return &download{body, res.Header}, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		err = fmt.Errorf("client: GET %s: %w", path, err)
		if errors.Is(err, errTooLarge) || attempt >= c.retry.Attempts {
			return nil, err
		}
		if !c.sleep(ctx.Done(), c.backoff(attempt)) {
			return nil, ctx.Err()
		}
	}
}

var errTooLarge = errors.New("answer larger than the largest filter")

// readBody reads an answer whole, checking its Content-Length, at most limit
// bytes.
func readBody(res *http.Response, limit int64) ([]byte, error) {
	defer res.Body.Close()
	if res.ContentLength > limit {
		return nil, fmt.Errorf("%w: Content-Length %d", errTooLarge, res.ContentLength)
	}
	size := int64(0)
	if res.ContentLength > 0 {
		size = res.ContentLength
	}
	buf := make([]byte, 0, size+1)
	for {
		if int64(len(buf)) > limit {
			return nil, fmt.Errorf("%w: more than %d bytes", errTooLarge, limit)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := res.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if res.ContentLength >= 0 && int64(len(buf)) != res.ContentLength {
		return nil, fmt.Errorf("%d of the %d bytes of Content-Length: %w", len(buf), res.ContentLength, io.ErrUnexpectedEOF)
	}
	return buf, nil
}

// loadSnapshot loads a snapshot the service sent.
func loadSnapshot(d *download) (snapshot.Set, error) {
	set, err := snapshot.Load(d.body, MaxShardBits)
	if err != nil {
		return nil, fmt.Errorf("client: the service's snapshot (%s, %s bytes): %w",
			d.header.Get("X-Edgebloom-Format"), strconv.Itoa(len(d.body)), err)
	}
	return set, nil
}
