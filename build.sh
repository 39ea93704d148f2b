#!/usr/bin/env bash
# Build and test entry points. Usage: bash build.sh <target>
#   build      build js/edgebloom.wasm and the module-scoped js/wasm_exec.js,
#              and fail over the size budget (tools/wasm.mjs, docs/size.md)
#   wasm-size [ROWS]  what each package and function costs in the gzipped
#              engine (tools/wasm-size.mjs), beyond an empty Go program
#   clock-patch FILE  give the wasm_exec.js at FILE (absolute, or from the
#              repository root) a clock Go can trust (tools/glue.mjs)
#   test       everything npm test runs (after setup)
#   demo       build, then serve web-demo/ on http://127.0.0.1:${PORT:-8080}
#   setup      what the tests need: deps, then Chromium and redis-server
#              (apt-get install when root; tools/deps.mjs)
#   deps       npm ci when node_modules is missing or older than package-lock.json
#   test-go    every Go module of go.work: gofmt, vet, staticcheck, tests on the
#              host (+race), GOARCH=386, GOOS=js GOARCH=wasm, fuzz smoke
#   lint       ESLint and prettier's check on the JavaScript (npm run lint;
#              npm run fix fixes what they can)
#   lint-go    gofmt, then go vet and staticcheck in every Go module
#   test-module DIR  the Go tests of one module (., urlkey, bench, worker...)
#   test-redis the Redis filter (redisfilter/) against a real redis-server
#   test-colly the Colly storage (colly/): crawls of a local site, on Redis too
#   test-parquet  edgebloom bitsets in Parquet files, read by a Parquet library
#   test-modules  each published Go module built as a consumer would (GOWORK=off),
#              and the docs' Go install steps followed outside the checkout
#   test-js    Node tests of the npm module (js/test), of the programs this
#              script runs (tools/test) and of the demo's modules (web-demo/test)
#   test-e2e   headless Chromium and workerd tests (e2e/)
#   test-ecosystem  the packed package in other Node versions, Bun, Deno,
#              edge-runtime, Vite, webpack and tsc (e2e/ecosystem/)
#   test-worker  the Cloudflare Worker (worker/): Go handler tests and workerd tests
#   test-docs  the code blocks of the docs, taken from the Markdown and run
#              (tools/docblocks.mjs)
#   test-examples  every example of examples/, the npm ones on the packed
#              package, the Go ones as modules of their own
#   example NAME  install the package packed from this checkout into
#              examples/NAME (an npm one) and run its npm start
#   release-check  what a release runs, checked (RELEASING.md): actionlint,
#              goreleaser check and a snapshot release, RELEASING.md's commands
#
# Each target is a program of tools/ (each with its tests in tools/test/):
# deps.mjs installs, wasm.mjs builds, glue.mjs patches Go's glue, and
# suites.mjs runs the suites, some of them side by side.
set -euo pipefail
cd "$(dirname "$0")"

case "${1:-}" in
build) exec node tools/wasm.mjs build ;;
wasm-size) exec node tools/wasm.mjs size "${2:-}" ;;
clock-patch) exec node tools/glue.mjs clock-patch "${2:?usage: build.sh clock-patch FILE}" ;;
deps) exec node tools/deps.mjs node ;;
setup) exec node tools/deps.mjs setup ;;
demo)
	node tools/wasm.mjs build
	exec node web-demo/serve.js
	;;
test | test-go | lint | lint-go | test-module | test-redis | test-colly | test-parquet | test-modules | \
	test-js | test-e2e | test-ecosystem | test-worker | test-docs | test-examples | example | release-check)
	exec node tools/suites.mjs "$@"
	;;
*)
	sed -n '2,/^set -euo/{/^#/p}' "$0" >&2
	exit 2
	;;
esac
