package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"slices"
	"testing"
	"unicode/utf8"
)

// decodeBoth decodes b as the handler does (parseKeys first, else
// decodeJSON) and as the reference does: encoding/json, with the names
// rule of referenceNames.
func decodeBoth(b []byte) (fast, plain *[]string, fastErr, plainErr error) {
	var v struct {
		Keys *[]string `json:"keys"`
	}
	if keys, ok := parseKeys(b); ok {
		fast = &keys
	} else {
		fastErr = decodeJSON(b, &v, keysShape)
		fast = v.Keys
	}
	v.Keys = nil
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	plainErr = dec.Decode(&v)
	if _, more := dec.Token(); plainErr == nil && more != io.EOF {
		plainErr = errors.New("data after the object")
	}
	if plainErr == nil {
		plainErr = referenceNames(b, "keys")
	}
	return fast, v.Keys, fastErr, plainErr
}

// referenceNames is the rule checkNames keeps, written another way for
// the fuzzer to hold one against the other: in an object that
// encoding/json decodes, no name of the outer object appears twice, and
// every name is one of fields exactly (encoding/json matches names
// without case).
func referenceNames(b []byte, fields ...string) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	depth, key := 0, true
	seen := map[string]bool{}
	for {
		t, err := dec.Token()
		if err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
			continue
		case json.Delim('}'), json.Delim(']'):
			if depth--; depth == 1 {
				key = true // a nested value ended
			}
			continue
		}
		// At depth 1 of an object, tokens alternate name, value (a nested
		// value is skipped by depth).
		if depth != 1 {
			continue
		}
		if key {
			name := t.(string)
			if seen[name] || !slices.Contains(fields, name) {
				return fmt.Errorf("name %q repeated or not exactly a field", name)
			}
			seen[name] = true
		}
		key = !key
	}
}

var keysBodies = []string{
	`{"keys":["a","b"]}`,
	` { "keys" : [ "a" , "b" ] } `,
	"{\n\t\"keys\": [\r\n\"https://x.example/\"]\n}",
	`{"keys":[]}`,
	`{"keys":[ ]}`,
	`{"keys":["é","😀","\u00e9","a\"b","a\\b","\n"]}`,
	`{"keys":["a"],"keys":["b"]}`,
	`{"keys":["a"],"keys":["a"]}`,
	`{"keys":["a"],"KEYS":["b"]}`,
	`{"KEYS":["a"]}`,
	`{"Keys":["a"]}`,
	`{"\u006beys":["a"]}`,
	`{"ke\u0079s":["a"],"keys":["b"]}`,
	`{"keys":[{"a":1,"a":2}]}`,
	`{"keys":["a"],"other":1}`,
	`{"keys":null}`,
	`{"keys":[1]}`,
	`{"keys":["a",]}`,
	`{"keys":["a" "b"]}`,
	`{"keys":"a"}`,
	`{"keys":[["a"]]}`,
	`{}`,
	`{"keys":["a"]`,
	"{\"keys\":[\"a\x01\"]}",
	`{"keys":["a"]} {}`,
	`{"keys":["` + "\u2028" + `"]}`,
}

func TestKeysRequestDecodesAsEncodingJSON(t *testing.T) {
	for _, body := range keysBodies {
		fast, plain, fastErr, plainErr := decodeBoth([]byte(body))
		if (fastErr == nil) != (plainErr == nil) {
			t.Errorf("%q: error %v, encoding/json %v", body, fastErr, plainErr)
		}
		// On an error the handler answers 400 and reads no key.
		if plainErr == nil && !reflect.DeepEqual(fast, plain) {
			t.Errorf("%q: keys %v, encoding/json %v", body, deref(fast), deref(plain))
		}
	}
}

func FuzzKeysRequest(f *testing.F) {
	for _, body := range keysBodies {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		b = validUTF8(b) // as readJSON makes every body
		fast, plain, fastErr, plainErr := decodeBoth(b)
		if (fastErr == nil) != (plainErr == nil) {
			t.Fatalf("%q: error %v, encoding/json %v", b, fastErr, plainErr)
		}
		if plainErr == nil && !reflect.DeepEqual(fast, plain) {
			t.Fatalf("%q: keys %v, encoding/json %v", b, deref(fast), deref(plain))
		}
	})
}

func deref(p *[]string) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestKeysJSONRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []rune{'a', 'Z', '0', '"', '\\', '/', '\n', '\r', '\t', 0, 1, 0x1f, 0x7f, 'é', '\u2028', '\u2029', '<', '&', '😀', utf8.RuneError}
	for n := 0; n < 2000; n++ {
		keys := make([]string, rng.Intn(5))
		for i := range keys {
			r := make([]rune, rng.Intn(8))
			for j := range r {
				r[j] = alphabet[rng.Intn(len(alphabet))]
			}
			keys[i] = string(r)
		}
		b := appendKeysJSON(nil, keys)
		var got struct{ Keys []string }
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		if len(keys) == 0 {
			keys = []string{}
		}
		if !reflect.DeepEqual(got.Keys, keys) {
			t.Fatalf("%q decodes to %q, want %q", b, got.Keys, keys)
		}
		// What the front writes, it reads by hand unless a key needs an
		// escape.
		if parsed, ok := parseKeys(b); ok && !reflect.DeepEqual(parsed, keys) {
			t.Fatalf("%q: parseKeys gives %q, want %q", b, parsed, keys)
		}
	}
}

func TestResultsJSON(t *testing.T) {
	for _, results := range [][]bool{{}, {true}, {false, true, true}} {
		b := appendResultsJSON(nil, "present", results)
		var v map[string][]bool
		if err := json.Unmarshal(b, &v); err != nil || !reflect.DeepEqual(v["present"], results) {
			t.Errorf("%s: %v, %v", b, v, err)
		}
		out := shardResults{field: "present"}
		if err := json.Unmarshal(b, &out); err != nil || !reflect.DeepEqual(out.got, results) {
			t.Errorf("%s: shardResults %v, %v", b, out.got, err)
		}
	}
	for _, tt := range []struct {
		body string
		want []bool
	}{
		{` {"added" : [ true , false ] } `, []bool{true, false}},
		{`{"added":[true],"other":[false]}`, []bool{true}},
		{`{"added":[true],"other":1}`, nil},
		{`{"other":[true]}`, nil},
		{`{"added":[true,1]}`, nil},
	} {
		out := shardResults{field: "added"}
		err := json.Unmarshal([]byte(tt.body), &out)
		var v map[string][]bool
		plainErr := json.Unmarshal([]byte(tt.body), &v)
		if (err == nil) != (plainErr == nil) || err == nil && (!reflect.DeepEqual(out.got, v["added"]) || !reflect.DeepEqual(out.got, tt.want)) {
			t.Errorf("%s: %v (%v), encoding/json %v (%v)", tt.body, out.got, err, v["added"], plainErr)
		}
	}
}

// TestResultsHex pins X-Edgebloom-Results (objects.go): one hex digit for
// every four answers, answer 4i+j in bit 1<<j of digit i, and nothing else
// read as answers.
func TestResultsHex(t *testing.T) {
	for _, tt := range []struct {
		hex     string
		answers []bool
	}{
		{"", []bool{}},
		{"1", []bool{true}},
		{"0", []bool{false}},
		{"6", []bool{false, true, true}},
		{"b1", []bool{true, true, false, true, true}},
		{"f8", []bool{true, true, true, true, false, false, false, true}},
	} {
		if got := string(appendResultsHex(nil, tt.answers)); got != tt.hex {
			t.Errorf("%v: %q; want %q", tt.answers, got, tt.hex)
		}
		if got, ok := parseResultsHex(tt.hex, len(tt.answers)); !ok || !reflect.DeepEqual(got, tt.answers) {
			t.Errorf("%q: %v, %v; want %v", tt.hex, got, ok, tt.answers)
		}
	}
	for _, tt := range []struct {
		hex string
		n   int
	}{
		{"", 1},     // too few digits
		{"10", 4},   // too many
		{"2", 1},    // a bit past the last answer
		{"8", 3},    // the same
		{"F", 4},    // upper case is not what shards write
		{"g", 4},    // no hex digit
		{"1 ", 5},   // a space
		{"ff0", 12}, // the right length passes
	} {
		_, ok := parseResultsHex(tt.hex, tt.n)
		if ok != (tt.hex == "ff0") {
			t.Errorf("%q for %d answers: ok %v", tt.hex, tt.n, ok)
		}
	}
}
