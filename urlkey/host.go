package urlkey

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// canonicalHost implements the WHATWG host parser for special schemes, then
// urlkey's own check of the characters a host may hold.
func canonicalHost(h string) (string, error) {
	if h == "" {
		return "", errors.New("urlkey: no host")
	}
	if h[0] == '[' {
		if h[len(h)-1] != ']' {
			return "", errors.New("urlkey: IPv6 address without ']'")
		}
		a, ok := parseIPv6(h[1 : len(h)-1])
		if !ok {
			return "", errorf("invalid IPv6 address %s", clip(h))
		}
		return "[" + formatIPv6(a) + "]", nil
	}
	d, ok := percentDecode(h)
	if !ok {
		return "", errorf("invalid percent-encoding in host %q", clip(h))
	}
	if !utf8.ValidString(d) {
		return "", errorf("host %q is not UTF-8 once percent-decoded", clip(h))
	}
	if l, ok := badALabel(d); ok {
		return "", errorf("label %q is not a valid A-label", clip(l))
	}
	a, err := profile().ToASCII(d)
	if err != nil {
		return "", errorf("host %q: %v", clip(h), err)
	}
	if a == "" {
		return "", errorf("host %q is empty once mapped", clip(h))
	}
	if endsInNumber(a) {
		v, ok := parseIPv4(a)
		if !ok {
			return "", errorf("invalid IPv4 address %q", clip(a))
		}
		return formatIPv4(v), nil
	}
	// Browsers accept ASCII punctuation such as ! $ & * + { } in hosts;
	// no DNS name has it, so neither does a key.
	labels := strings.Split(strings.TrimSuffix(a, "."), ".")
	for _, l := range labels {
		if l == "" {
			return "", errorf("host %q has an empty label", clip(a))
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", errorf("character %q in host %q", c, clip(a))
			}
		}
	}
	return a, nil
}

// badALabel finds a label "xn--..." that x/net/idna and browsers read
// differently: one with non-ASCII characters (browsers refuse it, x/net
// decodes the rest), and one whose Punycode encodes no non-ASCII character,
// i.e. ends in "-" (UTS #46 refuses these since Unicode 15.1; x/net decodes
// "xn--ab-" to "ab", and browsers keep "xn--ab-"). (Labels spelled in
// full-width letters that map to such a label are not caught.)
func badALabel(host string) (string, bool) {
	labels := strings.FieldsFunc(host, func(r rune) bool {
		return r == '.' || r == '\u3002' || r == '\uff0e' || r == '\uff61'
	})
	for _, l := range labels {
		if len(l) >= 4 && strings.EqualFold(l[:4], "xn--") {
			if len(l) == 4 || l[len(l)-1] == '-' {
				return l, true
			}
			for _, r := range l {
				if r >= utf8.RuneSelf {
					return l, true
				}
			}
		}
	}
	return "", false
}

// percentDecode decodes %XX escapes. ok is false for a "%" that starts no
// escape: WHATWG's percent-decode keeps it, and its host parser then
// refuses it as a forbidden code point.
func percentDecode(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		if s[i] == '%' {
			return "", false
		}
		b = append(b, s[i])
	}
	return string(b), true
}

// endsInNumber is the WHATWG "ends in a number" checker.
func endsInNumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	// Otherwise only "0x" and hex digits parse as a number.
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4Number is the WHATWG IPv4 number parser. Values over 2^32 are
// reported as 2^32 + 1, which every caller refuses.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		var d uint64
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && (c|0x20) >= 'a' && (c|0x20) <= 'f':
			d = uint64(c|0x20-'a') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		if v <= 1<<32 {
			v = v*base + d
		}
		if v > 1<<32 {
			v = 1<<32 + 1
		}
	}
	return v, true
}

// parseIPv4 is the WHATWG IPv4 parser.
func parseIPv4(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return 0, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return 0, false
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return 0, false
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return 0, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return uint32(v), true
}

func formatIPv4(v uint32) string {
	b := make([]byte, 0, 15)
	for i := 3; i >= 0; i-- {
		b = strconv.AppendUint(b, uint64(v>>(8*i)&0xff), 10)
		if i > 0 {
			b = append(b, '.')
		}
	}
	return string(b)
}

// parseIPv6 is the WHATWG IPv6 parser.
func parseIPv6(s string) (a [8]uint16, ok bool) {
	p, piece, compress := 0, 0, -1
	at := func(i int) int { // the byte at i, or -1 past the end
		if i < len(s) {
			return int(s[i])
		}
		return -1
	}
	if at(0) == ':' {
		if at(1) != ':' {
			return a, false
		}
		p += 2
		piece++
		compress = piece
	}
	for at(p) != -1 {
		if piece == 8 {
			return a, false
		}
		if at(p) == ':' {
			if compress != -1 {
				return a, false
			}
			p++
			piece++
			compress = piece
			continue
		}
		value, length := 0, 0
		for length < 4 && at(p) != -1 && ishex(byte(at(p))) {
			value = value*16 + int(unhex(byte(at(p))))
			p++
			length++
		}
		if at(p) == '.' {
			if length == 0 {
				return a, false
			}
			p -= length
			if piece > 6 {
				return a, false
			}
			seen := 0
			for at(p) != -1 {
				v := -1
				if seen > 0 {
					if at(p) == '.' && seen < 4 {
						p++
					} else {
						return a, false
					}
				}
				if c := at(p); c < '0' || c > '9' {
					return a, false
				}
				for c := at(p); c >= '0' && c <= '9'; c = at(p) {
					n := c - '0'
					switch {
					case v == -1:
						v = n
					case v == 0:
						return a, false
					default:
						v = v*10 + n
					}
					if v > 255 {
						return a, false
					}
					p++
				}
				a[piece] = a[piece]<<8 | uint16(v)
				seen++
				if seen == 2 || seen == 4 {
					piece++
				}
			}
			if seen != 4 {
				return a, false
			}
			break
		} else if at(p) == ':' {
			p++
			if at(p) == -1 {
				return a, false
			}
		} else if at(p) != -1 {
			return a, false
		}
		a[piece] = uint16(value)
		piece++
	}
	if compress != -1 {
		swaps := piece - compress
		piece = 7
		for piece != 0 && swaps > 0 {
			a[piece], a[compress+swaps-1] = a[compress+swaps-1], a[piece]
			piece--
			swaps--
		}
	} else if piece != 8 {
		return a, false
	}
	return a, true
}

// formatIPv6 is the WHATWG IPv6 serializer: lower-case hex, the first
// longest run of two or more zero pieces compressed to "::".
func formatIPv6(a [8]uint16) string {
	compress, best := -1, 1
	for i := 0; i < 8; {
		j := i
		for j < 8 && a[j] == 0 {
			j++
		}
		if j-i > best {
			compress, best = i, j-i
		}
		i = j + 1
	}
	var b []byte
	for i := 0; i < 8; i++ {
		if i == compress {
			if i == 0 {
				b = append(b, ':')
			}
			b = append(b, ':')
			i += best - 1
			continue
		}
		b = strconv.AppendUint(b, uint64(a[i]), 16)
		if i != 7 {
			b = append(b, ':')
		}
	}
	return string(b)
}

func ishex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
