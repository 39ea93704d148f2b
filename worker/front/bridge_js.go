//go:build js && wasm

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall/js"
)

// The front's transport between workerd and Go (front.js is its JS half).
//
// A kept Go instance serves request after request, so a request must leave
// nothing behind: every js.Func made stays in Go's table of callbacks, and
// keeps what its closure holds, until it is released. syumai/workers'
// request and response conversion makes callbacks it does not always
// release (a body handed to JS as a ReadableStream keeps its pull and
// cancel functions and a 16 KiB buffer; a promise awaited keeps whichever
// of then and catch did not run). So bodies cross here as bytes, and the
// program makes exactly two callbacks, once, at start: serve, which JS
// calls with each request, and settle, which JS calls when something Go
// asked of it is done. syumai/workers still provides the rest (its glue,
// the runtime context, cloudflare.Getenv, Ready).
//
// Each request gets a JS function, post, that Go calls with what it needs
// done: a Durable Object fetched, a chunk of a response body read, the
// response answered, a chunk of a streamed response written. post only
// queues the message and wakes the request's own loop in front.js, which
// does the work: in workerd, I/O (a fetch, a stream) belongs to the request
// that started it, and Go may run one request's goroutine while JS is in
// another's callback.

// inlineBytes is the most of a response body Go holds before it streams
// the rest: every answer but a snapshot is far smaller.
const inlineBytes = 1 << 20

var (
	binding    = js.Global().Get("context").Get("binding")
	uint8Array = js.Global().Get("Uint8Array")
)

// pending maps the id of each thing Go asked JS to do to the channel its
// result goes to.
var pending struct {
	sync.Mutex
	next    int
	waiting map[int]chan []js.Value
}

// startBridge sets serve and settle on the binding: they live as long as
// the program.
func startBridge(h http.Handler) {
	pending.waiting = map[int]chan []js.Value{}
	binding.Set("maxRequestBytes", maxBodyBytes)
	binding.Set("settle", js.FuncOf(settle))
	binding.Set("serve", js.FuncOf(func(_ js.Value, args []js.Value) any {
		// serve(method, url, headers, body, post): the body is a Uint8Array
		// (at most maxRequestBytes+1 of it, which is enough to refuse it) or
		// null, the headers "name\nvalue\n" pairs.
		r := &request{post: args[4]}
		body := bytesFromJS(args[3])
		method, rawURL, header := args[0].String(), args[1].String(), args[2].String()
		go r.serve(h, method, rawURL, header, body)
		return nil
	}))
}

// settle(id, ok, values...) delivers the result of what Go asked, by id.
func settle(_ js.Value, args []js.Value) any {
	id := args[0].Int()
	pending.Lock()
	ch := pending.waiting[id]
	delete(pending.waiting, id)
	pending.Unlock()
	if ch != nil {
		ch <- args[1:]
	}
	return nil
}

// request is one request in flight: post is its JS function.
type request struct{ post js.Value }

// ask posts op with a new id and waits for JS to settle it; the values
// after ok come back, or the error JS reported.
func (r *request) ask(op string, args ...any) ([]js.Value, error) {
	ch := make(chan []js.Value, 1)
	pending.Lock()
	pending.next++
	id := pending.next
	pending.waiting[id] = ch
	pending.Unlock()
	r.post.Invoke(append([]any{op, id}, args...)...)
	res := <-ch
	if !res[0].Truthy() {
		return nil, errors.New(res[1].String())
	}
	return res[1:], nil
}

type requestKey struct{}

func requestOf(ctx context.Context) *request {
	r, _ := ctx.Value(requestKey{}).(*request)
	return r
}

func (r *request) serve(h http.Handler, method, rawURL, header string, body []byte) {
	u, err := url.Parse(rawURL)
	if err != nil {
		r.post.Invoke("error", err.Error())
		return
	}
	hdr := parseHeader(header)
	req := &http.Request{
		Method:     method,
		URL:        u,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     hdr,
		Body:       http.NoBody,
		Host:       u.Host,
		RemoteAddr: hdr.Get("Cf-Connecting-Ip"),
		RequestURI: u.RequestURI(),
	}
	if n, err := strconv.ParseInt(hdr.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		req.ContentLength = n
	} else if body != nil {
		req.ContentLength = -1
	}
	if body != nil {
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	req = req.WithContext(context.WithValue(context.Background(), requestKey{}, r))
	w := &responseWriter{r: r, header: http.Header{}}
	h.ServeHTTP(w, req)
	w.finish()
}

// responseWriter holds the response until the handler returns, and then
// answers with its bytes; a body over inlineBytes is streamed instead.
type responseWriter struct {
	r         *request
	header    http.Header
	status    int
	buf       []byte
	streaming bool
	err       error // a streamed write that failed: the client went away
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *responseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.err != nil {
		return 0, w.err
	}
	if !w.streaming {
		if len(w.buf)+len(p) <= inlineBytes {
			w.buf = append(w.buf, p...)
			return len(p), nil
		}
		if err := w.startStream(); err != nil {
			return 0, err
		}
	}
	if err := w.send(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// startStream answers with a streamed body and sends what is held. The
// body is a stream of the length the handler set (or of any length), so a
// body cut short shows as a failure.
func (w *responseWriter) startStream() error {
	w.r.post.Invoke("stream", w.status, formatHeader(w.header), w.declaredLength())
	w.streaming = true
	if len(w.buf) > 0 {
		if err := w.send(w.buf); err != nil {
			return err
		}
		w.buf = nil
	}
	return nil
}

// declaredLength is the Content-Length the handler set, or -1.
func (w *responseWriter) declaredLength() int64 {
	if n, err := strconv.ParseInt(w.header.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		return n
	}
	return -1
}

// send writes p to the streamed body and waits until it is taken.
func (w *responseWriter) send(p []byte) error {
	if _, err := w.r.ask("write", bytesToJS(p)); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Flush sends nothing: the body goes out as the handler returns, or as it
// is written once it is streamed.
func (w *responseWriter) Flush() {}

func (w *responseWriter) finish() {
	if w.streaming {
		w.r.post.Invoke("close", w.err == nil)
		return
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	body := js.Null()
	switch w.status {
	case http.StatusSwitchingProtocols, http.StatusNoContent, http.StatusResetContent, http.StatusNotModified:
	default:
		if n := w.declaredLength(); n >= 0 && n != int64(len(w.buf)) {
			// A body that ended short of its length (a shard failed in
			// the middle of a snapshot) must fail as the client reads it,
			// as a streamed one does.
			w.err = errors.New("the body is not the length its header gives")
			if w.startStream() == nil {
				w.r.post.Invoke("close", false)
			}
			return
		}
		body = bytesToJS(w.buf)
	}
	w.r.post.Invoke("respond", w.status, formatHeader(w.header), body)
}

// fetchObject sends an internal request to the Durable Object named object
// of the namespace bound as ns, through the request of ctx.
func fetchObject(ctx context.Context, ns, object, method, url string, header http.Header, body []byte) (*http.Response, error) {
	r := requestOf(ctx)
	if r == nil {
		return nil, errors.New("an internal request outside of a request")
	}
	jsBody := js.Undefined()
	if body != nil {
		jsBody = bytesToJS(body)
	}
	// JS answers the status, the headers, the body's first bytes (all of
	// it when short; null when there is none) and, when there is more, the
	// handle of its reader.
	res, err := r.ask("fetch", ns, object, method, url, formatHeader(header), jsBody)
	if err != nil {
		return nil, err
	}
	return r.response(res), nil
}

// matchCache looks key up in the colo's edge cache (the Cache API's default
// cache) through the request of ctx; it answers nil when the cache holds
// nothing under key. It goes through the request's exchange like an
// internal request, so it leaves no callback behind in Go.
func matchCache(ctx context.Context, key string) (*http.Response, error) {
	r := requestOf(ctx)
	if r == nil {
		return nil, errors.New("a cache lookup outside of a request")
	}
	res, err := r.ask("match", key)
	if err != nil {
		return nil, err
	}
	if res[0].Int() == 0 {
		return nil, nil
	}
	return r.response(res), nil
}

// putCache keeps body under key in the colo's edge cache, with header,
// through the request of ctx, as matchCache looks it up; it returns once
// the cache has it (or refused it).
func putCache(ctx context.Context, key string, header http.Header, body []byte) error {
	r := requestOf(ctx)
	if r == nil {
		return errors.New("a cache put outside of a request")
	}
	_, err := r.ask("put", key, formatHeader(header), len(body), bytesToJS(body))
	return err
}

// startCachePut starts an entry of length bytes under key, written through
// the request of ctx as it comes: JS holds the bytes (its memory is
// collected; Go's never shrinks), and puts them in the cache only at
// commit, once they are all there.
func startCachePut(ctx context.Context, key string, header http.Header, length int64) (*edgePut, error) {
	r := requestOf(ctx)
	if r == nil {
		return nil, errors.New("a cache put outside of a request")
	}
	res, err := r.ask("put", key, formatHeader(header), length, js.Null())
	if err != nil {
		return nil, err
	}
	return &edgePut{r: r, handle: res[0].Int()}, nil
}

// edgePut is an entry of the edge cache being written (startCachePut).
type edgePut struct {
	r      *request
	handle int
}

func (p *edgePut) Write(b []byte) (int, error) {
	if _, err := p.r.ask("putWrite", p.handle, bytesToJS(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// commit puts the entry in the cache and waits until the cache has it.
func (p *edgePut) commit() error {
	_, err := p.r.ask("putEnd", p.handle, true)
	return err
}

// abort drops the entry: nothing of it reaches the cache.
func (p *edgePut) abort() { p.r.ask("putEnd", p.handle, false) }

// response makes the answer JS settled a fetch or a cache lookup with: the
// status, the headers, the body's first bytes (all of it when short; null
// when there is none) and, when there is more, the handle of its reader.
func (r *request) response(res []js.Value) *http.Response {
	status := res[0].Int()
	h := parseHeader(res[1].String())
	out := &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          http.NoBody,
		ContentLength: -1,
	}
	if n, err := strconv.ParseInt(h.Get("Content-Length"), 10, 64); err == nil && n >= 0 {
		out.ContentLength = n
	}
	first := bytesFromJS(res[2])
	if res[3].Type() == js.TypeNumber {
		out.Body = &bodyReader{r: r, buf: first, handle: res[3].Int()}
	} else if first != nil {
		out.Body = io.NopCloser(bytes.NewReader(first))
	} else {
		out.ContentLength = 0
	}
	return out
}

// bodyReader reads the rest of a response body from its reader in JS.
type bodyReader struct {
	r      *request
	buf    []byte
	handle int
	done   bool
	err    error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	for len(b.buf) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		res, err := b.r.ask("read", b.handle)
		if err != nil {
			b.err, b.done = err, true
			continue
		}
		if res[0].IsNull() {
			b.err, b.done = io.EOF, true
			continue
		}
		b.buf = bytesFromJS(res[0])
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

func (b *bodyReader) Close() error {
	if !b.done {
		b.done = true
		b.err = errors.New("read of a closed body")
		b.r.post.Invoke("cancel", b.handle)
	}
	b.buf = nil
	return nil
}

func bytesFromJS(v js.Value) []byte {
	if v.IsNull() || v.IsUndefined() {
		return nil
	}
	b := make([]byte, v.Get("byteLength").Int())
	js.CopyBytesToGo(b, v)
	return b
}

func bytesToJS(b []byte) js.Value {
	v := uint8Array.New(len(b))
	js.CopyBytesToJS(v, b)
	return v
}

// parseHeader reads "name\nvalue\n" pairs, as front.js writes a Headers
// object (names in lower case, repeated values joined by ", ").
func parseHeader(s string) http.Header {
	h := http.Header{}
	for s != "" {
		name, rest, _ := strings.Cut(s, "\n")
		value, rest2, _ := strings.Cut(rest, "\n")
		h.Add(name, value)
		s = rest2
	}
	return h
}

func formatHeader(h http.Header) string {
	var b strings.Builder
	for name, values := range h {
		for _, v := range values {
			b.WriteString(name)
			b.WriteByte('\n')
			b.WriteString(v)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
