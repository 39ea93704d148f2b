package redisx

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

func TestHashTag(t *testing.T) {
	for _, tt := range []struct{ key, want string }{
		{"crawl", ""},
		{"{crawl}", "crawl"},
		{"{crawl}:0:n", "crawl"},
		{"a{b}c{d}", "b"},
		{"{}", ""},
		{"{}{b}", ""}, // Redis hashes the whole key when the first tag is empty
		{"{a", ""},
		{"a}b{c}", "c"},
		{"{{a}}", "{a"},
		{"", ""},
	} {
		if got := HashTag(tt.key); got != tt.want {
			t.Errorf("HashTag(%q): got %q; want %q", tt.key, got, tt.want)
		}
	}
}

// redisError is an error reply as go-redis gives it: a type with a
// RedisError method.
type redisError string

func (e redisError) Error() string { return string(e) }
func (redisError) RedisError()     {}

func TestIsWrongType(t *testing.T) {
	wrong := redisError("WRONGTYPE Operation against a key holding the wrong kind of value script: 1a2b, on @user_script:2.")
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"the reply", wrong, true},
		{"wrapped", fmt.Errorf("redisfilter: open %q: %w", "f", wrong), true},
		{"nil", nil, false},
		{"another code", redisError("NOSCRIPT No matching script"), false},
		// The words inside another error's text are not its code.
		{"named in the text", redisError("ERR user_script:1: key WRONGTYPE is missing"), false},
		{"not from Redis", errors.New("WRONGTYPE"), false},
	} {
		if got := IsWrongType(tt.err); got != tt.want {
			t.Errorf("%s: IsWrongType(%v): got %v; want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

func reply(val any, err error) *redis.Cmd {
	cmd := redis.NewCmd(context.Background())
	cmd.SetVal(val)
	cmd.SetErr(err)
	return cmd
}

func TestValues(t *testing.T) {
	vals, err := Values(reply([]any{"3", int64(7)}, nil), 2)
	if err != nil || len(vals) != 2 {
		t.Fatalf("Values of 2 values, want 2: got %v, %v", vals, err)
	}
	for _, tt := range []struct {
		name string
		val  any
		n    int
		want string
	}{
		{"too short", []any{"3"}, 2, "1 values, want 2"},
		{"empty", []any{}, 2, "0 values, want 2"},
		{"too long", []any{"3", int64(7), int64(1)}, 2, "3 values, want 2"},
	} {
		vals, err := Values(reply(tt.val, nil), tt.n)
		if !errors.Is(err, ErrUnexpectedReply) || !strings.Contains(err.Error(), tt.want) || vals != nil {
			t.Errorf("%s: Values: got %v, %v; want ErrUnexpectedReply saying %q", tt.name, vals, err, tt.want)
		}
	}
	// Not an array: go-redis's own error, not a panic.
	if _, err := Values(reply("OK", nil), 1); err == nil {
		t.Errorf("Values of a string: got no error")
	}
	// The command's error comes back as it is, so its code can be told.
	nos := redisError("NOSCRIPT No matching script. Please use EVAL.")
	if _, err := Values(reply(nil, nos), 2); err != nos || !redis.HasErrorPrefix(err, "NOSCRIPT") {
		t.Errorf("Values of an error reply: got %v; want %v unchanged", err, nos)
	}
}

func TestInts(t *testing.T) {
	ints, err := Ints(reply([]any{int64(1), int64(0)}, nil), 2)
	if err != nil || len(ints) != 2 || ints[0] != 1 || ints[1] != 0 {
		t.Fatalf("Ints: got %v, %v; want [1 0]", ints, err)
	}
	for _, tt := range []struct {
		name string
		val  any
		want string
	}{
		{"too short", []any{int64(1)}, "1 values, want 2"},
		{"a string", []any{int64(1), "0"}, `value 1: redisx: unexpected reply: the string "0", want an integer`},
		{"a nil", []any{nil, int64(1)}, "value 0: redisx: unexpected reply: a nil, want an integer"},
	} {
		ints, err := Ints(reply(tt.val, nil), 2)
		if !errors.Is(err, ErrUnexpectedReply) || !strings.Contains(err.Error(), tt.want) || ints != nil {
			t.Errorf("%s: Ints: got %v, %v; want ErrUnexpectedReply saying %q", tt.name, ints, err, tt.want)
		}
	}
}

func TestStringAndInt(t *testing.T) {
	if s, err := String("12"); s != "12" || err != nil {
		t.Errorf(`String("12"): got %q, %v`, s, err)
	}
	if n, err := Int(int64(12)); n != 12 || err != nil {
		t.Errorf("Int(12): got %d, %v", n, err)
	}
	for _, v := range []any{nil, int64(1), []any{"a"}} {
		if _, err := String(v); !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("String(%#v): got %v; want ErrUnexpectedReply", v, err)
		}
	}
	for _, v := range []any{nil, "1", []any{int64(1)}, 1.5} {
		if _, err := Int(v); !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("Int(%#v): got %v; want ErrUnexpectedReply", v, err)
		}
	}
}

func TestFields(t *testing.T) {
	h, err := Fields([]any{"edgebloom", "2", "shards", "1"})
	if err != nil || len(h) != 2 || h["edgebloom"] != "2" || h["shards"] != "1" {
		t.Fatalf("Fields: got %v, %v; want map[edgebloom:2 shards:1]", h, err)
	}
	if h, err := Fields([]any{}); err != nil || len(h) != 0 {
		t.Errorf("Fields of an empty hash: got %v, %v; want an empty map", h, err)
	}
	for _, tt := range []struct {
		name string
		val  any
		want string
	}{
		{"odd", []any{"edgebloom", "2", "shards"}, "an array of 3 values, want an array of fields and values"},
		{"an integer", int64(1), "the integer 1, want an array"},
		{"a nil", nil, "a nil, want an array"},
		{"an integer field", []any{int64(1), "2"}, "field 0: redisx: unexpected reply: the integer 1, want a string"},
		{"an array value", []any{"a", []any{}}, `value of "a": redisx: unexpected reply: an array of 0 values, want a string`},
	} {
		h, err := Fields(tt.val)
		if !errors.Is(err, ErrUnexpectedReply) || !strings.Contains(err.Error(), tt.want) || h != nil {
			t.Errorf("%s: Fields: got %v, %v; want ErrUnexpectedReply saying %q", tt.name, h, err, tt.want)
		}
	}
}
