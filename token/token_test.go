package token

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	secret   = []byte("s3cret-of-the-service")
	previous = []byte("the-secret-before")
	now      = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
)

func mint(t *testing.T, secret []byte, c Claims) string {
	t.Helper()
	tok, err := Mint(secret, c)
	if err != nil {
		t.Fatalf("Mint(%+v): %v", c, err)
	}
	return tok
}

// TestGolden pins the format: a token made by another implementation of
// the format (docs/cli.md describes it) must be this one.
func TestGolden(t *testing.T) {
	got := mint(t, []byte("secret"), Claims{Scope: Read, Filter: "crawl", Expires: time.Unix(1800000000, 0)})
	body := `{"scope":"read","filter":"crawl","exp":1800000000}`
	mac := hmac.New(sha256.New, []byte("secret"))
	mac.Write([]byte("edgebloom token signing key v1"))
	key := mac.Sum(nil)
	signed := "eb1." + base64.RawURLEncoding.EncodeToString([]byte(body))
	mac = hmac.New(sha256.New, key)
	mac.Write([]byte(signed))
	want := signed + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	if got != want {
		t.Fatalf("Mint: got %s; want %s", got, want)
	}
	const pinned = "eb1.eyJzY29wZSI6InJlYWQiLCJmaWx0ZXIiOiJjcmF3bCIsImV4cCI6MTgwMDAwMDAwMH0.Cb0bdpoqrBZSFscCegTQHEh3zkb6e5gf_nLtYjMYO3U"
	if got != pinned {
		t.Fatalf("Mint: got %s; want the pinned %s", got, pinned)
	}
}

func TestRoundTrip(t *testing.T) {
	v := NewVerifier(secret)
	for _, c := range []Claims{
		{Scope: Read, Filter: "crawl", Expires: now.Add(time.Hour)},
		{Scope: Write, Filter: "crawl-*", Expires: now.Add(time.Second)},
		{Scope: Read, Filter: "*", Expires: now.Add(MaxLifetime)},
		{Scope: Write, Filter: strings.Repeat("a", MaxNameBytes), Expires: now.Add(time.Minute)},
	} {
		tok := mint(t, secret, c)
		if len(tok) > MaxLength {
			t.Errorf("%+v: %d bytes, over MaxLength", c, len(tok))
		}
		got, err := v.Verify(tok, now)
		if err != nil {
			t.Fatalf("Verify(%s): %v", tok, err)
		}
		if got.Scope != c.Scope || got.Filter != c.Filter || !got.Expires.Equal(c.Expires.Truncate(time.Second)) {
			t.Errorf("Verify: got %+v; want %+v", got, c)
		}
	}
}

func TestVerifyErrors(t *testing.T) {
	c := Claims{Scope: Read, Filter: "crawl", Expires: now.Add(time.Hour)}
	good := mint(t, secret, c)
	body64, sig64, _ := strings.Cut(strings.TrimPrefix(good, Prefix), ".")
	other := mint(t, []byte("another secret"), c)
	forged := func(body string) string {
		return Prefix + base64.RawURLEncoding.EncodeToString([]byte(body)) + "." + sig64
	}
	// signedWith makes a token of an arbitrary payload with the secret, as
	// only a bug could: the payload is checked after the signature.
	signedWith := func(body string) string {
		signed := Prefix + base64.RawURLEncoding.EncodeToString([]byte(body))
		return signed + "." + base64.RawURLEncoding.EncodeToString(sign(signingKey(secret), signed))
	}
	tests := []struct {
		name, tok string
		want      error
	}{
		{"empty", "", ErrMalformed},
		{"the secret itself", string(secret), ErrMalformed},
		{"no prefix", strings.TrimPrefix(good, Prefix), ErrMalformed},
		{"other version", "eb2." + strings.TrimPrefix(good, Prefix), ErrMalformed},
		{"no signature", Prefix + body64, ErrMalformed},
		{"empty signature", Prefix + body64 + ".", ErrMalformed},
		{"short signature", good[:len(good)-2], ErrMalformed},
		{"long signature", good + "AA", ErrMalformed},
		{"padded", good + "=", ErrMalformed},
		{"not base64", Prefix + body64 + "!." + sig64, ErrMalformed},
		{"too long", Prefix + strings.Repeat("A", MaxLength) + "." + sig64, ErrMalformed},
		{"another secret", other, ErrSignature},
		{"scope changed", forged(`{"scope":"write","filter":"crawl","exp":` + itoa(now.Add(time.Hour).Unix()) + `}`), ErrSignature},
		{"filter changed", forged(`{"scope":"read","filter":"*","exp":` + itoa(now.Add(time.Hour).Unix()) + `}`), ErrSignature},
		{"expiry moved", forged(`{"scope":"read","filter":"crawl","exp":` + itoa(now.Add(24*time.Hour).Unix()) + `}`), ErrSignature},
		{"signature of another token", Prefix + body64 + "." + strings.Split(other, ".")[2], ErrSignature},
		{"signed bad JSON", signedWith(`{"scope":"read"`), ErrMalformed},
		{"signed unknown field", signedWith(`{"scope":"read","filter":"a","exp":1900000000,"admin":true}`), ErrMalformed},
		{"signed bad scope", signedWith(`{"scope":"admin","filter":"a","exp":1900000000}`), ErrMalformed},
		{"signed bad filter", signedWith(`{"scope":"read","filter":".a","exp":1900000000}`), ErrMalformed},
		{"signed trailing data", signedWith(`{"scope":"read","filter":"a","exp":1900000000} {}`), ErrMalformed},
		{"signed spaces", signedWith(`{"scope": "read", "filter": "a", "exp": 1900000000}`), ErrMalformed},
		{"signed fields in another order", signedWith(`{"filter":"a","scope":"read","exp":1900000000}`), ErrMalformed},
		{"signed exp with a sign", signedWith(`{"scope":"read","filter":"a","exp":+1900000000}`), ErrMalformed},
		{"signed exp a string", signedWith(`{"scope":"read","filter":"a","exp":"1900000000"}`), ErrMalformed},
		{"signed exp a fraction", signedWith(`{"scope":"read","filter":"a","exp":1900000000.5}`), ErrMalformed},
		{"signed negative exp", signedWith(`{"scope":"read","filter":"a","exp":-1}`), ErrMalformed},
		{"signed escaped filter", signedWith(`{"scope":"read","filter":"\u0061","exp":1900000000}`), ErrMalformed},
		{"expired", mint(t, secret, Claims{Scope: Read, Filter: "crawl", Expires: now}), ErrExpired},
		{"expired long ago", mint(t, secret, Claims{Scope: Read, Filter: "crawl", Expires: now.Add(-48 * time.Hour)}), ErrExpired},
	}
	v := NewVerifier(secret)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := v.Verify(tt.tok, now)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify(%q): got %v; want %v", tt.tok, err, tt.want)
			}
		})
	}
	// Every single-character change of a good token is refused.
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
	for i := range len(good) {
		for _, r := range []byte{alphabet[(strings.IndexByte(alphabet, good[i])+1)%len(alphabet)], alphabet[(strings.IndexByte(alphabet, good[i])+7)%len(alphabet)]} {
			bad := good[:i] + string(r) + good[i+1:]
			if bad == good {
				continue
			}
			if c, err := v.Verify(bad, now); err == nil {
				// Base64's last character carries spare bits: a change
				// there may decode to the same bytes. It must not change
				// what the token says.
				if c.Scope != Read || c.Filter != "crawl" {
					t.Errorf("Verify(%s) (byte %d changed) accepted as %+v", bad, i, c)
				}
			}
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestRotation(t *testing.T) {
	c := Claims{Scope: Write, Filter: "crawl", Expires: now.Add(time.Hour)}
	old, cur := mint(t, previous, c), mint(t, secret, c)
	both := NewVerifier(secret, previous)
	for _, tok := range []string{old, cur} {
		if _, err := both.Verify(tok, now); err != nil {
			t.Errorf("Verify with the current and previous secrets: %v", err)
		}
	}
	if _, err := NewVerifier(secret).Verify(old, now); !errors.Is(err, ErrSignature) {
		t.Errorf("Verify of a token of the previous secret once it is gone: got %v; want ErrSignature", err)
	}
	if _, err := NewVerifier(secret, nil).Verify(old, now); !errors.Is(err, ErrSignature) {
		t.Errorf("an empty previous secret: got %v; want ErrSignature", err)
	}
	if _, err := NewVerifier().Verify(cur, now); !errors.Is(err, ErrSignature) {
		t.Errorf("no secret at all: got %v; want ErrSignature", err)
	}
}

func TestAllow(t *testing.T) {
	ops := []Operation{Stats, Check, Add, Snapshot, Changes, Create, Delete}
	want := map[Scope]map[Operation]bool{
		Read:  {Stats: true, Check: true, Snapshot: true, Changes: true},
		Write: {Add: true, Check: true},
	}
	for _, scope := range []Scope{Read, Write} {
		for _, filter := range []string{"crawl", "cr*", "*"} {
			c := Claims{Scope: scope, Filter: filter, Expires: now.Add(time.Hour)}
			for _, op := range ops {
				err := c.Allow(op, "crawl")
				if w := want[scope][op]; w != (err == nil) || !w && !errors.Is(err, ErrOperation) {
					t.Errorf("%s %s: Allow(%s, crawl) = %v; allowed: %v", scope, filter, op, err, w)
				}
			}
		}
	}
	for _, tt := range []struct {
		filter, name string
		ok           bool
	}{
		{"crawl", "crawl", true},
		{"crawl", "crawl2", false},
		{"crawl", "craw", false},
		{"crawl", "Crawl", false},
		{"crawl*", "crawl", true},
		{"crawl*", "crawl-2026", true},
		{"crawl*", "craw", false},
		{"crawl-*", "crawl", false},
		{"*", "anything", true},
	} {
		err := Claims{Scope: Read, Filter: tt.filter}.Allow(Stats, tt.name)
		if tt.ok != (err == nil) || !tt.ok && !errors.Is(err, ErrFilter) {
			t.Errorf("filter %q, name %q: Allow = %v; want allowed %v", tt.filter, tt.name, err, tt.ok)
		}
	}
}

func TestMintErrors(t *testing.T) {
	exp := now.Add(time.Hour)
	for _, tt := range []struct {
		name   string
		secret []byte
		c      Claims
		want   string
	}{
		{"no secret", nil, Claims{Scope: Read, Filter: "a", Expires: exp}, "secret is empty"},
		{"no scope", secret, Claims{Filter: "a", Expires: exp}, "scope"},
		{"admin scope", secret, Claims{Scope: "admin", Filter: "a", Expires: exp}, "scope"},
		{"no filter", secret, Claims{Scope: Read, Expires: exp}, "filter"},
		{"dot first", secret, Claims{Scope: Read, Filter: ".a", Expires: exp}, "filter"},
		{"slash", secret, Claims{Scope: Read, Filter: "a/b", Expires: exp}, "filter"},
		{"star inside", secret, Claims{Scope: Read, Filter: "a*b", Expires: exp}, "filter"},
		{"two stars", secret, Claims{Scope: Read, Filter: "a**", Expires: exp}, "filter"},
		{"name too long", secret, Claims{Scope: Read, Filter: strings.Repeat("a", MaxNameBytes+1), Expires: exp}, "filter"},
		{"prefix too long", secret, Claims{Scope: Read, Filter: strings.Repeat("a", MaxNameBytes) + "*", Expires: exp}, "filter"},
		{"no expiry", secret, Claims{Scope: Read, Filter: "a"}, "expiry"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Mint(tt.secret, tt.c)
			if err == nil || !strings.HasPrefix(err.Error(), "token: ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Mint: got %v; want an error about %s", err, tt.want)
			}
		})
	}
}
