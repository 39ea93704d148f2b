// Package urlkey turns a URL into a canonical string for de-duplication:
// two spellings of one URL give the same key, so a crawler's Bloom filter
// counts them once.
//
//	key, err := urlkey.Canonical("HTTP://Bücher.Example:80/a/./b/../c?b=2&utm_source=x&a=1#top", urlkey.Options{})
//	// key == "http://xn--bcher-kva.example/a/c?a=1&b=2"
//
// The rules follow the WHATWG URL Standard (what browsers, Node and
// Cloudflare Workers parse), so that the npm module's canonicalURL, which
// is built on the WHATWG URL parser, gives the very same key: the two are
// checked against each other on the cases in testdata/cases.json and on
// generated URLs. Where the standard accepts input that no crawler should
// key on, both refuse it alike (see Errors). One known difference: IDN
// hosts that break the Bidi or ContextJ rules of UTS #46 (a right-to-left
// label mixed with digits or Latin letters, a stray joiner) are refused
// here, and some URL parsers accept them (Node 20's accepts "١.com").
//
// # Scheme
//
// Only http, https, ws and wss are accepted, in any case, and written in
// lower case. The scheme must be followed by "//" and a host:
//
//	HTTPS://example.com/     → https://example.com/
//	ftp://example.com/       → error
//	http:example.com         → error (browsers read it as http://example.com/)
//
// # Userinfo
//
// A user name and password are dropped: they do not name another resource,
// and credentials have no place in a key. The host starts after the last
// "@" of the authority, as in browsers:
//
//	http://user:pw@example.com/   → http://example.com/
//	http://a@b@example.com/       → http://example.com/
//
// # Host
//
// A host in brackets is an IPv6 address, written in lower case and
// compressed the way browsers write it (the first longest run of two or
// more zero groups becomes "::"; an embedded IPv4 part is written as two
// hex groups; zone identifiers are refused):
//
//	http://[2001:DB8:0:0:0:0:0:1]/   → http://[2001:db8::1]/
//	http://[::FFFF:1.2.3.4]/         → http://[::ffff:102:304]/
//
// Any other host is percent-decoded, then mapped to ASCII with IDNA (UTS
// #46) the way the WHATWG URL Standard does it: non-transitional
// processing (ß and ς are kept, not mapped to ss and σ), CheckBidi and
// CheckJoiners on, CheckHyphens off, UseSTD3ASCIIRules off and no DNS
// length limits. With golang.org/x/net/idna that is
//
//	idna.New(idna.MapForLookup(), idna.Transitional(false), idna.BidiRule(),
//		idna.StrictDomainName(false), idna.CheckHyphens(false), idna.CheckJoiners(true),
//		idna.VerifyDNSLength(false))
//
// (the package's Lookup profile is stricter: STD3 rules and hyphen checks
// would refuse hosts browsers open, such as "a_b.example"). Two kinds of
// A-label that x/net/idna and browsers read differently are refused: one
// with non-ASCII characters, and one whose Punycode encodes no non-ASCII
// character ("xn--ab-"). Mapping lower-cases and folds compatibility forms
// (full-width letters, U+3002 "。" as a dot):
//
//	http://EXAMPLE.com/           → http://example.com/
//	http://例子.测试/              → http://xn--fsqu00a.xn--0zwm56d/
//	http://faß.de/                → http://xn--fa-hia.de/
//	http://ex%61mple.com/         → http://example.com/
//
// A host whose last label is a number is an IPv4 address, parsed as
// browsers parse it (decimal, 0x hex or 0 octal parts, and fewer than four
// parts) and written as four decimal parts:
//
//	http://0x7f.1/       → http://127.0.0.1/
//	http://2130706433/   → http://127.0.0.1/
//	http://1.2.3.256/    → error
//
// After mapping, a host (other than an IP address) may hold only a-z,
// 0-9, "-", "_" and ".", with no empty label except one trailing dot,
// which is kept ("example.com." and "example.com" stay different keys,
// as they are different origins to a browser). Browsers accept more ASCII
// punctuation ("a!b", "a{b}"), which no DNS name has: urlkey refuses it.
//
// # Port
//
// The scheme's default port is removed (80 for http and ws, 443 for https
// and wss); other ports are written in decimal without leading zeros:
//
//	http://example.com:80/      → http://example.com/
//	https://example.com:0443/   → https://example.com/
//	http://example.com:8080/    → http://example.com:8080/
//	http://example.com:/        → http://example.com/
//	http://example.com:65536/   → error
//
// # Path
//
// An empty path becomes "/". Percent-encoding is normalized (below), then
// dot segments are resolved ("." and "..", also spelled %2e), as RFC 3986
// section 6.2.2 orders it; ".." never climbs above the root. Empty segments
// are kept, since servers may tell "/a//b" from "/a/b". No Unicode
// normalization (NFC) is applied:
//
//	http://example.com            → http://example.com/
//	http://example.com/a/./b/../c → http://example.com/a/c
//	http://example.com/a/%2E%2E/b → http://example.com/b
//	http://example.com/../a       → http://example.com/a
//	http://example.com/a/b/..     → http://example.com/a/
//	http://example.com/中文/页面   → http://example.com/%E4%B8%AD%E6%96%87/%E9%A1%B5%E9%9D%A2
//
// # Percent-encoding
//
// In the path and the query, byte by byte of the UTF-8:
//
//   - unreserved characters (A-Z a-z 0-9 - . _ ~) are written as they are,
//     and decoded when percent-encoded: %7E → ~, %41 → A;
//   - reserved characters (: / ? # [ ] @ ! $ & ' ( ) * + , ; =) keep their
//     form, literal or encoded, since the two may mean different things
//     (%2F is not a path separator); the one exception is "'" in the
//     query, always written %27, since browsers encode it there;
//   - every other byte (space, " < > \ ^ ` { | } %, and each byte of a
//     non-ASCII character) is percent-encoded, with upper-case hex: a "%"
//     that does not start a valid escape becomes %25, %3c becomes %3C.
//
// "+" is kept as it is: it means a space only to some form decoders.
//
// # Query
//
// The query is split at "&"; empty parameters are dropped, and so is a
// query left empty ("?" alone). Parameters are sorted by key (the text
// before the first "="), byte by byte after normalization; parameters with
// equal keys keep their order, since "?a=1&a=2" and "?a=2&a=1" may differ.
// "a" and "a=" stay different. Tracking parameters are dropped unless
// Options.KeepTracking is set (see IsTracking):
//
//	http://example.com/?b=2&a=1&a=0          → http://example.com/?a=1&a=0&b=2
//	http://example.com/?utm_source=x&id=7    → http://example.com/?id=7
//	http://example.com/?&&                   → http://example.com/
//
// # Fragment
//
// The fragment is dropped: it never reaches the server.
//
//	http://example.com/a#section-2 → http://example.com/a
//
// # Errors
//
// Canonical never panics; every error's message starts with "urlkey: ".
// Leading and trailing spaces and C0 control characters are trimmed, as
// browsers trim them. Besides input that browsers refuse too (no scheme,
// a bad port, IPv4 or IPv6 address, a host that IDNA refuses or that is
// empty), urlkey refuses what browsers repair silently:
//
//   - control characters (U+0000-U+001F, U+007F) inside the URL, tab and
//     newline included (browsers delete those);
//   - invalid UTF-8;
//   - a scheme not followed by "//", or followed by more slashes;
//   - a backslash before the query (browsers read it as "/");
//   - host characters outside a-z 0-9 - _ . after mapping, and empty labels.
package urlkey

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Options changes what Canonical keeps. The zero value gives the defaults.
type Options struct {
	// KeepTracking keeps the query parameters that IsTracking reports,
	// which Canonical drops by default.
	KeepTracking bool
}

// profile maps hosts as the WHATWG URL Standard's "domain to ASCII" does
// (UTS #46 with CheckHyphens=false, CheckBidi=true, CheckJoiners=true,
// UseSTD3ASCIIRules=false, Transitional_Processing=false,
// VerifyDnsLength=false). Later options override what MapForLookup sets.
// It is made on first use, not at start: the edge service's Go front
// starts afresh for every request and most requests never map a host.
var profile = sync.OnceValue(func() *idna.Profile {
	return idna.New(
		idna.MapForLookup(),
		idna.Transitional(false),
		idna.BidiRule(),
		idna.StrictDomainName(false),
		idna.CheckHyphens(false),
		idna.CheckJoiners(true),
		idna.VerifyDNSLength(false),
	)
})

// defaultPorts are the ports Canonical removes.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443"}

func errorf(format string, args ...any) error {
	return fmt.Errorf("urlkey: "+format, args...)
}

// Canonical returns the canonical form of the absolute http, https, ws or
// wss URL raw, following the rules of the package documentation, or an
// error for input it cannot canonicalize. The result is a valid URL, and
// Canonical of the result is the result again.
func Canonical(raw string, opts Options) (string, error) {
	s := strings.TrimFunc(raw, func(r rune) bool { return r <= ' ' })
	if !utf8.ValidString(s) {
		return "", errors.New("urlkey: invalid UTF-8")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return "", errorf("control character %q at byte %d", s[i], i)
		}
	}

	colon := strings.IndexByte(s, ':')
	if colon < 0 {
		return "", errorf("no scheme in %q", clip(s))
	}
	scheme := strings.ToLower(s[:colon])
	defaultPort, ok := defaultPorts[scheme]
	if !ok {
		return "", errorf("scheme %q is not http, https, ws or wss", clip(s[:colon]))
	}
	rest := s[colon+1:]
	if !strings.HasPrefix(rest, "//") || len(rest) > 2 && (rest[2] == '/' || rest[2] == '\\') {
		return "", errorf("want %s:// and a host", scheme)
	}
	rest = rest[2:]
	beforeQuery := rest
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		beforeQuery = rest[:i]
	}
	if strings.Contains(beforeQuery, `\`) {
		return "", errors.New(`urlkey: backslash before the query`)
	}

	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, rest := rest[:end], rest[end:]
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}
	host, port, err := splitHostPort(authority)
	if err != nil {
		return "", err
	}
	if host, err = canonicalHost(host); err != nil {
		return "", err
	}
	if port, err = canonicalPort(port); err != nil {
		return "", err
	}
	if port == defaultPort {
		port = ""
	}

	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	path, query, _ := strings.Cut(rest, "?")

	var b strings.Builder
	b.Grow(len(scheme) + 3 + len(host) + 6 + len(path) + len(query) + 1)
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	b.WriteString(canonicalPath(path))
	if q := canonicalQuery(query, opts); q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	return b.String(), nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// splitHostPort splits an authority without userinfo at the first colon
// outside brackets, as the WHATWG host state does.
func splitHostPort(a string) (host, port string, err error) {
	if strings.HasPrefix(a, "[") {
		i := strings.IndexByte(a, ']')
		if i < 0 {
			return "", "", errors.New("urlkey: IPv6 address without ']'")
		}
		host, rest := a[:i+1], a[i+1:]
		if rest == "" {
			return host, "", nil
		}
		if rest[0] != ':' {
			return "", "", errorf("unexpected %q after the IPv6 address", clip(rest))
		}
		return host, rest[1:], nil
	}
	host, port, _ = strings.Cut(a, ":")
	return host, port, nil
}

func canonicalPort(p string) (string, error) {
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return "", errorf("port %q is not a number", clip(p))
		}
	}
	if p == "" {
		return "", nil // "http://h:/" has no port
	}
	if p = strings.TrimLeft(p, "0"); p == "" {
		return "0", nil
	}
	if len(p) > 5 {
		return "", errorf("port %s is over 65535", clip(p))
	}
	if n, _ := strconv.Atoi(p); n > 65535 {
		return "", errorf("port %s is over 65535", p)
	}
	return p, nil
}
