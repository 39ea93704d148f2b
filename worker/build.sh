#!/usr/bin/env bash
# Builds the Worker into build/: syumai/workers' copy of Go's glue
# (wasm_exec.js, with the clock of ../tools/glue.mjs) and the Go front
# (front/*.go) as build/app.wasm, which front/worker.mjs imports. wrangler
# runs it as its build command; it also makes 'edgebloom' resolvable by
# name (node_modules/edgebloom -> ..) and builds the npm module's wasm if
# missing.
#
# Several wrangler processes may run it at once (the tests run "wrangler
# dev" beside "wrangler deploy --dry-run"), and a running "wrangler dev"
# reloads the Worker when a file it bundled changes. So builds take turns
# (flock, where there is one), each builds into a directory of its own, and
# a file of build/ is replaced, by a rename, only when its content changed:
# a rebuild of the same sources touches nothing.
#
# wrangler dev runs this command twice as it starts (wrangler 4.86 runs it
# again once its watcher of watch_dir is ready: workers-sdk issue 7934), and
# again on every change there. A run whose inputs are those of the last
# build (build/.inputs: a hash of the files the front is compiled from, the
# go.mod and go.sum files, this script, the glue patch and the Go version)
# says so and builds nothing.
set -euo pipefail
cd "$(dirname "$0")"

mkdir -p build
if command -v flock >/dev/null 2>&1; then
	exec 9>>build/.lock
	flock 9
fi

# package.json's "edgebloom": "file:.." is what npm install would make of
# it: a link to the repository root. Made by hand, so that no lockfile
# (which would record the root's devDependencies) is written or goes stale.
if [ ! -e node_modules/edgebloom/package.json ]; then
	mkdir -p node_modules
	ln -sfn ../.. node_modules/edgebloom
fi
if [ ! -f ../js/edgebloom.wasm ] || [ ! -f ../js/wasm_exec.js ]; then
	(cd .. && bash build.sh build) >&2
fi
# The inputs: the files the front is compiled from, those of every package
# it imports (go list -deps: Go and assembly files, embedded files; tests
# aside), and what else decides the output.
files='{{if not .Standard}}{{range .GoFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{range .SFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$.Dir}}/{{.}}{{"\n"}}{{end}}{{end}}'
inputs=$(
	{
		go version
		GOOS=js GOARCH=wasm go list -deps -f "$files" ./front | sed '/^$/d' | xargs -d '\n' sha256sum
		sha256sum go.mod go.sum ../go.mod ../go.sum build.sh ../tools/glue.mjs
	} | sha256sum | cut -d' ' -f1
)
if [ -f build/app.wasm ] && [ -f build/wasm_exec.js ] && [ "$(cat build/.inputs 2>/dev/null)" = "$inputs" ]; then
	echo "worker/build: up to date (front and what it imports unchanged), nothing built" >&2
	exit 0
fi
tmp=$(mktemp -d build/.tmp.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# workers-assets-gen writes syumai/workers' entry module too (worker.mjs,
# runtime.mjs), which makes a Go instance a request; front/worker.mjs keeps
# one (front/front.js), so only the glue is kept.
go run github.com/syumai/workers/cmd/workers-assets-gen -mode=go -o "$tmp/gen"
mv "$tmp/gen/wasm_exec.js" "$tmp/wasm_exec.js"
rm -rf "$tmp/gen"
# syumai/workers' copy of Go's glue hands Go the host's clock as it is,
# which in workerd reads 0 inside FinalizationRegistry callbacks: the Go
# front gets the engine's clock instead (../tools/glue.mjs).
node ../tools/glue.mjs clock-patch "$tmp/wasm_exec.js"
GOOS=js GOARCH=wasm go build -trimpath -buildvcs=false -ldflags="-s -w -buildid=" -o "$tmp/app.wasm" ./front
for f in "$tmp"/*; do
	name=$(basename "$f")
	cmp -s "$f" "build/$name" || mv -f "$f" "build/$name"
done
raw=$(wc -c <build/app.wasm)
gz=$(gzip -9c build/app.wasm | wc -c)
echo "$inputs" >build/.inputs
echo "worker/build/app.wasm: built, $raw bytes, $gz gzipped" >&2
