// Package token makes and checks the scoped access tokens of edgebloom's
// edge service (worker/): a token that may only read, or only add to and
// check, one named filter or every filter whose name starts with a prefix,
// until it expires.
//
// A token is signed with the service's secret (EDGEBLOOM_TOKEN) by
// HMAC-SHA256, as a signed URL is: whoever holds the secret makes tokens
// offline (the CLI's "edgebloom token", or this package in the operator's
// own backend), and the service checks one without any storage read.
// Nothing is stored per token, so a token cannot be revoked alone: it lasts
// until it expires, or until the secret that signed it is no longer
// accepted (the service takes a previous secret beside the current one
// while a rotation runs).
//
// # Format
//
// A token is "eb1." + base64url(payload) + "." + base64url(signature),
// without padding and with the unused bits of the last character zero:
// each token has exactly one spelling, and any other (padded, in the
// standard alphabet, with other trailing bits, with a line break) is
// refused as malformed. The payload is the JSON object
//
//	{"scope":"read","filter":"crawl","exp":1800000000}
//
// exactly so: the scope ("read" or "write"), the filter (a name, or a
// prefix followed by "*"; neither needs a JSON escape) and the expiry in
// Unix seconds (at most MaxExpiry), in this order, without spaces; and
// the signature is HMAC-SHA256 over "eb1." + base64url(payload), keyed
// with HMAC-SHA256(secret, "edgebloom token signing key v1"): a key of its
// own, so that nothing signed with the secret for another purpose passes
// as a token. The payload is readable without the secret (a client may
// read its expiry); only the secret can make or change one.
//
// The package uses the standard library alone.
package token

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Prefix starts every token; it names the format's version.
const Prefix = "eb1."

// MaxLength bounds a token's length: anything longer is refused as
// malformed before it is decoded. A write token for a name of 64 bytes
// (MaxNameBytes) is 195 bytes while expiries have 10 digits (until 2286);
// the longest valid token, with an expiry of MaxExpiry, is 198.
const MaxLength = 512

// MaxLifetime is the longest a token may be made for. A token cannot be
// revoked alone (rotating the secret ends every token it signed), so Mint
// refuses to make a longer-lived one, and Verify refuses a token that
// expires more than MaxLifetime (and ClockSkew) after the time it checks
// it at.
const MaxLifetime = 366 * 24 * time.Hour

// ClockSkew is how far ahead of the verifier's clock the clock of whoever
// made a token may be: Verify takes a token that expires up to
// MaxLifetime + ClockSkew from now.
const ClockSkew = 5 * time.Minute

// MaxExpiry is the latest expiry the format holds, 9999-12-31T23:59:59Z:
// every expiry is written in RFC 3339 and read by JavaScript as an exact
// number.
const MaxExpiry = 253402300799

// MaxNameBytes is the longest filter name the service takes.
const MaxNameBytes = 64

// A Scope is what a token allows.
type Scope string

const (
	// Read allows what keeping a copy of a filter needs: its statistics,
	// checks, snapshots and changes. Nothing it allows changes a filter.
	Read Scope = "read"
	// Write allows what a crawler needs: adds and checks.
	Write Scope = "write"
)

// An Operation is one thing a request asks of a filter.
type Operation string

// The operations of the service's API on one filter.
const (
	Stats    Operation = "stats"    // GET /v1/filters/{name}
	Check    Operation = "check"    // POST /v1/filters/{name}/check
	Add      Operation = "add"      // POST /v1/filters/{name}/add
	Snapshot Operation = "snapshot" // GET /v1/filters/{name}/snapshot
	Changes  Operation = "changes"  // GET /v1/filters/{name}/changes
	Create   Operation = "create"   // PUT /v1/filters/{name}: the secret only
	Delete   Operation = "delete"   // DELETE /v1/filters/{name}: the secret only
)

// allowed lists the operations of each scope.
var allowed = map[Scope][]Operation{
	Read:  {Stats, Check, Snapshot, Changes},
	Write: {Add, Check},
}

// Operations returns the operations scope s allows, or nil for an unknown
// scope.
func (s Scope) Operations() []Operation {
	return append([]Operation(nil), allowed[s]...)
}

// The errors Verify and Claims.Allow return, wrapped with what failed.
// Test them with errors.Is.
var (
	ErrMalformed = errors.New("token: malformed")
	ErrSignature = errors.New("token: bad signature")
	ErrExpired   = errors.New("token: expired")
	ErrFilter    = errors.New("token: for another filter")
	ErrOperation = errors.New("token: operation not allowed")
)

// Claims are what a token says: its scope, the filter (a name, or a prefix
// followed by "*") and when it expires, to the second.
type Claims struct {
	Scope   Scope
	Filter  string
	Expires time.Time
}

// appendPayload appends the JSON form of valid claims to b. Scopes and
// filters are of characters JSON takes as they are, so it is written
// without an encoder, in the one form parsePayload reads.
func appendPayload(b []byte, c Claims) []byte {
	b = append(b, `{"scope":"`...)
	b = append(b, c.Scope...)
	b = append(b, `","filter":"`...)
	b = append(b, c.Filter...)
	b = append(b, `","exp":`...)
	b = strconv.AppendInt(b, c.Expires.Unix(), 10)
	return append(b, '}')
}

// parsePayload reads what appendPayload writes, and nothing else; Validate
// then checks the fields.
func parsePayload(b []byte) (Claims, bool) {
	var c Claims
	s := string(b)
	rest, ok := strings.CutPrefix(s, `{"scope":"`)
	scope, rest, ok2 := strings.Cut(rest, `","filter":"`)
	filter, rest, ok3 := strings.Cut(rest, `","exp":`)
	exp, ok4 := strings.CutSuffix(rest, "}")
	if !ok || !ok2 || !ok3 || !ok4 || exp == "" || exp[0] < '1' || exp[0] > '9' {
		return c, false
	}
	n, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return c, false
	}
	return Claims{Scope: Scope(scope), Filter: filter, Expires: time.Unix(n, 0).UTC()}, true
}

// signingKey derives the key tokens are signed with from a secret.
func signingKey(secret []byte) []byte {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("edgebloom token signing key v1"))
	return mac.Sum(nil)
}

func sign(key []byte, signed string) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(signed))
	return mac.Sum(nil)
}

var b64 = base64.RawURLEncoding.Strict()

// decode64 decodes the one spelling of b64 that EncodeToString writes:
// the URL alphabet without padding, and (Strict) the last character's
// unused bits zero. encoding/base64 skips line breaks even when strict, so
// the alphabet is checked first.
func decode64(s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return nil, false
		}
	}
	b, err := b64.DecodeString(s)
	return b, err == nil
}

// Validate reports whether c can be made into a token: a known scope, a
// filter pattern (ValidFilter) and an expiry after the Unix epoch and at
// most MaxExpiry. Mint and Verify also bound the expiry by MaxLifetime
// from the time they run at.
func (c Claims) Validate() error {
	switch {
	case allowed[c.Scope] == nil:
		return fmt.Errorf("token: scope %q is not %q or %q", c.Scope, Read, Write)
	case c.Expires.Unix() <= 0:
		return errors.New("token: the expiry must be after 1970-01-01T00:00:00Z")
	case c.Expires.Unix() > MaxExpiry:
		return fmt.Errorf("token: the expiry must be at most %s", time.Unix(MaxExpiry, 0).UTC().Format(time.RFC3339))
	}
	return ValidFilter(c.Filter)
}

// checkLifetime returns an error if c expires more than MaxLifetime +
// slack after now.
func (c Claims) checkLifetime(now time.Time, slack time.Duration) error {
	if latest := now.Add(MaxLifetime + slack); c.Expires.After(latest) {
		return fmt.Errorf("token: the expiry %s is more than %d days from %s; the longest lifetime is %s",
			c.Expires.UTC().Format(time.RFC3339), MaxLifetime/(24*time.Hour), now.UTC().Format(time.RFC3339), MaxLifetime)
	}
	return nil
}

// ValidFilter reports whether pattern is a filter a token may name: a
// filter name (1 to 64 of A-Z a-z 0-9 - _ . not starting with a dot), or a
// prefix of one followed by "*", which matches every name that starts with
// the prefix ("*" alone matches every filter).
func ValidFilter(pattern string) error {
	prefix, wild := strings.CutSuffix(pattern, "*")
	ok := len(prefix) <= MaxNameBytes && (wild || prefix != "") && (!wild || len(prefix) < MaxNameBytes)
	for i := 0; ok && i < len(prefix); i++ {
		c := prefix[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' && i > 0
	}
	if !ok {
		return fmt.Errorf("token: filter %q is not a filter name (1 to %d of A-Z a-z 0-9 - _ . not starting with a dot) or such a prefix followed by *", pattern, MaxNameBytes)
	}
	return nil
}

// Mint returns the token of c signed with secret. It refuses claims that
// Validate refuses, and an expiry more than MaxLifetime after the time it
// runs at (an expiry in the past makes a token that is already expired).
func Mint(secret []byte, c Claims) (string, error) {
	if len(secret) == 0 {
		return "", errors.New("token: the secret is empty")
	}
	if err := c.Validate(); err != nil {
		return "", err
	}
	if err := c.checkLifetime(time.Now(), 0); err != nil {
		return "", err
	}
	body := appendPayload(nil, c)
	signed := Prefix + b64.EncodeToString(body)
	return signed + "." + b64.EncodeToString(sign(signingKey(secret), signed)), nil
}

// IsToken reports whether s has the form of a token (its prefix), so that
// a bearer credential that is not one can be told apart.
func IsToken(s string) bool { return strings.HasPrefix(s, Prefix) }

// A Verifier checks tokens against the secrets that may have signed them:
// the current one and, while a rotation runs, previous ones. Its keys are
// derived once; it is safe for concurrent use.
type Verifier struct {
	keys [][]byte
}

// NewVerifier returns a Verifier accepting tokens signed with any of the
// non-empty secrets.
func NewVerifier(secrets ...[]byte) *Verifier {
	v := &Verifier{}
	for _, s := range secrets {
		if len(s) > 0 {
			v.keys = append(v.keys, signingKey(s))
		}
	}
	return v
}

// Verify checks tok and returns its claims. It fails with ErrMalformed for
// what is not a token of this format (any other spelling of a token
// included, and a token that expires more than MaxLifetime + ClockSkew
// after now, which Mint does not make), ErrSignature when no secret of v
// signed it (or it was changed since), and ErrExpired once now is at or
// past its expiry. The signature is compared in constant time, and every
// secret is tried, so the time taken does not tell which one matched.
func (v *Verifier) Verify(tok string, now time.Time) (Claims, error) {
	var c Claims
	if len(tok) > MaxLength {
		return c, fmt.Errorf("%w: longer than %d bytes", ErrMalformed, MaxLength)
	}
	rest, ok := strings.CutPrefix(tok, Prefix)
	if !ok {
		return c, fmt.Errorf("%w: it does not start with %q", ErrMalformed, Prefix)
	}
	body64, sig64, ok := strings.Cut(rest, ".")
	if !ok {
		return c, fmt.Errorf("%w: no signature", ErrMalformed)
	}
	body, ok1 := decode64(body64)
	sig, ok2 := decode64(sig64)
	if !ok1 || !ok2 || len(sig) != sha256.Size {
		return c, fmt.Errorf("%w: not a base64url payload and 32-byte signature, unpadded, each in its one spelling", ErrMalformed)
	}
	signed := tok[:len(Prefix)+len(body64)]
	match := false
	for _, key := range v.keys {
		if hmac.Equal(sig, sign(key, signed)) {
			match = true
		}
	}
	if !match {
		return c, ErrSignature
	}
	// Only a payload made with the secret gets here.
	c, ok = parsePayload(body)
	if !ok {
		return Claims{}, fmt.Errorf("%w: the payload is not the JSON object of a token", ErrMalformed)
	}
	if err := c.Validate(); err != nil {
		return Claims{}, fmt.Errorf("%w: %v", ErrMalformed, strings.TrimPrefix(err.Error(), "token: "))
	}
	if err := c.checkLifetime(now, ClockSkew); err != nil {
		return Claims{}, fmt.Errorf("%w: %v", ErrMalformed, strings.TrimPrefix(err.Error(), "token: "))
	}
	if !now.Before(c.Expires) {
		return c, fmt.Errorf("%w: it expired at %s", ErrExpired, c.Expires.Format(time.RFC3339))
	}
	return c, nil
}

// Matches reports whether the claims' filter is name, or a prefix of name
// followed by "*".
func (c Claims) Matches(name string) bool {
	if prefix, ok := strings.CutSuffix(c.Filter, "*"); ok {
		return strings.HasPrefix(name, prefix)
	}
	return name == c.Filter
}

// Allow returns nil if the claims allow op on the filter named name,
// ErrFilter if they are for another filter, and ErrOperation if their
// scope does not include op.
func (c Claims) Allow(op Operation, name string) error {
	if !c.Matches(name) {
		return fmt.Errorf("%w: the token is for %q, not %q", ErrFilter, c.Filter, name)
	}
	for _, o := range allowed[c.Scope] {
		if o == op {
			return nil
		}
	}
	return fmt.Errorf("%w: a %s token allows %s, not %s", ErrOperation, c.Scope, joinOps(allowed[c.Scope]), op)
}

func joinOps(ops []Operation) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}
