package client

import (
	"bytes"
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
	var d download
	err := c.exchange(ctx, http.MethodGet, path, rawQuery, "", nil, nil, func(res *http.Response) error {
		body, err := readBody(res, maxSnapshotBytes)
		d = download{body, res.Header}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &d, nil
}

var errTooLarge = errors.New("answer larger than the largest filter")

// readBody reads an answer whole, checking its Content-Length, at most limit
// bytes. What it holds grows with what arrives: a Content-Length is trusted
// for at most maxPrealloc bytes before they come.
func readBody(res *http.Response, limit int64) ([]byte, error) {
	if res.ContentLength > limit {
		return nil, fmt.Errorf("%w: Content-Length %d", errTooLarge, res.ContentLength)
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(max(res.ContentLength, 0), maxPrealloc)+1))
	if _, err := io.Copy(buf, io.LimitReader(res.Body, limit+1)); err != nil {
		return nil, err
	}
	switch n := int64(buf.Len()); {
	case n > limit:
		return nil, fmt.Errorf("%w: more than %d bytes", errTooLarge, limit)
	case res.ContentLength >= 0 && n != res.ContentLength:
		return nil, fmt.Errorf("%d of the %d bytes of Content-Length: %w", n, res.ContentLength, io.ErrUnexpectedEOF)
	}
	return buf.Bytes(), nil
}

// maxPrealloc bounds what readBody allocates before the bytes arrive.
const maxPrealloc = 16 << 20

// loadSnapshot loads a snapshot the service sent.
func loadSnapshot(d *download) (snapshot.Set, error) {
	set, err := snapshot.Load(d.body, MaxShardBits)
	if err != nil {
		return nil, fmt.Errorf("client: the service's snapshot (%s, %s bytes): %w",
			d.header.Get("X-Edgebloom-Format"), strconv.Itoa(len(d.body)), err)
	}
	return set, nil
}
