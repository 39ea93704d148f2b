//go:build !(js && wasm)

// The front makes a body valid UTF-8 as TextDecoder does: checked here
// against Node's own TextDecoder on the same bytes.

package main

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestValidUTF8 checks validUTF8 against the WHATWG decoder itself: Node's
// TextDecoder decodes the same random byte strings (rich in lead bytes,
// continuation bytes and bytes that are never UTF-8), and both must give
// the same text.
func TestValidUTF8(t *testing.T) {
	alphabet := []byte{'a', '"', 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef,
		0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xf7, 0xf8, 0xfe, 0xff}
	rng := rand.New(rand.NewPCG(17, 17))
	inputs := [][]byte{
		nil, []byte("plain"), []byte("e\xe2\x82z"), []byte("\xed\xa0\x80"), []byte("\xf0\x9f\x98"), []byte("é😀"), []byte("\xc0\xaf"),
		[]byte("\xf4\x90\x80\x80"), []byte("\xe0\x80\x80"), []byte("\xef\xbf\xbd"), []byte("a\xffb"),
	}
	for range 5000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			if rng.IntN(4) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		inputs = append(inputs, b)
	}
	var in bytes.Buffer
	for _, b := range inputs {
		in.WriteString(hex.EncodeToString(b) + "\n")
	}
	cmd := exec.Command("node", "-e", `
const lines = require('fs').readFileSync(0, 'latin1').split('\n').slice(0, -1);
const dec = new TextDecoder(), enc = new TextEncoder();
process.stdout.write(lines.map((h) => Buffer.from(enc.encode(dec.decode(Buffer.from(h, 'hex')))).toString('hex')).join('\n') + '\n');
`)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node (the reference decoder) failed: %v", err)
	}
	want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(want) != len(inputs) {
		t.Fatalf("node answered %d lines for %d inputs", len(want), len(inputs))
	}
	for i, b := range inputs {
		got := validUTF8(b)
		if hex.EncodeToString(got) != want[i] {
			t.Errorf("validUTF8(%q) = %q; TextDecoder gives %s", b, got, want[i])
		}
		if !utf8.Valid(got) {
			t.Errorf("validUTF8(%q) = %q is not valid UTF-8", b, got)
		}
	}
}
