// Reading a request's body: at most maxBodyBytes, decoded strictly into the
// one JSON object shape an endpoint takes. encoding/json's errors name Go
// types and offsets; a client needs to hear which field holds what and
// what the shape is, so every decoding error is turned into a 400 that
// speaks of JSON and names the shape.

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The bodies the API takes, as its errors name them.
const (
	createShape = `{"capacity": integer, "errorRate": number, "shards": integer, "canonicalize": boolean}`
	keysShape   = `{"keys": [string, ...]}`
)

// readJSON reads a body of at most maxBodyBytes and decodes it strictly
// into v, a pointer to a struct: the body must be the JSON object shape
// describes. Its bytes are made valid UTF-8 first (validUTF8), so every key
// is hashed as the text a JS runtime decodes from the same bytes.
func readJSON(r *http.Request, v any, shape string) error {
	body, err := readBody(r, shape)
	if err != nil {
		return err
	}
	return decodeJSON(body, v, shape)
}

// readBody reads the body of a request that must be the JSON object shape
// describes, as valid UTF-8, and checks that it starts as an object does.
// A Content-Length that gives no length is refused before anything is read
// (checkLength), and so is a body longer than maxBodyBytes.
func readBody(r *http.Request, shape string) ([]byte, error) {
	body, err := readRaw(r, "invalid_json")
	if err != nil {
		return nil, err
	}
	body = validUTF8(body)
	// null decodes into a struct without an error, and an array or a
	// string fails with a message naming Go types: check the shape first.
	if first := bytes.TrimLeft(body, " \t\r\n"); len(first) == 0 || first[0] != '{' {
		return nil, errorf(http.StatusBadRequest, "invalid_json", "the body must be a JSON object %s; got %s", shape, jsonKind(first))
	}
	return body, nil
}

// readRaw reads a body of at most maxBodyBytes as it is; a body that
// cannot be read is a 400 of code.
func readRaw(r *http.Request, code string) ([]byte, error) {
	if err := checkLength(r); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, errorf(http.StatusRequestEntityTooLarge, "body_too_large", "the body is over the limit of %d bytes", maxBodyBytes)
	} else if err != nil {
		return nil, internalError(http.StatusBadRequest, code, "the body could not be read", err)
	}
	return body, nil
}

// checkLength refuses a request body by its Content-Length: empty (411),
// anything but one decimal number, a negative one included (400), or over
// maxBodyBytes (413). A request without Content-Length is read up to
// maxBodyBytes and refused past it. Under workerd, front.js does not read a
// body this refuses, and reads at most one byte past maxBodyBytes of one
// without Content-Length (the rest is cancelled); net/http's server
// refuses a malformed Content-Length itself.
func checkLength(r *http.Request) error {
	values := r.Header.Values("Content-Length")
	tooLarge := func(length string) error {
		return errorf(http.StatusRequestEntityTooLarge, "body_too_large", "the body is %s bytes; the limit is %d", length, maxBodyBytes)
	}
	if len(values) == 0 {
		if r.ContentLength > maxBodyBytes {
			return tooLarge(strconv.FormatInt(r.ContentLength, 10))
		}
		return nil
	}
	v := values[0]
	switch {
	case len(values) == 1 && strings.TrimSpace(v) == "":
		return errorf(http.StatusLengthRequired, "length_required", "the Content-Length header is empty; send the body's length in bytes (at most %d)", maxBodyBytes)
	case len(values) > 1 || !decimal(v):
		return errorf(http.StatusBadRequest, "invalid_length", "the Content-Length header %q is not the body's length in bytes (one decimal number, at most %d)", strings.Join(values, ", "), maxBodyBytes)
	}
	// Digits alone: an error is a number past int64's range.
	if n, err := strconv.ParseInt(v, 10, 64); err != nil || n > maxBodyBytes {
		return tooLarge(v)
	}
	return nil
}

// decimal reports whether s is one or more decimal digits.
func decimal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// decodeJSON decodes body strictly into v (see readJSON): besides what
// encoding/json refuses, a name that appears twice (encoding/json would
// take the last) and a name that is a field's only when case is ignored
// (encoding/json would take it) are refused (checkNames).
func decodeJSON(body []byte, v any, shape string) error {
	if err := checkNames(body, v, shape); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, shape)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errorf(http.StatusBadRequest, "invalid_json", "data after the JSON object; the body must be %s", shape)
	}
	return nil
}

// checkNames refuses a body whose object names a member twice, or names a
// field of v (a pointer to a struct) in another case: each body has one
// reading, the one a JSON parser that keeps the first of duplicate names,
// or matches names exactly, would give too. A body that is not an object
// of valid JSON passes, for decodeJSON to refuse with encoding/json's
// error. Only the object's own names are read; its values are skipped
// (a value that is an object is refused anyway: no field takes one).
func checkNames(body []byte, v any, shape string) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	fields := jsonFields(reflect.TypeOf(v).Elem())
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		if err != nil || !ok {
			return nil
		}
		if seen[name] {
			return errorf(http.StatusBadRequest, "invalid_json", "%q appears more than once; the body must be %s", name, shape)
		}
		seen[name] = true
		if !slices.Contains(fields, name) {
			for _, f := range fields {
				if strings.EqualFold(f, name) {
					return errorf(http.StatusBadRequest, "invalid_json", "unknown field %q (names are case-sensitive: %q); the body must be %s", name, f, shape)
				}
			}
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return nil
}

// jsonFields lists the JSON names of struct type t's fields.
func jsonFields(t reflect.Type) []string {
	names := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// jsonKind names the JSON value that b starts with.
func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "an empty body"
	}
	switch c := b[0]; {
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	return "no JSON value"
}

// jsonError turns an error of encoding/json into a 400 that speaks of JSON
// and the expected shape, never of Go types.
func jsonError(err error, shape string) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return errorf(http.StatusBadRequest, "invalid_json", "the body is not valid JSON: %s (at byte %d); the body must be %s", syntax.Error(), syntax.Offset, shape)
	case errors.As(err, &typ):
		field := "the body"
		if typ.Field != "" {
			field = strconv.Quote(typ.Field)
		}
		return errorf(http.StatusBadRequest, "invalid_json", "%s holds %s where %s belongs; the body must be %s",
			field, article(typ.Value), jsonTypeOf(typ.Type), shape)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, "invalid_json", "the body ends inside its JSON value; the body must be %s", shape)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return errorf(http.StatusBadRequest, "invalid_json", "%s; the body must be %s", strings.TrimPrefix(err.Error(), "json: "), shape)
	}
	return internalError(http.StatusBadRequest, "invalid_json", "the body is not the JSON object "+shape, err)
}

// article names a JSON value kind as encoding/json reports it ("array",
// "number", "number 1.5", ...).
func article(v string) string {
	switch {
	case strings.HasPrefix(v, "array"), strings.HasPrefix(v, "object"):
		return "an " + v
	case v == "null":
		return v
	}
	return "a " + v
}

// jsonTypeOf names the JSON kind that decodes into a Go type.
func jsonTypeOf(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "a value"
}

// A jsonInt is a number of a JSON body that names a count or a time: it
// must be written as an integer (an optional minus and digits), never with
// a fraction or an exponent (60.0, 1e3), so that a value has one spelling.
// Such a number decodes as NaN, which every range check of the field
// refuses with the field's own message; a value that is no number is not
// of the body's shape.
type jsonInt float64

func (n *jsonInt) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] != '-' && (b[0] < '0' || b[0] > '9') {
		// Not a number at all: the body is not of its shape, as for any
		// other field.
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[float64]()}
	}
	*n = jsonInt(math.NaN())
	digits := bytes.TrimPrefix(b, []byte("-"))
	if len(digits) == 0 || len(digits) > 20 || (digits[0] == '0' && len(digits) > 1) {
		return nil
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return nil
		}
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err == nil {
		*n = jsonInt(v)
	}
	return nil
}

// float gives n as a *float64, nil when the field was absent or null.
func (n *jsonInt) float() *float64 {
	if n == nil {
		return nil
	}
	v := float64(*n)
	return &v
}
