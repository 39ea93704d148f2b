package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// maxErrorBody bounds what is read of an error answer.
const maxErrorBody = 64 << 10

// sent says what the attempts of a request saw before its answer.
type sent struct {
	// unsure is set when an attempt may have been done by the service
	// without its answer reaching us: a connection that failed after the
	// request was written, or a 5xx.
	unsure bool
	// attempts counts the requests sent.
	attempts int
}

// send sends the request, and again as the retry policy says, until an
// answer below 400, an error that is not to be retried, or the attempts
// run out; it returns the answer (its body unread) or the last error: an
// *Error for an answer of 400 or more, the context's error, or the
// transport's.
func (c *Client) send(ctx context.Context, method, path, rawQuery string, body []byte, info *sent) (*http.Response, error) {
	return c.sendAs(ctx, method, path, rawQuery, "application/json", body, info)
}

// sendAs is send with a body of the content type ctype.
func (c *Client) sendAs(ctx context.Context, method, path, rawQuery, ctype string, body []byte, info *sent) (*http.Response, error) {
	if info == nil {
		info = &sent{}
	}
	u := *c.base
	u.Path += path
	u.RawQuery = rawQuery
	for attempt := 1; ; attempt++ {
		info.attempts = attempt
		res, err := c.once(ctx, method, u.String(), ctype, body)
		var wait time.Duration
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			info.unsure = true
			wait = c.backoff(attempt)
		case res.StatusCode < 400:
			return res, nil
		default:
			e := readError(res, method, path)
			err = e
			if e.Status >= 500 {
				info.unsure = true
			}
			var retry bool
			wait, retry = c.retryWait(e, attempt)
			if !retry {
				return nil, e
			}
		}
		if attempt >= c.retry.Attempts {
			return nil, err
		}
		if !c.sleep(ctx.Done(), wait) {
			return nil, ctx.Err()
		}
	}
}

// once sends one request.
func (c *Client) once(ctx context.Context, method, url, ctype string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	if c.credential != "" {
		req.Header.Set("Authorization", "Bearer "+c.credential)
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	return c.hc.Do(req)
}

// retryWait says whether an error answer is sent again, and after how long.
func (c *Client) retryWait(e *Error, attempt int) (time.Duration, bool) {
	switch {
	case e.Status == http.StatusTooManyRequests, e.Code == "busy", e.Code == "checkpoint_pending":
		if e.RetryAfter == 0 {
			return c.backoff(attempt), true
		}
		if e.RetryAfter > c.retry.MaxRetryAfter {
			return 0, false
		}
		// Never before Retry-After; up to half of it later, so that the
		// clients a busy front turned away do not all come back at once.
		return e.RetryAfter + time.Duration(c.rand()*float64(e.RetryAfter)/2), true
	case e.Code == "stale_generation":
		return 0, true
	case e.Code == "shard_unavailable", e.Code == "canceled",
		// No code of the service's: a proxy or the platform in front of it.
		e.Code == "http_"+strconv.Itoa(e.Status) && (e.Status == 502 || e.Status == 503 || e.Status == 504):
		return c.backoff(attempt), true
	}
	return 0, false
}

// backoff is the wait after the attempt-th failure: MinBackoff doubled
// each time up to MaxBackoff, drawn from half to all of it.
func (c *Client) backoff(attempt int) time.Duration {
	d := c.retry.MinBackoff
	for i := 1; i < attempt && d < c.retry.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, c.retry.MaxBackoff)
	return d/2 + time.Duration(c.rand()*float64(d/2))
}

// readError reads an error answer into an *Error.
func readError(res *http.Response, method, path string) *Error {
	defer res.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	e := &Error{Status: res.StatusCode, Index: -1, Method: method, Path: path}
	var body struct {
		Error *struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"requestId"`
			Index     *int   `json:"index"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &body) == nil && body.Error != nil && body.Error.Code != "" {
		e.Code, e.Message, e.RequestID = body.Error.Code, body.Error.Message, body.Error.RequestID
		if body.Error.Index != nil {
			e.Index = *body.Error.Index
		}
	} else {
		e.Code = "http_" + strconv.Itoa(res.StatusCode)
		e.Message = http.StatusText(res.StatusCode)
	}
	e.RetryAfter = retryAfter(res.Header.Get("Retry-After"), time.Now())
	return e
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// exchange sends a request as send does and reads its answer with read. An
// answer cut short (the connection failed while it was read) counts as a
// failed attempt, and the request is sent again as the retry policy allows;
// any other error of read is returned.
func (c *Client) exchange(ctx context.Context, method, path, rawQuery, ctype string, body []byte, info *sent, read func(*http.Response) error) error {
	if info == nil {
		info = &sent{}
	}
	for attempt := 1; ; attempt++ {
		res, err := c.sendAs(ctx, method, path, rawQuery, ctype, body, info)
		if err != nil {
			return err
		}
		err = read(res)
		// The rest (a JSON answer's newline), so that the connection is
		// kept for the next request.
		io.Copy(io.Discard, io.LimitReader(res.Body, 4096))
		res.Body.Close()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		}
		err = fmt.Errorf("client: %s %s: reading the answer: %w", method, path, err)
		if !cutShort(err) || attempt >= c.retry.Attempts {
			return err
		}
		info.unsure = true
		if !c.sleep(ctx.Done(), c.backoff(attempt)) {
			return ctx.Err()
		}
	}
}

// cutShort reports whether err is an answer's body that ended early: the
// connection closed or failed before its end.
func cutShort(err error) bool {
	var ne net.Error
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne)
}

// doJSON sends a request and decodes its JSON answer into out (when not
// nil); it returns the answer's status.
func (c *Client) doJSON(ctx context.Context, method, path string, in, out any, info *sent) (int, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return 0, fmt.Errorf("client: %s %s: %w", method, path, err)
		}
	}
	status := 0
	err := c.exchange(ctx, method, path, "", "application/json", body, info, func(res *http.Response) error {
		status = res.StatusCode
		if out == nil {
			_, err := io.Copy(io.Discard, io.LimitReader(res.Body, maxErrorBody))
			return err
		}
		return json.NewDecoder(io.LimitReader(res.Body, 64<<20)).Decode(out)
	})
	return status, err
}

// errUnexpected is wrapped by errors about an answer the service should not
// give (a missing header, a body of the wrong kind).
var errUnexpected = errors.New("client: unexpected answer")
