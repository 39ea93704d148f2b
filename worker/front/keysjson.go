package main

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The JSON of the key path (a check or an add: the client's keys, the
// shard's request and answer, the reply), read and written by hand:
// encoding/json's reflection is most of what the Go front spends on a check
// of 100 keys in wasm. Each reader takes only the plain form the JSON
// writers here and in JS produce and answers ok=false for anything else, so
// that the caller decodes that with encoding/json, errors and all.
// (encoding/json scans a value whole before it decodes it, which alone
// costs more than parseKeys.)

// parseKeys reads {"keys": ["...", ...]} whose strings have no escapes and
// no control characters, in a body that is valid UTF-8 (readBody made it
// so): then each key is the bytes between its quotes, as encoding/json
// would decode them.
func parseKeys(b []byte) ([]string, bool) {
	keys := []string{}
	ok := parseArrayField(b, "keys", func(i int) (int, bool) {
		k, j, ok := plainString(b, i)
		keys = append(keys, k)
		return j, ok
	})
	if !ok {
		return nil, false
	}
	return keys, true
}

// parseResults reads {"<field>": [true, false, ...]}, a shard's answer.
func parseResults(b []byte, field string) ([]bool, bool) {
	results := []bool{}
	ok := parseArrayField(b, field, func(i int) (int, bool) {
		switch {
		case hasPrefix(b, i, "true"):
			results = append(results, true)
			return i + 4, true
		case hasPrefix(b, i, "false"):
			results = append(results, false)
			return i + 5, true
		}
		return i, false
	})
	if !ok {
		return nil, false
	}
	return results, true
}

// parseArrayField reads b as {"<field>": [e, ...]} and nothing more, each
// element e read by elem from the index it starts at.
func parseArrayField(b []byte, field string, elem func(i int) (int, bool)) bool {
	i, ok := expect(b, skipSpace(b, 0), '{')
	if !ok {
		return false
	}
	name, i, ok := plainString(b, skipSpace(b, i))
	if !ok || name != field {
		return false
	}
	if i, ok = expect(b, skipSpace(b, i), ':'); !ok {
		return false
	}
	if i, ok = expect(b, skipSpace(b, i), '['); !ok {
		return false
	}
	if i = skipSpace(b, i); i < len(b) && b[i] == ']' {
		i++
	} else {
		for {
			if i, ok = elem(i); !ok {
				return false
			}
			if i = skipSpace(b, i); i < len(b) && b[i] == ']' {
				i++
				break
			}
			if i, ok = expect(b, i, ','); !ok {
				return false
			}
			i = skipSpace(b, i)
		}
	}
	if i, ok = expect(b, skipSpace(b, i), '}'); !ok {
		return false
	}
	return skipSpace(b, i) == len(b)
}

// appendKeysJSON appends {"keys":[...]} for the valid UTF-8 keys.
func appendKeysJSON(b []byte, keys []string) []byte {
	b = append(b, `{"keys":[`...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
	}
	return append(b, "]}"...)
}

// appendResultsJSON appends {"<field>":[true,false,...]}.
func appendResultsJSON(b []byte, field string, results []bool) []byte {
	b = append(b, '{')
	b = appendString(b, field)
	b = append(b, ":["...)
	for i, r := range results {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendBool(b, r)
	}
	return append(b, "]}"...)
}

// appendString appends s as a JSON string; s is valid UTF-8.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainString reads a JSON string at b[i] that has no escape and no
// control character, and returns it and the index after it.
func plainString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s := string(b[i+1 : j])
			return s, j + 1, utf8.ValidString(s)
		case c == '\\' || c < 0x20:
			return "", i, false
		}
	}
	return "", i, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func expect(b []byte, i int, c byte) (int, bool) {
	if i < len(b) && b[i] == c {
		return i + 1, true
	}
	return i, false
}

func hasPrefix(b []byte, i int, p string) bool {
	return len(b)-i >= len(p) && string(b[i:i+len(p)]) == p
}

// shardResults is a shard's answer to a check or an add: the results
// under field ("present" or "added").
type shardResults struct {
	field string
	got   []bool
}

func (r *shardResults) UnmarshalJSON(b []byte) error {
	if got, ok := parseResults(b, r.field); ok {
		r.got = got
		return nil
	}
	var v map[string][]bool
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	r.got = v[r.field]
	return nil
}
