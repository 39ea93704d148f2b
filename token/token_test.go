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
	signedWith := func(body string) string { return signedWith(secret, body) }
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
				t.Errorf("Verify(%s) (byte %d changed) accepted as %+v", bad, i, c)
			}
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// signedWith makes a token of an arbitrary payload with secret, as only a
// bug could: the payload is checked after the signature.
func signedWith(secret []byte, body string) string {
	signed := Prefix + base64.RawURLEncoding.EncodeToString([]byte(body))
	return signed + "." + base64.RawURLEncoding.EncodeToString(sign(signingKey(secret), signed))
}

// respell returns s with its last base64 character's unused bits set to
// bits (0 to 3 for 32 bytes, whose 43 characters carry 2 bits more).
func respell(s string, bits byte) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[last&^3|int(bits)])
}

// TestOneSpelling: a token has one spelling. The signature's 32 bytes take
// 43 base64 characters, whose last carries 2 bits that encode nothing; the
// 3 other values of those bits, padding, the standard alphabet and line
// breaks (which encoding/base64 skips) each make another spelling of the
// same bytes, and each is refused as malformed.
func TestOneSpelling(t *testing.T) {
	v := NewVerifier(secret)
	// A token whose signature holds a '-' or '_', for its standard-alphabet
	// spelling.
	var good string
	for d := time.Hour; ; d += time.Second {
		good = mint(t, secret, Claims{Scope: Read, Filter: "crawl", Expires: now.Add(d)})
		if strings.ContainsAny(good[strings.LastIndexByte(good, '.'):], "-_") {
			break
		}
	}
	if _, err := v.Verify(good, now); err != nil {
		t.Fatalf("Verify(%s): %v", good, err)
	}
	body, sig, _ := strings.Cut(strings.TrimPrefix(good, Prefix), ".")
	std := strings.NewReplacer("-", "+", "_", "/")
	others := map[string]string{
		"padded":                    good + "=",
		"standard alphabet":         Prefix + body + "." + std.Replace(sig),
		"standard alphabet, padded": Prefix + body + "." + std.Replace(sig) + "=",
		"a line break":              Prefix + body + "." + sig[:20] + "\n" + sig[20:],
		"a carriage return":         Prefix + body + "." + sig[:20] + "\r" + sig[20:],
		"a trailing line break":     good + "\n",
	}
	for bits := range byte(4) {
		if other := respell(good, bits); other != good {
			others["trailing bits "+strconv.Itoa(int(bits))] = other
		}
	}
	if len(others) != 9 {
		t.Fatalf("%d other spellings; want 3 of the trailing bits and 6 more", len(others))
	}
	for name, tok := range others {
		// Each is the same bytes as the token, to encoding/base64.
		if _, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(tok, Prefix+body+".")); err != nil && !strings.HasPrefix(name, "standard") && !strings.HasSuffix(name, "padded") {
			t.Fatalf("%s: %v", name, err)
		}
		if c, err := v.Verify(tok, now); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Verify(%q) = %+v, %v; want ErrMalformed", name, tok, c, err)
		}
	}
}

// TestLifetime: the 366-day cap holds when a token is made and when it is
// checked, and so do the format's limits.
func TestLifetime(t *testing.T) {
	wall := time.Now()
	for _, tt := range []struct {
		name string
		exp  time.Time
		ok   bool
	}{
		{"366 days", wall.Add(MaxLifetime), true},
		{"a second in the past", wall.Add(-time.Second), true},
		{"366 days and a minute", wall.Add(MaxLifetime + time.Minute), false},
		{"2^62 seconds", time.Unix(1<<62, 0), false},
		{"past the year 9999", time.Unix(MaxExpiry+1, 0), false},
	} {
		t.Run("Mint "+tt.name, func(t *testing.T) {
			_, err := Mint(secret, Claims{Scope: Read, Filter: "crawl", Expires: tt.exp})
			if (err == nil) != tt.ok || err != nil && (!strings.HasPrefix(err.Error(), "token: ") || !strings.Contains(err.Error(), "expiry")) {
				t.Fatalf("Mint(exp %d): %v; want ok %v, or an error about the expiry", tt.exp.Unix(), err, tt.ok)
			}
		})
	}
	v := NewVerifier(secret)
	payload := func(exp int64) string { return `{"scope":"read","filter":"crawl","exp":` + itoa(exp) + `}` }
	latest := now.Add(MaxLifetime + ClockSkew).Unix()
	for _, tt := range []struct {
		name string
		exp  int64
		ok   bool
	}{
		{"366 days and the clock skew", latest, true},
		{"a second more", latest + 1, false},
		{"2^62 seconds", 1 << 62, false},
		{"the year 9999", MaxExpiry, false},
		{"2^63-1 seconds", 1<<63 - 1, false},
	} {
		t.Run("Verify "+tt.name, func(t *testing.T) {
			tok := signedWith(secret, payload(tt.exp))
			c, err := v.Verify(tok, now)
			if tt.ok && err != nil || !tt.ok && !errors.Is(err, ErrMalformed) {
				t.Fatalf("Verify(exp %d) at %d: %+v, %v; want ok %v, or ErrMalformed", tt.exp, now.Unix(), c, err, tt.ok)
			}
		})
	}
	// The format's limit holds whenever the token is checked.
	if _, err := v.Verify(signedWith(secret, payload(MaxExpiry+1)), time.Unix(MaxExpiry-10, 0)); !errors.Is(err, ErrMalformed) {
		t.Errorf("Verify of an expiry past the year 9999, in the year 9999: %v; want ErrMalformed", err)
	}
}

// TestLength holds MaxLength's doc: the lengths it states, and that the
// longest valid token fits.
func TestLength(t *testing.T) {
	name := strings.Repeat("a", MaxNameBytes)
	tok := mint(t, secret, Claims{Scope: Write, Filter: name, Expires: time.Unix(1800000000, 0)})
	if len(tok) != 195 {
		t.Errorf("a write token for a %d-byte name with a 10-digit expiry: %d bytes; the doc says 195", MaxNameBytes, len(tok))
	}
	longest := signedWith(secret, `{"scope":"write","filter":"`+name+`","exp":`+itoa(MaxExpiry)+`}`)
	if len(longest) != 198 || len(longest) > MaxLength {
		t.Errorf("the longest valid token: %d bytes; the doc says 198, at most MaxLength %d", len(longest), MaxLength)
	}
	if _, err := NewVerifier(secret).Verify(longest, time.Unix(MaxExpiry, 0).Add(-MaxLifetime)); err != nil {
		t.Errorf("Verify of the longest token: %v", err)
	}
}

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
