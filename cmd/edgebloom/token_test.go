package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebloom/edgebloom/token"
)

// withSecret runs the binary with EDGEBLOOM_TOKEN set to secret ("" unset).
func withSecret(t *testing.T, secret string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EDGEBLOOM_TOKEN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if secret != "" {
		cmd.Env = append(cmd.Env, "EDGEBLOOM_TOKEN="+secret)
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return result{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}

func TestToken(t *testing.T) {
	const secret = "the-service-secret"
	v := token.NewVerifier([]byte(secret))
	for _, tt := range []struct {
		scope, filter, expiresIn string
		life                     time.Duration
	}{
		{"read", "crawl", "3600", time.Hour},
		{"write", "crawl-*", "90m", 90 * time.Minute},
		{"read", "*", "366d", token.MaxLifetime},
		{"write", "a.b_c-D", "1s", time.Second},
	} {
		start := time.Now().Truncate(time.Second)
		r := withSecret(t, secret, "token", "--scope", tt.scope, "--filter", tt.filter, "--expires-in", tt.expiresIn)
		if r.status != 0 || r.stderr != "" {
			t.Fatalf("token %v: %d %s", tt, r.status, r.stderr)
		}
		c, err := v.Verify(strings.TrimSuffix(r.stdout, "\n"), start)
		if err != nil {
			t.Fatalf("token %v: %q does not verify: %v", tt, r.stdout, err)
		}
		if string(c.Scope) != tt.scope || c.Filter != tt.filter || c.Expires.Before(start.Add(tt.life)) || c.Expires.After(time.Now().Add(tt.life)) {
			t.Errorf("token %v: claims %+v", tt, c)
		}
	}

	r := withSecret(t, secret, "token", "--json", "--scope", "read", "--filter", "crawl", "--expires-in", "12h")
	var out struct{ Token, Expires, Scope, Filter string }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || r.status != 0 {
		t.Fatalf("token --json: %d %q %s", r.status, r.stdout, r.stderr)
	}
	c, err := v.Verify(out.Token, time.Now())
	if err != nil || out.Expires != c.Expires.Format(time.RFC3339) || out.Scope != "read" || out.Filter != "crawl" {
		t.Errorf("token --json: %+v (%v)", out, err)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	writeFile(t, file, secret+"\n")
	r = withSecret(t, "", "token", "--secret-file", file, "--scope", "write", "--filter", "crawl", "--expires-in", "60")
	if _, err := v.Verify(strings.TrimSpace(r.stdout), time.Now()); r.status != 0 || err != nil {
		t.Errorf("token --secret-file: %d %q %s (%v)", r.status, r.stdout, r.stderr, err)
	}
}

func TestTokenErrors(t *testing.T) {
	good := []string{"--scope", "read", "--filter", "crawl", "--expires-in", "1h"}
	with := func(flag, value string) []string {
		args := append([]string{"token"}, good...)
		for i := range args {
			if args[i] == flag {
				args[i+1] = value
			}
		}
		return args
	}
	for _, tt := range []struct {
		name, secret string
		args         []string
		want         string
	}{
		{"no secret", "", with("", ""), "EDGEBLOOM_TOKEN"},
		{"admin scope", "s", with("--scope", "admin"), "--scope"},
		{"no filter", "s", with("--filter", ""), "--filter"},
		{"bad filter", "s", with("--filter", ".x"), "--filter"},
		{"star inside", "s", with("--filter", "a*b"), "--filter"},
		{"no expiry", "s", with("--expires-in", ""), "--expires-in"},
		{"zero", "s", with("--expires-in", "0"), "--expires-in"},
		{"too long", "s", with("--expires-in", "367d"), "--expires-in"},
		{"fraction", "s", with("--expires-in", "1500ms"), "--expires-in"},
		{"words", "s", with("--expires-in", "soon"), "--expires-in"},
		{"argument", "s", append(with("", ""), "extra"), "unexpected argument"},
		{"missing secret file", "s", append(with("", ""), "--secret-file", "/nonexistent/secret"), "/nonexistent/secret"},
	} {
		r := withSecret(t, tt.secret, tt.args...)
		if r.status != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, "edgebloom: token: ") || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%s: edgebloom %s: %d %q %q; want status 2 and an error naming %s", tt.name, strings.Join(tt.args, " "), r.status, r.stdout, r.stderr, tt.want)
		}
	}
}
