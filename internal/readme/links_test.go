package readme

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The pages whose relative links are checked: the README, the pages it
// leads to, and the other READMEs of the repository.
var pages = []string{"README.md", "docs/*.md", "worker/*.md", "worker/bench/README.md", "bench/README.md", "bloom/testdata/README.md", "examples/*/README.md"}

var (
	codeFence = regexp.MustCompile("(?ms)^```.*?^```")
	codeSpan  = regexp.MustCompile("`[^`\n]*`")
	mdLink    = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	heading   = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*$`)
)

// anchors gives the fragments GitHub makes for the headings of a Markdown
// page: lower case, spaces to hyphens, other punctuation dropped, and -1,
// -2, ... after a repeated one.
func anchors(md string) map[string]bool {
	md = codeFence.ReplaceAllString(md, "")
	got := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(md, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for i := 1; got[a]; i++ {
			a = b.String() + "-" + strconv.Itoa(i)
		}
		got[a] = true
	}
	return got
}

// TestLinks: every relative link names a file or directory of the
// repository, and its #fragment, if any, a heading of the page it names.
func TestLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	var files []string
	for _, p := range pages {
		m, err := filepath.Glob(filepath.Join(root, p))
		if err != nil || len(m) == 0 {
			t.Fatalf("%s: no such page (%v)", p, err)
		}
		files = append(files, m...)
	}
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(root, file)
		text := codeSpan.ReplaceAllString(codeFence.ReplaceAllString(string(b), ""), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			path, frag, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s: link %s: %v", name, target, err)
				continue
			}
			if frag == "" {
				continue
			}
			page, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s: link %s: %v", name, target, err)
				continue
			}
			if !anchors(string(page))[frag] {
				t.Errorf("%s: link %s: no heading of %s makes #%s", name, target, filepath.Base(dest), frag)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d relative links found", checked)
	}
}
