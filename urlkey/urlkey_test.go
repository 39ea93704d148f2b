package urlkey

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
)

// testCase is one entry of testdata/cases.json, which the npm module's
// tests (js/test/canonical.test.js) read too.
type testCase struct {
	Why   string  `json:"why"`
	In    string  `json:"in"`
	Opts  Options `json:"opts"`
	Out   string  `json:"out"`
	Error bool    `json:"error"`
}

func loadCases(t testing.TB) []testCase {
	t.Helper()
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cases []testCase
	if err := dec.Decode(&cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

func TestCases(t *testing.T) {
	cases := loadCases(t)
	if len(cases) < 60 {
		t.Fatalf("%d cases; want at least 60", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Why, func(t *testing.T) {
			got, err := Canonical(c.In, c.Opts)
			switch {
			case c.Error && err == nil:
				t.Fatalf("Canonical(%q): got %q; want an error", c.In, got)
			case c.Error && !strings.HasPrefix(err.Error(), "urlkey: "):
				t.Fatalf("Canonical(%q): error %q does not start with \"urlkey: \"", c.In, err)
			case c.Error:
				return
			case err != nil:
				t.Fatalf("Canonical(%q): %v; want %q", c.In, err, c.Out)
			case got != c.Out:
				t.Fatalf("Canonical(%q): got %q; want %q", c.In, got, c.Out)
			}
			checkOutput(t, c.In, got, c.Opts)
		})
	}
}

// checkOutput checks what every output must satisfy: it canonicalizes to
// itself, and net/url parses it with the same host and no fragment.
func checkOutput(t *testing.T, in, out string, opts Options) {
	t.Helper()
	again, err := Canonical(out, opts)
	if err != nil || again != out {
		t.Fatalf("Canonical(Canonical(%q)) = %q, %v; want %q", in, again, err, out)
	}
	u, err := url.Parse(out)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", out, err)
	}
	if u.Fragment != "" || u.User != nil || u.Host == "" || u.Scheme != strings.ToLower(u.Scheme) {
		t.Fatalf("url.Parse(%q) = %#v", out, u)
	}
}

func TestInvalidUTF8(t *testing.T) {
	for _, in := range []string{"http://example.com/\xff", "http://\xc3.example/", "http://example.com/?q=\xed\xa0\x80"} {
		if got, err := Canonical(in, Options{}); err == nil || !strings.HasPrefix(err.Error(), "urlkey: ") {
			t.Errorf("Canonical(%q): got %q, %v; want an urlkey error", in, got, err)
		}
	}
}

func TestIsTracking(t *testing.T) {
	for key, want := range map[string]bool{
		"utm_source": true, "UTM_CAMPAIGN": true, "utm_": true, "utm_a_very_long_campaign_name": true,
		"gclid": true, "fbclid": true, "_ga": true, "mc_eid": true, "igshid": true,
		"utm": false, "id": false, "gclid_": false, "": false, "utm%5Fsource": false,
	} {
		if got := IsTracking(key); got != want {
			t.Errorf("IsTracking(%q): got %v; want %v", key, got, want)
		}
	}
}

func TestCanonicalAllocs(t *testing.T) {
	const in = "https://www.example.com/path/to/page.html?id=42&b=2"
	if n := testing.AllocsPerRun(100, func() { Canonical(in, Options{}) }); n > 16 {
		t.Errorf("Canonical(%q): %v allocations; want at most 16", in, n)
	}
}

func FuzzCanonical(f *testing.F) {
	for _, c := range loadCases(f) {
		f.Add(c.In, c.Opts.KeepTracking)
	}
	f.Fuzz(func(t *testing.T, in string, keep bool) {
		opts := Options{KeepTracking: keep}
		out, err := Canonical(in, opts)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "urlkey: ") || out != "" {
				t.Fatalf("Canonical(%q): %q, %v", in, out, err)
			}
			return
		}
		checkOutput(t, in, out, opts)
	})
}

func BenchmarkCanonical(b *testing.B) {
	for _, in := range []string{
		"https://www.example.com/path/to/page.html?id=42&b=2",
		"HTTP://Bücher.Example:80/a/./b/../c?b=2&utm_source=x&a=1#top",
		"https://example.com/新闻/文章?q=中文",
	} {
		b.Run("", func(b *testing.B) {
			for range b.N {
				Canonical(in, Options{})
			}
		})
	}
}
