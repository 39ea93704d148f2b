package main

import (
	"net/http"
	"sort"
	"strings"
	"sync"
)

// Cross-origin requests (CORS): a page on another origin may call the read
// endpoints (a filter's statistics, check, snapshot, changes and checkpoints) when its
// origin is one the operator lists in EDGEBLOOM_ALLOWED_ORIGINS,
// comma-separated ("https://app.example, https://www.example"; "*" for
// every origin but "null"). None is listed by default. Writes, deletes
// and the making of filters and tokens stay same-origin: a page needs
// only a read token, and one that holds the secret should not be able to
// use it from a browser.
//
// The credential is the Authorization header, never a cookie, so no
// Access-Control-Allow-Credentials is sent.

// corsMaxAge is how long a browser may keep a preflight's answer, in
// seconds: Chromium caps it at 7200.
const corsMaxAge = "7200"

// corsMethods returns the methods a page on an allowed origin may use on
// path, or "" for an endpoint that is not a read endpoint.
func corsMethods(path string) string {
	if _, _, ok := checkpointPath(path); ok {
		return "GET"
	}
	_, action, ok := splitPath(path)
	if !ok {
		return ""
	}
	switch action {
	case "", "snapshot", "changes":
		return "GET"
	case "check":
		return "POST"
	}
	return ""
}

// allowedOrigins caches the parsed EDGEBLOOM_ALLOWED_ORIGINS.
var allowedOrigins struct {
	sync.Mutex
	raw  string
	list []string
}

func parseOrigins(raw string) []string {
	allowedOrigins.Lock()
	defer allowedOrigins.Unlock()
	if allowedOrigins.list == nil || allowedOrigins.raw != raw {
		list := []string{}
		for _, o := range strings.Split(raw, ",") {
			// An origin has no path: "https://app.example/" is written
			// for "https://app.example" often enough to take it.
			if o = strings.TrimSuffix(strings.TrimSpace(o), "/"); o != "" {
				list = append(list, o)
			}
		}
		allowedOrigins.raw, allowedOrigins.list = raw, list
	}
	return allowedOrigins.list
}

// originAllowed reports whether origin is one of the operator's. Schemes
// and hosts are case-insensitive; a browser sends them in lower case.
func (s *Server) originAllowed(origin string) bool {
	if origin == "" || s.AllowedOrigins == nil {
		return false
	}
	for _, o := range parseOrigins(s.AllowedOrigins()) {
		if o == "*" && origin != "null" || strings.EqualFold(o, origin) {
			return true
		}
	}
	return false
}

// cors adds the CORS headers of r's answer to w, and answers r itself when
// it is a preflight (OPTIONS with Access-Control-Request-Method): that needs
// no credential and reaches no Durable Object. It returns the writer the
// answer is written through (which lists the answer's X-Edgebloom-* headers
// in Access-Control-Expose-Headers) and whether r has been answered.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, bool) {
	methods := corsMethods(r.URL.Path)
	origin := r.Header.Get("Origin")
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	// Only the read method's answers (and its preflight's) carry CORS
	// headers: a PUT or DELETE on a filter's path is a write, and a page
	// may not read its answer.
	read := preflight || r.Method == methods
	if methods != "" && read {
		// The answer differs by Origin: a cache must not give one origin's
		// answer to another.
		w.Header().Add("Vary", "Origin")
	}
	allowed := methods != "" && read && s.originAllowed(origin)
	if preflight {
		if want := r.Header.Get("Access-Control-Request-Method"); !allowed || want != methods {
			what := "this endpoint"
			if methods != "" {
				what = methods + " on this endpoint"
			}
			writeError(w, "", errorf(http.StatusForbidden, "cors_not_allowed",
				"%s %s from origin %q is not allowed: pages on the origins in EDGEBLOOM_ALLOWED_ORIGINS may call the read endpoints (%s)",
				want, r.URL.Path, origin, what))
			return w, true
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Methods", methods)
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
		return w, true
	}
	if !allowed {
		return w, false
	}
	w.Header().Set("Access-Control-Allow-Origin", origin)
	return &exposeWriter{ResponseWriter: w}, false
}

// exposeWriter lists the answer's own headers that a page needs
// (X-Edgebloom-Format, -Cursor, -Resync, ...; Content-Disposition; the
// Retry-After of a busy answer, which a page's retry waits) in
// Access-Control-Expose-Headers as the status is written, so that every
// X-Edgebloom-* header an endpoint sends is readable, and no other.
type exposeWriter struct {
	http.ResponseWriter
	wrote bool
}

func (e *exposeWriter) WriteHeader(status int) {
	if !e.wrote {
		e.wrote = true
		h := e.Header()
		var names []string
		for name := range h {
			if strings.HasPrefix(name, "X-Edgebloom-") || name == "Content-Disposition" || name == "Retry-After" {
				names = append(names, name)
			}
		}
		if len(names) > 0 {
			sort.Strings(names)
			h.Set("Access-Control-Expose-Headers", strings.Join(names, ", "))
		}
	}
	e.ResponseWriter.WriteHeader(status)
}

func (e *exposeWriter) Write(b []byte) (int, error) {
	if !e.wrote {
		e.WriteHeader(http.StatusOK)
	}
	return e.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the writer underneath.
func (e *exposeWriter) Unwrap() http.ResponseWriter { return e.ResponseWriter }
