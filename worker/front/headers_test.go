package main

import (
	"net/http"
	"reflect"
	"testing"
)

// What crosses the bridge keeps each value with its name: a value with a
// line break (a handler that copies one in unchecked) or a name that is
// not a token cannot add a field or shift the ones after it.
func TestHeaderBridge(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   http.Header
		want http.Header
	}{
		{"plain", http.Header{"Content-Type": {"application/json"}, "X-A": {"1", "2"}},
			http.Header{"Content-Type": {"application/json"}, "X-A": {"1", "2"}}},
		{"empty value", http.Header{"X-Empty": {""}, "X-B": {"b"}}, http.Header{"X-Empty": {""}, "X-B": {"b"}}},
		{"line break in a value", http.Header{"X-Echo": {"a\nX-Injected\nyes"}, "X-B": {"b"}},
			http.Header{"X-Echo": {"a X-Injected yes"}, "X-B": {"b"}}},
		{"CRLF and NUL in a value", http.Header{"X-Echo": {"a\r\nX-Injected: yes\x00"}},
			http.Header{"X-Echo": {"a  X-Injected: yes "}}},
		{"line break in a name", http.Header{"X-Bad\nX-Injected": {"yes"}, "X-B": {"b"}}, http.Header{"X-B": {"b"}}},
		{"name with a colon or a space", http.Header{"X-Bad: 1": {"yes"}, "": {"v"}, "X-B": {"b"}}, http.Header{"X-B": {"b"}}},
		{"UTF-8 and colons in a value", http.Header{"X-Echo": {"café a:b \t"}}, http.Header{"X-Echo": {"café a:b \t"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseHeader(formatHeader(tc.in))
			if err != nil {
				t.Fatalf("parseHeader(formatHeader(%q)): %v", tc.in, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("parseHeader(formatHeader(%q)) = %q; want %q", tc.in, got, tc.want)
			}
		})
	}
}

// A string that is not name and value pairs is refused whole, never read
// shifted.
func TestParseHeaderRefusesMisaligned(t *testing.T) {
	for _, s := range []string{"x-a\n1\nx-b\n", "x-a\n1", "x-a\n1\nbad name\n2\n", "\n1\n"} {
		if h, err := parseHeader(s); err == nil {
			t.Errorf("parseHeader(%q) = %q; want an error", s, h)
		}
	}
	if h, err := parseHeader(""); err != nil || len(h) != 0 {
		t.Errorf(`parseHeader("") = %q, %v; want no fields`, h, err)
	}
}
