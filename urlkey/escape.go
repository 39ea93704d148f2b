package urlkey

import (
	"sort"
	"strings"
)

const upperhex = "0123456789ABCDEF"

// class of each ASCII byte in the path and query.
const (
	encode     = iota // percent-encode: not allowed literally in a URL
	unreserved        // A-Z a-z 0-9 - . _ ~: literal, decoded when escaped
	reserved          // gen-delims and sub-delims: kept in the form given
)

var class = func() (t [256]uint8) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c], t[c+'a'-'A'] = unreserved, unreserved
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = unreserved
	}
	for _, c := range "-._~" {
		t[c] = unreserved
	}
	for _, c := range ":/?#[]@!$&'()*+,;=" {
		t[c] = reserved
	}
	return t
}()

// normalizeEscapes applies the package's percent-encoding rules to a path
// segment or a query. In the query, "'" is always encoded, as browsers
// encode it there.
func normalizeEscapes(s string, query bool) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		clean = class[s[i]] != encode && s[i] != '%' && !(query && s[i] == '\'')
	}
	if clean {
		return s
	}
	b := make([]byte, 0, len(s)+len(s)/2)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]):
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			if class[d] == unreserved {
				b = append(b, d)
			} else {
				b = append(b, '%', upperhex[d>>4], upperhex[d&15])
			}
			i += 2
		case class[c] == encode || query && c == '\'':
			b = append(b, '%', upperhex[c>>4], upperhex[c&15])
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// canonicalPath normalizes escapes, then resolves dot segments the way the
// WHATWG path state does (which for these paths is RFC 3986's
// remove_dot_segments).
func canonicalPath(p string) string {
	if p == "" || p == "/" {
		return "/"
	}
	segs := strings.Split(p[1:], "/")
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		seg = normalizeEscapes(seg, false)
		last := i == len(segs)-1
		switch seg {
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			fallthrough
		case ".":
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	return "/" + strings.Join(out, "/")
}

// canonicalQuery normalizes escapes, drops empty and (unless kept)
// tracking parameters, and sorts the rest stably by key.
func canonicalQuery(q string, opts Options) string {
	if q == "" {
		return ""
	}
	q = normalizeEscapes(q, true)
	params := strings.Split(q, "&")
	kept := params[:0]
	for _, p := range params {
		if p != "" && (opts.KeepTracking || !IsTracking(key(p))) {
			kept = append(kept, p)
		}
	}
	sort.SliceStable(kept, func(i, j int) bool { return key(kept[i]) < key(kept[j]) })
	return strings.Join(kept, "&")
}

func key(param string) string {
	k, _, _ := strings.Cut(param, "=")
	return k
}

// trackingParams are the query keys IsTracking reports, besides utm_*.
var trackingParams = map[string]bool{
	"gclid": true, "gclsrc": true, "gbraid": true, "wbraid": true, "dclid": true, // Google Ads
	"_ga": true, "_gl": true, // Google Analytics cross-domain linking
	"fbclid":  true,                 // Facebook
	"msclkid": true,                 // Microsoft Advertising
	"mc_cid":  true, "mc_eid": true, // Mailchimp
	"yclid":     true,                // Yandex
	"igshid":    true,                // Instagram
	"twclid":    true,                // X (Twitter)
	"ttclid":    true,                // TikTok
	"li_fat_id": true,                // LinkedIn
	"_hsenc":    true, "_hsmi": true, // HubSpot
	"mkt_tok": true, // Marketo
}

// IsTracking reports whether a query parameter's key, as Canonical writes
// it (percent-encoding normalized), names a tracking parameter, compared
// without regard to ASCII case: utm_* (Google Analytics campaigns), gclid,
// gclsrc, gbraid, wbraid, dclid, _ga, _gl, fbclid, msclkid, mc_cid, mc_eid,
// yclid, igshid, twclid, ttclid, li_fat_id, _hsenc, _hsmi and mkt_tok.
// Canonical drops them unless Options.KeepTracking is set.
func IsTracking(key string) bool {
	k := strings.ToLower(key)
	return strings.HasPrefix(k, "utm_") || trackingParams[k]
}
