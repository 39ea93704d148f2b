//go:build js && wasm

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"sync"
	"syscall/js"
	"time"
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
// program makes exactly three callbacks, once, at start: serve, which JS
// calls with each request, settle, which JS calls when something Go asked
// of it is done, and cancel, which JS calls when a request's client goes
// away. syumai/workers still provides the rest (its glue,
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

// live holds the exchange of every request Go is serving, by the number
// serve gave it, so that JS can cancel one (cancel) and the test endpoint
// can count them.
var live struct {
	sync.Mutex
	next      int
	exchanges map[int]*exchange
}

// requestDeadline bounds how long a request may run in the front: its
// context ends then, and every wait for JS with it (ask), so that a JS side
// that never answers cannot keep a goroutine and its exchange for the
// instance's life. A checkpoint snapshot of the largest filter (64 shards
// of maxShardBits) streams 2 GiB: at 10 MB/s, under 4 minutes.
const requestDeadline = 5 * time.Minute

// startBridge sets serve, settle and cancel on the binding: they live as
// long as the program.
func startBridge(h http.Handler) {
	pending.waiting = map[int]chan []js.Value{}
	live.exchanges = map[int]*exchange{}
	binding.Set("maxRequestBytes", maxBodyBytes)
	binding.Set("settle", js.FuncOf(settle))
	binding.Set("serve", js.FuncOf(func(_ js.Value, args []js.Value) any {
		// serve(method, url, headers, body, post) → the exchange's number:
		// the body is a Uint8Array (at most maxRequestBytes+1 of it, which
		// is enough to refuse it) or null, the headers as formatHeader
		// writes them.
		x := newExchange(args[4])
		body := bytesFromJS(args[3])
		method, rawURL, header := args[0].String(), args[1].String(), args[2].String()
		go x.serve(h, method, rawURL, header, body)
		return x.number
	}))
	binding.Set("cancel", js.FuncOf(func(_ js.Value, args []js.Value) any {
		// cancel(number): the client of the exchange went away.
		live.Lock()
		x := live.exchanges[args[0].Int()]
		live.Unlock()
		if x != nil {
			x.cancel(errClientGone)
		}
		return nil
	}))
}

// settle(id, ok, values...) delivers the result of what Go asked, by id.
// A result nobody waits for any more (its request gave up) is dropped.
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

// An exchange is the Go half of one request's exchange with JS (the
// Exchange class of front.js): post is its JS function, ctx its context,
// which ends when the handler returns, when JS cancels it and at
// requestDeadline.
type exchange struct {
	post   js.Value
	number int
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func newExchange(post js.Value) *exchange {
	x := &exchange{post: post}
	ctx, stop := context.WithTimeout(context.Background(), requestDeadline)
	ctx, cancel := context.WithCancelCause(ctx)
	x.ctx, x.cancel = ctx, func(cause error) { cancel(cause); stop() }
	live.Lock()
	live.next++
	x.number = live.next
	live.exchanges[x.number] = x
	live.Unlock()
	return x
}

// end releases the exchange once its request is answered: what still
// waits with its context (a goroutine the handler started) stops waiting.
func (x *exchange) end() {
	live.Lock()
	delete(live.exchanges, x.number)
	live.Unlock()
	x.cancel(context.Canceled)
}

// bridgeCounts reports the exchanges in flight and the answers Go waits
// for from JS, for GET /_test/instance.
func bridgeCounts() (exchanges, asks int) {
	live.Lock()
	exchanges = len(live.exchanges)
	live.Unlock()
	pending.Lock()
	asks = len(pending.waiting)
	pending.Unlock()
	return exchanges, asks
}

// ask posts op with a new id and waits for JS to settle it; the values
// after ok come back, or the error JS reported. It gives up when ctx ends
// (the client left, the request's deadline; ctx is the exchange's own or
// one made from it), and then returns ctx's cause.
func (x *exchange) ask(ctx context.Context, op string, args ...any) ([]js.Value, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	ch := make(chan []js.Value, 1)
	pending.Lock()
	pending.next++
	id := pending.next
	pending.waiting[id] = ch
	pending.Unlock()
	x.post.Invoke(append([]any{op, id}, args...)...)
	var res []js.Value
	select {
	case res = <-ch:
	case <-ctx.Done():
		pending.Lock()
		delete(pending.waiting, id)
		pending.Unlock()
		// settle may have sent it meanwhile.
		select {
		case res = <-ch:
		default:
			return nil, context.Cause(ctx)
		}
	}
	if !res[0].Truthy() {
		return nil, errors.New(res[1].String())
	}
	return res[1:], nil
}

// pause waits d through a timer JS sets in the request's own turn
// (front.js, "sleep"), so that workerd sees the request wait for a timer
// of its own; no callback is made for it. It fails when ctx ends.
//
// A request waits only on its own I/O: Go's sleep sets one timer for the
// whole instance, in whichever request's turn it goes idle, and a
// goroutine woken by another request's goroutine (a channel, a lock) runs
// in that request's turn, where what it starts is that request's and ends
// with it: workerd then cancels the first request as hung.
func pause(ctx context.Context, d time.Duration) error {
	x := exchangeOf(ctx)
	if x == nil {
		return errors.New("a pause outside of a request")
	}
	_, err := x.ask(ctx, "sleep", d.Milliseconds())
	return err
}

type exchangeKey struct{}

func exchangeOf(ctx context.Context) *exchange {
	x, _ := ctx.Value(exchangeKey{}).(*exchange)
	return x
}

func (x *exchange) serve(h http.Handler, method, rawURL, header string, body []byte) {
	defer x.end()
	defer func() {
		// ServeHTTP recovers its own panics: this is for the bridge's.
		if v := recover(); v != nil {
			log.Printf("edgebloom: the bridge failed to serve a request: %v\n%s", v, debug.Stack())
			x.post.Invoke("error", "the bridge failed to serve the request")
		}
	}()
	u, err := url.Parse(rawURL)
	if err != nil {
		x.post.Invoke("error", err.Error())
		return
	}
	hdr, err := parseHeader(header)
	if err != nil {
		x.post.Invoke("error", err.Error())
		return
	}
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
	req = req.WithContext(context.WithValue(x.ctx, exchangeKey{}, x))
	w := &responseWriter{x: x, header: http.Header{}}
	h.ServeHTTP(w, req)
	w.finish()
}

// responseWriter holds the response until the handler returns, and then
// answers with its bytes; a body over inlineBytes is streamed instead.
type responseWriter struct {
	x         *exchange
	header    http.Header
	status    int
	buf       []byte
	streaming bool
	err       error // a streamed write that failed: the client went away
	passed    bool  // answered with a body JS holds (pass)
}

func (w *responseWriter) Header() http.Header { return w.header }

func (w *responseWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *responseWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.passed {
		return 0, errors.New("a write after the answer was sent")
	}
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
	w.x.post.Invoke("stream", w.status, formatHeader(w.header), w.declaredLength())
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
	if _, err := w.x.ask(w.x.ctx, "write", bytesToJS(p)); err != nil {
		w.err = err
		return err
	}
	return nil
}

// Flush sends nothing: the body goes out as the handler returns, or as it
// is written once it is streamed.
func (w *responseWriter) Flush() {}

// pass answers with the status and headers held and, for body, the
// response JS keeps under handle.
func (w *responseWriter) pass(handle int) {
	if w.streaming || w.passed {
		return
	}
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.passed = true
	w.x.post.Invoke("pass", w.status, formatHeader(w.header), handle)
}

func (w *responseWriter) finish() {
	if w.passed {
		return
	}
	if w.streaming {
		w.x.post.Invoke("close", w.err == nil)
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
				w.x.post.Invoke("close", false)
			}
			return
		}
		body = bytesToJS(w.buf)
	}
	w.x.post.Invoke("respond", w.status, formatHeader(w.header), body)
}

// fetchObject sends an internal request to the Durable Object named object
// of the namespace bound as ns, through the request of ctx.
func fetchObject(ctx context.Context, ns, object, method, url string, header http.Header, body []byte) (*http.Response, error) {
	x := exchangeOf(ctx)
	if x == nil {
		return nil, errors.New("an internal request outside of a request")
	}
	jsBody := js.Undefined()
	if body != nil {
		jsBody = bytesToJS(body)
	}
	// JS answers the status, the headers, the body's first bytes (all of
	// it when short; null when there is none) and, when there is more, the
	// handle of its reader.
	res, err := x.ask(ctx, "fetch", ns, object, method, url, formatHeader(header), jsBody)
	if err != nil {
		return nil, err
	}
	return x.response(res)
}

// matchCache looks key up in the colo's edge cache (the Cache API's default
// cache) through the request of ctx; it answers nil when the cache holds
// nothing under key. It goes through the request's exchange like an
// internal request, so it leaves no callback behind in Go.
func matchCache(ctx context.Context, key string) (*http.Response, error) {
	x := exchangeOf(ctx)
	if x == nil {
		return nil, errors.New("a cache lookup outside of a request")
	}
	res, err := x.ask(ctx, "match", key)
	if err != nil {
		return nil, err
	}
	if res[0].Int() == 0 {
		return nil, nil
	}
	return x.response(res)
}

// matchCachePass looks key up in the edge cache as matchCache does, but
// leaves the body in JS: it answers the status, the headers and the handle
// of the response JS keeps (0 when the cache holds nothing), for passBody.
func matchCachePass(ctx context.Context, key string) (int, http.Header, int, error) {
	x := exchangeOf(ctx)
	if x == nil {
		return 0, nil, 0, errors.New("a cache lookup outside of a request")
	}
	res, err := x.ask(ctx, "matchPass", key)
	if err != nil || res[0].Int() == 0 {
		return 0, nil, 0, err
	}
	h, err := parseHeader(res[1].String())
	if err != nil {
		return 0, nil, 0, err
	}
	return res[0].Int(), h, res[2].Int(), nil
}

// passBody answers the request of w with the status and headers w holds
// and, for body, the response JS keeps under handle (matchCachePass): its
// bytes never cross into Go. w is the bridge's writer, or one that wraps it
// (Unwrap); nothing written to w after it is sent.
func passBody(w http.ResponseWriter, handle int) {
	for {
		switch v := w.(type) {
		case *responseWriter:
			v.pass(handle)
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = v.Unwrap()
		default:
			panic("edgebloom: passBody on a writer that is not the bridge's")
		}
	}
}

// putCache keeps body under key in the colo's edge cache, with header,
// through the request of ctx, as matchCache looks it up; it returns once
// the cache has it (or refused it).
func putCache(ctx context.Context, key string, header http.Header, body []byte) error {
	x := exchangeOf(ctx)
	if x == nil {
		return errors.New("a cache put outside of a request")
	}
	_, err := x.ask(ctx, "put", key, formatHeader(header), len(body), bytesToJS(body))
	return err
}

// startCachePut starts an entry of length bytes under key, written through
// the request of ctx as it comes: JS holds the bytes (its memory is
// collected; Go's never shrinks), and puts them in the cache only at
// commit, once they are all there.
func startCachePut(ctx context.Context, key string, header http.Header, length int64) (*edgePut, error) {
	x := exchangeOf(ctx)
	if x == nil {
		return nil, errors.New("a cache put outside of a request")
	}
	res, err := x.ask(ctx, "put", key, formatHeader(header), length, js.Null())
	if err != nil {
		return nil, err
	}
	return &edgePut{x: x, ctx: ctx, handle: res[0].Int()}, nil
}

// edgePut is an entry of the edge cache being written (startCachePut).
type edgePut struct {
	x      *exchange
	ctx    context.Context
	handle int
}

func (p *edgePut) Write(b []byte) (int, error) {
	if _, err := p.x.ask(p.ctx, "putWrite", p.handle, bytesToJS(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// commit puts the entry in the cache and waits until the cache has it.
func (p *edgePut) commit() error {
	_, err := p.x.ask(p.ctx, "putEnd", p.handle, true)
	return err
}

// abort drops the entry: nothing of it reaches the cache (once the request
// has ended, JS has dropped it already).
func (p *edgePut) abort() { _, _ = p.x.ask(p.ctx, "putEnd", p.handle, false) }

// response makes the answer JS settled a fetch or a cache lookup with: the
// status, the headers, the body's first bytes (all of it when short; null
// when there is none) and, when there is more, the handle of its reader.
func (x *exchange) response(res []js.Value) (*http.Response, error) {
	status := res[0].Int()
	h, err := parseHeader(res[1].String())
	if err != nil {
		return nil, err
	}
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
		out.Body = &bodyReader{x: x, buf: first, handle: res[3].Int()}
	} else if first != nil {
		out.Body = io.NopCloser(bytes.NewReader(first))
	} else {
		out.ContentLength = 0
	}
	return out, nil
}

// bodyReader reads the rest of a response body from its reader in JS.
type bodyReader struct {
	x      *exchange
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
		res, err := b.x.ask(b.x.ctx, "read", b.handle)
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
		b.x.post.Invoke("cancel", b.handle)
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

// askNothing asks JS something it never answers (an op front.js does not
// know), for the test hook that shows a request give up on a JS side that
// never answers.
func askNothing(ctx context.Context) error {
	x := exchangeOf(ctx)
	if x == nil {
		return errors.New("a question outside of a request")
	}
	_, err := x.ask(ctx, "nothing")
	return err
}
