#!/usr/bin/env bash
# Builds the Worker into build/: the syumai/workers glue (worker.mjs,
# runtime.mjs, wasm_exec.js) and the Go front as build/app.wasm. wrangler
# runs it as its build command; it also makes 'edgebloom' resolvable by name
# (node_modules/edgebloom -> ..) and builds the npm module's wasm if missing.
set -euo pipefail
cd "$(dirname "$0")"

if [ ! -e node_modules/edgebloom/package.json ]; then
	npm install --no-audit --no-fund --ignore-scripts >&2
fi
if [ ! -f ../js/edgebloom.wasm ] || [ ! -f ../js/wasm_exec.js ]; then
	(cd .. && bash build.sh build) >&2
fi
go run github.com/syumai/workers/cmd/workers-assets-gen -mode=go -o build
GOOS=js GOARCH=wasm go build -trimpath -buildvcs=false -ldflags="-s -w -buildid=" -o build/app.wasm .
raw=$(wc -c <build/app.wasm)
gz=$(gzip -9c build/app.wasm | wc -c)
echo "worker/build/app.wasm: $raw bytes, $gz gzipped" >&2
