// Package redisx holds what package redisfilter and the Colly storage
// (module github.com/edgebloom/edgebloom/colly) need from Redis beyond
// go-redis, written once: where Redis Cluster places a key (its hash tag),
// which error a reply is (by its code, never by words inside its text), and
// the values of a reply, read only once their number and types are checked.
// A reply of another shape (a script of another version, a proxy, a
// Redis-compatible server that answers otherwise) is then an error wrapping
// ErrUnexpectedReply, never a panic.
package redisx

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrUnexpectedReply means Redis answered with a reply of another shape than
// the command or script gives: another number of values, or a value of
// another type.
var ErrUnexpectedReply = errors.New("redisx: unexpected reply")

// HashTag returns the hash tag of key as Redis Cluster finds it: what lies
// between the first "{" and the first "}" after it, when that is not empty.
// Keys with the same tag lie in the same slot; a key without one is placed
// by the whole key.
func HashTag(key string) string {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(key[i+1:], '}')
	if j <= 0 {
		return ""
	}
	return key[i+1 : i+1+j]
}

// IsWrongType reports whether err is Redis's WRONGTYPE error: a command met a
// key holding another type. From Redis 7 on, an error that a script's
// redis.call raises keeps its code, so this holds for scripts too.
func IsWrongType(err error) bool {
	return redis.HasErrorPrefix(err, "WRONGTYPE")
}

// Values returns the array reply of cmd, which must hold exactly n values.
// An error of the command is returned as it is, so that its code can still
// be told (redis.HasErrorPrefix, IsWrongType).
func Values(cmd *redis.Cmd, n int) ([]any, error) {
	vals, err := cmd.Slice()
	if err != nil {
		return nil, err
	}
	if len(vals) != n {
		return nil, fmt.Errorf("%w: %d values, want %d", ErrUnexpectedReply, len(vals), n)
	}
	return vals, nil
}

// Ints returns the array reply of cmd, which must hold exactly n integers.
// An error of the command is returned as it is.
func Ints(cmd *redis.Cmd, n int) ([]int64, error) {
	vals, err := Values(cmd, n)
	if err != nil {
		return nil, err
	}
	ints := make([]int64, n)
	for i, v := range vals {
		if ints[i], err = Int(v); err != nil {
			return nil, fmt.Errorf("value %d: %w", i, err)
		}
	}
	return ints, nil
}

// String returns v, a value of a reply, which must be a string (a bulk or
// status reply).
func String(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: %s, want a string", ErrUnexpectedReply, describe(v))
	}
	return s, nil
}

// Int returns v, a value of a reply, which must be an integer.
func Int(v any) (int64, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("%w: %s, want an integer", ErrUnexpectedReply, describe(v))
	}
	return n, nil
}

// Fields returns v, the reply of HGETALL (an array of fields and values,
// in turn), as a map.
func Fields(v any) (map[string]string, error) {
	vals, ok := v.([]any)
	if !ok || len(vals)%2 != 0 {
		return nil, fmt.Errorf("%w: %s, want an array of fields and values", ErrUnexpectedReply, describe(v))
	}
	h := make(map[string]string, len(vals)/2)
	for i := 0; i < len(vals); i += 2 {
		field, err := String(vals[i])
		if err != nil {
			return nil, fmt.Errorf("field %d: %w", i/2, err)
		}
		if h[field], err = String(vals[i+1]); err != nil {
			return nil, fmt.Errorf("value of %.40q: %w", field, err)
		}
	}
	return h, nil
}

// describe names the type of a reply's value as Redis's protocol calls it.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "a nil"
	case string:
		return fmt.Sprintf("the string %.40q", v)
	case int64:
		return fmt.Sprintf("the integer %d", v)
	case []any:
		return fmt.Sprintf("an array of %d values", len(v))
	case error:
		return fmt.Sprintf("the error %.80q", v.Error())
	default:
		return fmt.Sprintf("a %T", v)
	}
}
