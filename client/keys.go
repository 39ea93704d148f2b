package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Add adds keys to the filter name and reports, for each key in order,
// whether it was new (true) or probably there already (false): a
// test-and-add, as bloom.Filter's Add. Keys are strings hashed as their
// bytes, sent as they are (a key that is not UTF-8 is read by the service as
// a JS TextDecoder reads it, worker/README.md); a key over MaxKeyBytes is
// refused before anything is sent. It needs the secret or a write token.
//
// The keys go in batches (the package doc, "Batches"), each sent again as
// the retry policy says; a batch is answered whole or fails whole. When a
// batch fails for good, no further batch is sent, the batches in flight are
// waited for, and Add returns a *BatchError: every key its Answered marks is
// in the filter, with its answer in Results; any other key may be in the
// filter or not (a request that failed may have reached some of the
// filter's shards), and adding it again is safe. A batch sent again after a
// 502 or a lost answer may report as not new a key its failed attempt added:
// "new" is exact only for a batch answered at its first attempt.
func (c *Client) Add(ctx context.Context, name string, keys ...string) ([]bool, error) {
	return c.keys(ctx, name, "add", "added", keys)
}

// Check reports, for each key in order, whether it is probably in the
// filter name (true; false positives at the filter's error rate) or
// certainly not (false). It needs the secret, a read or a write token. Its
// batches are as Add's; on failure it returns a *BatchError with the
// answers of the batches answered.
func (c *Client) Check(ctx context.Context, name string, keys ...string) ([]bool, error) {
	return c.keys(ctx, name, "check", "present", keys)
}

// A batch is keys[from:to], sent as one request.
type batch struct{ from, to int }

// keyBodyOverhead is the length of {"keys":[ and ]}.
const keyBodyOverhead = len(`{"keys":[`) + len(`]}`)

func (c *Client) keys(ctx context.Context, name, action, field string, keys []string) ([]bool, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	for i, k := range keys {
		if len(k) > MaxKeyBytes {
			return nil, fmt.Errorf("client: %s: key %d is %d bytes; the service takes at most %d", action, i, len(k), MaxKeyBytes)
		}
	}
	batches := c.split(keys)
	results := make([]bool, len(keys))
	answered := make([]bool, len(keys))
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	sem := make(chan struct{}, c.concurrency)
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return first != nil
	}
	for _, b := range batches {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil || failed() {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			got, err := c.sendBatch(ctx, name, action, field, keys[b.from:b.to])
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				var e *Error
				if errors.As(err, &e) && e.Index >= 0 {
					e.Index += b.from // the caller's index, not the batch's
				}
				if first == nil {
					first = err
				}
				return
			}
			copy(results[b.from:], got)
			for i := b.from; i < b.to; i++ {
				answered[i] = true
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	if first != nil {
		return nil, &BatchError{Err: first, Results: results, Answered: answered}
	}
	return results, nil
}

// split cuts keys into batches of at most batchKeys keys and MaxBodyBytes
// of body each.
func (c *Client) split(keys []string) []batch {
	var out []batch
	from, size := 0, keyBodyOverhead
	for i, k := range keys {
		n := encodedKeyLen(k)
		if i > from {
			n++ // the comma
		}
		if i-from == c.batchKeys || size+n > MaxBodyBytes {
			out = append(out, batch{from, i})
			from, size = i, keyBodyOverhead
			n = encodedKeyLen(k)
		}
		size += n
	}
	if from < len(keys) {
		out = append(out, batch{from, len(keys)})
	}
	return out
}

// sendBatch sends one add or check of keys and returns its answers.
func (c *Client) sendBatch(ctx context.Context, name, action, field string, keys []string) ([]bool, error) {
	body := make([]byte, 0, keyBodyOverhead+len(keys)*2)
	body = append(body, `{"keys":[`...)
	for i, k := range keys {
		if i > 0 {
			body = append(body, ',')
		}
		body = appendKey(body, k)
	}
	body = append(body, "]}"...)
	var got []bool
	err := c.exchange(ctx, http.MethodPost, filterPath(name, "/"+action), "", "application/json", body, nil, func(res *http.Response) error {
		var err error
		got, err = readResults(res, field, len(keys))
		return err
	})
	return got, err
}

// encodedKeyLen is the length of appendKey(nil, k).
func encodedKeyLen(k string) int {
	n := 2
	for i := 0; i < len(k); i++ {
		switch b := k[i]; {
		case b == '"' || b == '\\' || b == '\n' || b == '\r' || b == '\t':
			n += 2
		case b < 0x20:
			n += 6
		default:
			n++
		}
	}
	return n
}

// appendKey appends k as a JSON string whose bytes are k's: only '"', '\\'
// and control bytes are escaped, and a byte sequence that is not UTF-8 is
// sent as it is, so that the service reads the key as a JS TextDecoder
// would (encoding/json would replace each bad byte with U+FFFD, which the
// service would hash differently).
func appendKey(dst []byte, k string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(k); i++ {
		switch b := k[i]; {
		case b == '"' || b == '\\':
			dst = append(dst, '\\', b)
		case b == '\n':
			dst = append(dst, '\\', 'n')
		case b == '\r':
			dst = append(dst, '\\', 'r')
		case b == '\t':
			dst = append(dst, '\\', 't')
		case b < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&15])
		default:
			dst = append(dst, b)
		}
	}
	return append(dst, '"')
}

// readResults reads {"<field>": [bool, ...]} of n answers.
func readResults(res *http.Response, field string, n int) ([]bool, error) {
	var out map[string][]bool
	// An answer is at most 6 bytes a key and a few more.
	if err := json.NewDecoder(io.LimitReader(res.Body, int64(n)*6+64)).Decode(&out); err != nil {
		return nil, err
	}
	got, ok := out[field]
	if !ok || len(got) != n {
		return nil, fmt.Errorf("%w: %d answers in %q for %d keys", errUnexpected, len(got), field, n)
	}
	return got, nil
}
