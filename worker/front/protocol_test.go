//go:build !(js && wasm)

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/edgebloom/edgebloom/bloom"
)

// protocolSuite is worker/test/protocol.json: the internal protocol's
// steps, which worker/test/worker.test.js runs against shard.js in workerd
// too.
type protocolSuite struct {
	Steps []struct {
		Name     string          `json:"name"`
		Object   string          `json:"object"`
		Method   string          `json:"method"`
		Path     string          `json:"path"`
		Shard    json.RawMessage `json:"shard"`
		Body     json.RawMessage `json:"body"`
		BodyText *string         `json:"bodyText"`
		// Positions, when given, is the body as uint32 little-endian (a
		// merge); Count the X-Edgebloom-Count header.
		Positions []uint32 `json:"positions"`
		Count     *uint64  `json:"count"`
		Want      struct {
			Status     int     `json:"status"`
			LaterThan  string  `json:"laterThan"`
			CleanupOf  string  `json:"cleanupOf"`
			JSON       any     `json:"json"`
			Error      string  `json:"error"`
			Empty      bool    `json:"empty"`
			Results    *[]bool `json:"results"`
			SnapshotOf *struct {
				Capacity  uint64   `json:"capacity"`
				ErrorRate float64  `json:"errorRate"`
				Keys      []string `json:"keys"`
			} `json:"snapshotOf"`
		} `json:"want"`
	} `json:"steps"`
}

// TestProtocol runs the protocol suite against memoryObjects, the Go
// stand-in for the Durable Objects: it must answer as shard.js does.
func TestProtocol(t *testing.T) {
	data, err := os.ReadFile("../test/protocol.json")
	if err != nil {
		t.Fatal(err)
	}
	var suite protocolSuite
	if err := json.Unmarshal(data, &suite); err != nil {
		t.Fatal(err)
	}
	if len(suite.Steps) < 20 {
		t.Fatalf("../test/protocol.json has %d steps", len(suite.Steps))
	}
	o := newMemoryObjects()
	generations := map[string]float64{} // each step's answer's generation
	for i, s := range suite.Steps {
		header := http.Header{}
		if s.Shard != nil {
			header.Set(shardHeader, string(s.Shard))
		}
		body := []byte(s.Body)
		if s.BodyText != nil {
			body = []byte(*s.BodyText)
		}
		for _, p := range s.Positions {
			body = binary.LittleEndian.AppendUint32(body, p)
		}
		if s.Count != nil {
			header.Set(mergeCountHeader, strconv.FormatUint(*s.Count, 10))
		}
		res, err := o.Fetch(context.Background(), s.Object, s.Method, s.Path, header, body)
		if err != nil {
			t.Fatalf("step %d (%s): %v", i, s.Name, err)
		}
		got, _ := io.ReadAll(res.Body)
		if res.StatusCode != s.Want.Status {
			t.Errorf("step %d (%s): status %d; want %d (%s)", i, s.Name, res.StatusCode, s.Want.Status, got)
			continue
		}
		switch {
		case s.Want.Error != "":
			var e struct {
				Error struct{ Code, Message string }
			}
			if json.Unmarshal(got, &e) != nil || e.Error.Code != s.Want.Error || e.Error.Message == "" {
				t.Errorf("step %d (%s): %s; want the error %q with a message", i, s.Name, got, s.Want.Error)
			}
		case s.Want.JSON != nil:
			var v any
			if err := json.Unmarshal(got, &v); err != nil || !protocolMatch(s.Want.JSON, v) {
				t.Errorf("step %d (%s): %s; want %v", i, s.Name, got, s.Want.JSON)
			}
			g, _ := v.(map[string]any)["generation"].(float64)
			generations[s.Name] = g
			if before, ok := generations[s.Want.LaterThan]; s.Want.LaterThan != "" && (!ok || g <= before) {
				t.Errorf("step %d (%s): generation %v; want one later than step %q's %v", i, s.Name, g, s.Want.LaterThan, before)
			}
			if s.Want.CleanupOf != "" {
				c, _ := v.(map[string]any)["cleanup"].(map[string]any)
				if of, ok := generations[s.Want.CleanupOf]; !ok || c["generation"] != of {
					t.Errorf("step %d (%s): the clean-up's generation %v; want step %q's %v", i, s.Name, c["generation"], s.Want.CleanupOf, of)
				}
			}
		case s.Want.SnapshotOf != nil:
			w := s.Want.SnapshotOf
			f, err := bloom.New(w.Capacity, w.ErrorRate)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range w.Keys {
				f.AddString(k)
			}
			want, _ := f.MarshalBinary()
			if !bytes.Equal(got, want) {
				t.Errorf("step %d (%s): %d bytes, not the encoding of a filter of %d keys (%d bytes)", i, s.Name, len(got), len(w.Keys), len(want))
			}
		case s.Want.Results != nil:
			want := *s.Want.Results
			hex := res.Header.Values(resultsHeader)
			answers, ok := []bool(nil), len(hex) == 1
			if ok {
				answers, ok = parseResultsHex(hex[0], len(want))
			}
			if !ok || !slices.Equal(answers, want) || len(got) != 0 {
				t.Errorf("step %d (%s): %s %q and a body of %d bytes; want %v and no body", i, s.Name, resultsHeader, hex, len(got), want)
			}
		case s.Want.Empty:
			if len(got) != 0 {
				t.Errorf("step %d (%s): a body of %d bytes; want none", i, s.Name, len(got))
			}
		default:
			t.Fatalf("step %d (%s) wants nothing", i, s.Name)
		}
	}
}

// protocolMatch reports whether got is want, where "<string>" and
// "<number>" in want stand for any string or number.
func protocolMatch(want, got any) bool {
	switch w := want.(type) {
	case string:
		switch w {
		case "<string>":
			_, ok := got.(string)
			return ok
		case "<number>":
			_, ok := got.(float64)
			return ok
		}
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for k, v := range w {
			if gv, ok := g[k]; !ok || !protocolMatch(v, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !protocolMatch(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}
