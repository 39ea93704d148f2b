// How header fields cross the bridge between Go and JS (bridge_js.go,
// front.js): one string of "name\nvalue\n" pairs. Nothing sent can
// misalign a name with a value: JS writes a Headers object, whose names
// are tokens and whose values hold no CR, LF or NUL (the Fetch standard
// refuses them), and Go writes only names that are tokens and values with
// CR, LF and NUL made spaces (as net/http does when it writes a response).
// A header's bytes cross as JS sees them, one character a byte (a
// Headers value is a ByteString): Go sends a byte over 0x7F as the
// character of that code, and reads such a character back as the byte.

package main

import (
	"errors"
	"net/http"
	"strings"
)

var breaks = strings.NewReplacer("\r", " ", "\n", " ", "\x00", " ")

// formatHeader writes h as "name\nvalue\n" pairs, leaving out the fields
// whose name is not a token.
func formatHeader(h http.Header) string {
	var b strings.Builder
	for name, values := range h {
		if !validHeaderName(name) {
			continue
		}
		for _, v := range values {
			if strings.ContainsAny(v, "\r\n\x00") {
				v = breaks.Replace(v)
			}
			b.WriteString(name)
			b.WriteByte('\n')
			b.WriteString(v)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// errHeaders is parseHeader's error: the string is not what formatHeaders
// (front.js) writes.
var errHeaders = errors.New("the bridge's headers are not name and value pairs")

// parseHeader reads "name\nvalue\n" pairs, as front.js writes a Headers
// object (names in lower case, repeated values joined by ", "). A name that
// is not a token, or a pair cut short, fails it whole.
func parseHeader(s string) (http.Header, error) {
	h := http.Header{}
	for s != "" {
		name, rest, ok1 := strings.Cut(s, "\n")
		value, rest, ok2 := strings.Cut(rest, "\n")
		if !ok1 || !ok2 || !validHeaderName(name) {
			return nil, errHeaders
		}
		h.Add(name, value)
		s = rest
	}
	return h, nil
}

// validHeaderName reports whether name is a token (RFC 9110, 5.1).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}
