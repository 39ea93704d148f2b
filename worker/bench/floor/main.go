// Command floor is the least a Go Worker on syumai/workers can be: it
// answers every request 401 with net/http alone. bench/front.js runs it in
// place of the front to measure what syumai/workers' fresh Go instance a
// request costs before any of the front's own code runs.
package main

import (
	"net/http"

	"github.com/syumai/workers"
)

func main() {
	workers.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="edgebloom"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
}
