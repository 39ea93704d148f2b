#!/usr/bin/env bash
# Build and test entry points. Usage: bash build.sh <target>
#   build      build the wasm module and the module-scoped wasm_exec.js
#   test       everything npm test runs
#   test-go    Go tests: lint, host (+race), GOARCH=386, GOOS=js GOARCH=wasm, fuzz smoke
set -euo pipefail
cd "$(dirname "$0")"

log() { printf '\n==> %s\n' "$*"; }

lint_go() {
	log "gofmt and go vet"
	local unformatted
	unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*'))
	if [ -n "$unformatted" ]; then
		echo "gofmt would change: $unformatted" >&2
		return 1
	fi
	go vet ./...
	GOOS=js GOARCH=wasm go vet ./...
}

test_go() {
	lint_go
	log "go test (host, race)"
	go test -race -count=1 ./...
	log "go test (GOARCH=386)"
	GOARCH=386 go test -count=1 ./bloom/...
	log "go test (GOOS=js GOARCH=wasm, in node)"
	PATH="$(go env GOROOT)/lib/wasm:$PATH" GOOS=js GOARCH=wasm go test -count=1 ./bloom/...
	log "fuzz smoke"
	local f
	for f in $(go test -list 'Fuzz.*' ./bloom | grep '^Fuzz'); do
		go test -run '^$' -fuzz "^$f\$" -fuzztime 10s ./bloom
	done
	log "benchmarks compile and run once"
	go test -run '^$' -bench . -benchtime 1x ./bloom
}

case "${1:-}" in
test-go) test_go ;;
test) test_go ;;
*)
	sed -n '2,6p' "$0" >&2
	exit 2
	;;
esac
