// Command canonlines canonicalizes URLs for the npm module's tests, which
// compare canonicalURL with urlkey.Canonical on generated input. It reads
// one JSON request a line, {"in": string, "opts": {"keepTracking": bool}},
// and writes one JSON line for each: {"out": string} or {"error": string}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/edgebloom/edgebloom/urlkey"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req struct {
			In   string
			Opts urlkey.Options
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "canonlines:", err)
			os.Exit(2)
		}
		key, err := urlkey.Canonical(req.In, req.Opts)
		if err != nil {
			enc.Encode(map[string]string{"error": err.Error()})
		} else {
			enc.Encode(map[string]string{"out": key})
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "canonlines:", err)
		os.Exit(2)
	}
}
