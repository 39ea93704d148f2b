#!/usr/bin/env bash
# Build and test entry points. Usage: bash build.sh <target>
#   build      build js/edgebloom.wasm and the module-scoped js/wasm_exec.js
#   wasm-size [ROWS]  what each package and function costs in the gzipped
#              engine (tools/wasm-size.mjs), beyond an empty Go program
#   clock-patch FILE  give the wasm_exec.js at the absolute path FILE a clock Go can trust
#   test       everything npm test runs (after setup)
#   demo       build, then serve web-demo/ on http://127.0.0.1:${PORT:-8080}
#   setup      what the tests need: deps, then the system packages below
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
#   test-js    Node tests of the npm module (js/test)
#   test-e2e   headless Chromium and workerd tests (e2e/)
#   test-ecosystem  the packed package in other Node versions, Bun, Deno,
#              edge-runtime, Vite, webpack and tsc (e2e/ecosystem/)
#   test-worker  the Cloudflare Worker (worker/): Go handler tests and workerd tests
#   test-examples  every example of examples/, the npm ones on the packed
#              package, the Go ones as modules of their own
#   example NAME  install the package packed from this checkout into
#              examples/NAME (an npm one) and run its npm start
set -euo pipefail
cd "$(dirname "$0")"
repo_root=$PWD

log() { printf '\n==> %s\n' "$*"; }

# npm ci in dir (default .) when its node_modules is missing or older than
# its package-lock.json (the hidden lockfile npm writes into node_modules is
# its install record), so a fresh clone or a changed lockfile installs once
# and later runs skip it. npm is global, so running this from inside
# "npm test" is safe. A second argument replaces "ci" (e2e/ecosystem/).
ensure_node_modules() {
	local dir=${1:-.} how=${2:-ci}
	if [ -f "$dir/node_modules/.package-lock.json" ] && ! [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
		return 0
	fi
	log "npm $how${1:+ (in $dir)}"
	# shellcheck disable=SC2086 # $how is one or two words
	(cd "$dir" && npm $how --no-audit --no-fund)
}

# System programs the tests run, as "command Debian-package" pairs: e2e/
# drives Debian's Chromium at /usr/bin/chromium through playwright-core,
# and the Redis tests start a real redis-server. What is missing is
# installed with one apt-get install when running as root; otherwise the
# run stops with one line naming the command.
system_packages=(
	"/usr/bin/chromium chromium"
	"redis-server redis-server"
)

ensure_system_packages() {
	local entry cmd pkg missing=()
	for entry in "${system_packages[@]}"; do
		read -r cmd pkg <<<"$entry"
		if [[ $cmd == /* ]]; then
			[ -x "$cmd" ] && continue
		else
			command -v "$cmd" >/dev/null 2>&1 && continue
		fi
		[[ " ${missing[*]} " == *" $pkg "* ]] || missing+=("$pkg")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		echo "build.sh: the tests need ${missing[*]}: run sudo apt-get install -y ${missing[*]}" >&2
		return 1
	fi
	log "apt-get install ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
}

# e2e/ecosystem/ has its own package.json: the runtimes, bundlers and Node
# versions the ecosystem tests load the package in (about 800 MB), kept out
# of the library's devDependencies. It is installed with "npm install
# --no-save", which installs what its lockfile pins and leaves the lockfile
# as it is: npm ci refuses a lockfile without the other platforms' builds of
# Bun, Deno and Rollup, which a registry serving one platform cannot list.
setup() {
	ensure_node_modules
	ensure_node_modules e2e/ecosystem "install --no-save"
	ensure_system_packages
}

# Every Go module of the repository, as go.work lists them, with what its
# tests need: "race" runs them with the race detector, "wasm" vets and tests
# it for GOOS=js GOARCH=wasm too (the npm module's engine and the Worker run
# there), "build" only compiles its tests (the benchmarks: bench/ runs them
# by hand, see bench/README.md), "example" marks an example of examples/,
# tested by test_examples rather than test_go. lint_go fails when go.work and this list
# disagree, so a new module cannot be left out.
go_modules=(
	". race wasm"
	"cmd/edgebloom"
	"urlkey race wasm"
	"redisfilter race"
	"colly"
	"examples/colly-crawler example race"
	"examples/parquet example"
	"parquettest"
	"modtest"
	"bench build"
	"worker wasm"
)

# staticcheck, pinned in tools/go.mod (its own module, outside go.work, so
# that neither the library's go.mod nor the workspace's build list takes its
# dependencies), built once into .cache/bin from the module proxy.
staticcheck() {
	local bin=$repo_root/.cache/bin/staticcheck version
	version=$(cd "$repo_root/tools" && GOWORK=off go list -m -f '{{.Version}}' honnef.co/go/tools)
	if ! [ -x "$bin" ] || [ "$(cat "$bin.version" 2>/dev/null)" != "$version" ]; then
		log "build staticcheck $version (tools/go.mod)"
		mkdir -p "$repo_root/.cache/bin"
		(cd "$repo_root/tools" && GOWORK=off go build -o "$bin" honnef.co/go/tools/cmd/staticcheck)
		echo "$version" >"$bin.version"
	fi
	"$bin" "$@"
}

# module_has prints whether the go_modules entry of dir $1 has the word $2.
module_has() {
	local entry words
	for entry in "${go_modules[@]}"; do
		read -r -a words <<<"$entry"
		if [ "${words[0]}" = "$1" ]; then
			[[ " ${words[*]:1} " == *" $2 "* ]]
			return
		fi
	done
	return 1
}

# lint_go: gofmt over the tree, then go vet (also for js/wasm where the
# module runs there) and staticcheck on the host packages of every module.
lint_go() {
	log "gofmt"
	local unformatted
	unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './node_modules/*'))
	if [ -n "$unformatted" ]; then
		echo "gofmt would change: $unformatted" >&2
		return 1
	fi
	local listed workspace entry dir
	listed=$(for entry in "${go_modules[@]}"; do read -r dir _ <<<"$entry"; echo "$dir"; done | sort)
	workspace=$(go list -m -f '{{.Dir}}' | while read -r dir; do realpath --relative-to=. "$dir"; done | sort)
	if [ "$listed" != "$workspace" ]; then
		echo "build.sh: go_modules and go.work list different modules:" >&2
		diff <(echo "$listed") <(echo "$workspace") >&2 || true
		return 1
	fi
	for entry in "${go_modules[@]}"; do
		read -r dir _ <<<"$entry"
		log "go vet and staticcheck ($dir)"
		(cd "$dir" && go vet ./...)
		if module_has "$dir" wasm; then
			(cd "$dir" && GOOS=js GOARCH=wasm go vet ./...)
		fi
		(cd "$dir" && staticcheck ./...)
	done
}

# Size budget of js/edgebloom.wasm, in decimal units: 2,000,000 bytes raw
# and 600,000 bytes gzip -9. Go's js/wasm runtime alone (an empty main) is
# 1,801,539 bytes raw and 540,840 gzipped (go1.26.8), which leaves 198 kB
# raw and 59 kB gzipped for the filter, its five kinds and the exports.
#
# What each part costs is measured, not guessed: "bash build.sh wasm-size"
# builds the engine as below but keeping its function names, and an empty
# Go program the same way, and tools/wasm-size.mjs prints, for every
# function the empty program lacks, how many bytes the gzipped code section
# loses when that function's body alone is left out, summed by package, and
# the data section (Go's pclntab, type descriptors, strings) as a whole.
# What a build setting or a runtime variant costs is measured by building
# the engine both ways through the same wasm-opt and gzip (build variants).
# With go1.26.8, before the steps below: the engine's own functions (bloom,
# main, math, errors, io, sync) come to about 45 kB gzipped of code, and
# its data section to 37 kB more than the empty program's.
#
# Three build steps close the gap (go1.26.8, with every kind, the hot
# exports and the grouped batches of both the classic and the split-block
# kind):
# - The runtime package is compiled without bounds checks (-B): 51 kB raw
#   and 15 kB gzipped less. Only package runtime: its index checks guard
#   against bugs in the runtime itself, never against input. The filter
#   code (bloom, wasm) and the rest of the standard library keep theirs, so
#   a bad index there still panics into a status or ERR_ENGINE_EXITED.
# - Go's previous garbage collector (GOEXPERIMENT=nogreenteagc): 41 kB raw
#   and 13 kB gzipped less than Go 1.26's default Green Tea collector, whose
#   span-at-a-time marking is for many cores and cache locality in large
#   heaps; the engine runs on one thread, with a heap of a few large
#   bitsets, and collects only when a filter is made, loaded or freed. Go
#   1.27 is to drop the setting: the build then fails here, and the budget
#   needs this question answered again.
# - Binaryen's wasm-opt -Oz (npm devDependency "binaryen", pinned) shrinks
#   Go's code by another 118 kB raw and 5 kB gzipped: it merges the many
#   locals Go's wasm backend declares and folds what it emits twice. It
#   allows exactly the wasm features Go's output uses. It takes 10-30 s, so
#   its output is kept in .cache/wasm-opt under the sha256 of its input, and
#   a rebuild of the same Go code reuses it. (-Oz twice, or --converge,
#   saved nothing more.)
# Measured and left as they are: GOWASM=satconv,signext (90 bytes larger);
# the runtime without inlining (-l: 15 kB smaller gzipped, but 2,113,427
# bytes raw, over the raw budget, and a slower runtime); inlining off in the
# rest of the standard library (200 bytes smaller).
max_raw=2000000
max_gz=600000
go_experiment=nogreenteagc
wasm_opt_flags=(-Oz --mvp-features --enable-mutable-globals --enable-bulk-memory --enable-sign-ext --enable-nontrapping-float-to-int)

# clock_patched prints the wasm_exec.js file $1 (Go's glue, or a copy of
# it such as syumai/workers') with the clock it hands Go (runtime.nanotime1)
# replaced. Go's runtime aborts when that clock reads 0 ("fatal error:
# stopTheWorld: broken CPU time accounting": a P's stop time of 0 means
# "never stopped") and misbehaves when it goes back. Hosts give no such
# guarantee: workerd's performance.now() and Date.now() stand still outside
# I/O, its performance.now() is the time since the epoch (so the glue's
# timeOrigin is 0) and reads 0 inside FinalizationRegistry callbacks, where
# a dropped filter's free() runs Go; browsers coarsen their timers. So the
# clock advances by what the host's performance.now() advanced since its
# highest reading, and by 1 ns when that is nothing or less: it is strictly
# increasing whatever the host does. It counts from 1 s, in integer
# nanoseconds (exact in a double for 104 days). The clock is defined right
# after the file's "use strict" line, in the scope of whatever wraps it.
# It fails when the glue does not read the clock as expected.
clock_patched() {
	local line='setInt64(sp + 8, (timeOrigin + performance.now()) * 1000000);'
	if [ "$(grep -cF "$line" "$1")" != 1 ] || [ "$(grep -c '^"use strict";$' "$1")" != 1 ]; then
		echo "build.sh: $1 does not read the clock as expected (runtime.nanotime1); update clock_patched" >&2
		return 1
	fi
	awk -v line="$line" '
		{ i = index($0, line); if (i) $0 = substr($0, 1, i - 1) "setInt64(sp + 8, nanotime());" }
		{ print }
		/^"use strict";$/ {
			print "let clockNs = 1e9;"
			print "let clockHost = NaN;"
			print "function nanotime() {"
			print "\tconst host = performance.now();"
			print "\tconst step = host - clockHost;"
			print "\tif (Number.isFinite(host) && !(host <= clockHost)) clockHost = host;"
			print "\tclockNs += step > 0 ? Math.max(1, Math.round(step * 1e6)) : 1;"
			print "\treturn clockNs;"
			print "}"
		}' "$1"
}

# go_wasm builds the Go main package $1 (a directory) into the wasm file
# $2 as the npm module's engine is built: GOOS=js GOARCH=wasm, the runtime
# without bounds checks and with Go's previous collector, then wasm-opt.
# With a third argument "names", the function names stay in (-ldflags
# without -s, wasm-opt -g), for tools/wasm-size.mjs.
go_wasm() {
	local pkg=$1 out=$2 ldflags="-s -w -buildid=" opt_flags=("${wasm_opt_flags[@]}")
	if [ "${3:-}" = names ]; then
		ldflags="-buildid="
		opt_flags+=(-g)
	fi
	(cd "$pkg" && GOEXPERIMENT=$go_experiment GOOS=js GOARCH=wasm go build -trimpath -buildvcs=false -gcflags=runtime=-B -ldflags="$ldflags" -o "$out.tmp" .)
	local wasm_opt=$repo_root/node_modules/binaryen/bin/wasm-opt key cached
	# wasm-opt comes with the devDependencies: a fresh clone installs them
	# once here (npm start builds before anything else ran).
	[ -f "$wasm_opt" ] || ensure_node_modules
	key=$(cat "$out.tmp" <(node -p "require('$repo_root/node_modules/binaryen/package.json').version") <(echo "${opt_flags[*]}") | sha256sum | cut -d' ' -f1)
	cached="$repo_root/.cache/wasm-opt/$key.wasm"
	if ! [ -f "$cached" ]; then
		mkdir -p "$repo_root/.cache/wasm-opt"
		node "$wasm_opt" "${opt_flags[@]}" "$out.tmp" -o "$cached.tmp"
		mv -f "$cached.tmp" "$cached"
	fi
	cp "$cached" "$out.tmp"
	mv -f "$out.tmp" "$out"
}

build_wasm() {
	log "wasm ($(go env GOVERSION), GOEXPERIMENT=$go_experiment)"
	go_wasm wasm "$repo_root/js/edgebloom.wasm"
	# wasm_exec.js must come from the GOROOT that compiled the wasm. It is
	# wrapped as a module whose "globalThis" is the parameter the caller
	# passes (a shadow of the real one), so it installs no globals: Go,
	# fs, process and path stay what they were.
	#
	# Go's clock is replaced (see clock_patched below).
	local src
	src="$(go env GOROOT)/lib/wasm/wasm_exec.js"
	{
		echo "// Generated by build.sh from $(go env GOVERSION)'s lib/wasm/wasm_exec.js. Do not edit."
		echo "/* eslint-disable */"
		echo "export function makeGo(globalThis) {"
		echo "const fs = { writeSync: (fd, buf) => globalThis.fs.writeSync(fd, buf) };"
		echo "const crypto = globalThis.crypto;"
		echo "const performance = globalThis.performance;"
		clock_patched "$src" | grep -v '^"use strict";$'
		echo "return globalThis.Go;"
		echo "}"
	} >js/wasm_exec.js.tmp
	# Renamed into place, so a test importing the module meanwhile never
	# reads half a file.
	mv -f js/wasm_exec.js.tmp js/wasm_exec.js
	local raw gz
	raw=$(wc -c <js/edgebloom.wasm)
	gz=$(gzip -9c js/edgebloom.wasm | wc -c)
	echo "js/edgebloom.wasm: $raw bytes, $gz gzipped (budget $max_raw, $max_gz)"
	echo "sha256: $(sha256sum js/edgebloom.wasm | cut -d' ' -f1)"
	if [ "$raw" -gt "$max_raw" ] || [ "$gz" -gt "$max_gz" ]; then
		echo "js/edgebloom.wasm is over its size budget" >&2
		return 1
	fi
}

# wasm_size prints what each function and package of the engine costs in
# the gzipped wasm, beyond an empty Go program built the same way (see the
# size budget above and tools/wasm-size.mjs).
wasm_size() {
	local dir
	dir=$(mktemp -d)
	mkdir -p "$dir/empty"
	printf 'package main\n\nfunc main() { select {} }\n' >"$dir/empty/main.go"
	(cd "$dir/empty" && GOWORK=off go mod init empty >/dev/null 2>&1)
	log "engine and an empty program, with function names"
	go_wasm wasm "$dir/engine.wasm" names
	go_wasm "$dir/empty" "$dir/empty.wasm" names
	node tools/wasm-size.mjs "$dir/engine.wasm" "$dir/empty.wasm" "${1:-60}"
	rm -rf "$dir"
}

# test_module runs the Go tests of module $1 (an entry of go_modules) and
# what else that module needs:
# - . (the library): also GOARCH=386 and GOOS=js GOARCH=wasm (twice: as
#   built by default, and with the runtime built as for the npm module),
#   a short fuzz run of every Fuzz target, and each benchmark run once.
# - urlkey (golang.org/x/net): also in js/wasm, where the Worker runs it,
#   and a short fuzz run.
# - redisfilter (go-redis): starts Debian's redis-server on 127.0.0.1
#   (setup installs it) and fails, never skips, without one.
# - colly (Colly and go-redis): crawls of a local site, one of them against
#   a real redis-server (about 30 s).
# - parquettest (parquet-go): writes Parquet files with edgebloom bitsets
#   and reads them back through the library's bloom-filter check, and the
#   other way round.
# - modtest: builds every published module (root, redisfilter, urlkey,
#   colly, cmd/edgebloom) as a consumer would: GOWORK=off, go get and go
#   install of v0.1.0 from a module proxy it writes from this checkout,
#   third-party modules from the module cache and, for what it lacks,
#   GOPROXY (about 50 s, most of it compiling the modules' dependencies once);
#   then the install steps of the README and of the Go examples' READMEs,
#   run by bash in a new module outside the checkout beside a link to it
#   at ../edgebloom (the replace lines a clone needs), and built: the
#   first run on a machine compiles arrow-go and parquet-go for minutes.
# - bench: its tests and benchmarks are compiled, not run (see bench/README.md).
# - worker: the Go front's handler tests on the host; test_worker_js runs
#   the Worker in workerd.
test_module() {
	local dir=$1 race=()
	module_has "$dir" race && race=(-race)
	if module_has "$dir" build; then
		log "go test: compile only ($dir)"
		(cd "$dir" && go build ./... && go test -count=1 -run '^$' ./... >/dev/null)
		return
	fi
	log "go test ($dir${race:+, race})"
	(cd "$dir" && go test "${race[@]}" -count=1 ./...)
	local wasm_path f
	wasm_path="$(go env GOROOT)/lib/wasm:$PATH"
	case $dir in
	.)
		log "go test (GOARCH=386)"
		GOARCH=386 go test -count=1 ./bloom/...
		log "go test (GOOS=js GOARCH=wasm, in node)"
		PATH="$wasm_path" GOOS=js GOARCH=wasm go test -count=1 ./bloom/...
		log "go test (GOOS=js GOARCH=wasm, runtime built as for the npm module)"
		PATH="$wasm_path" GOEXPERIMENT=$go_experiment GOOS=js GOARCH=wasm go test -count=1 -gcflags=runtime=-B ./bloom/...
		log "fuzz smoke"
		for f in $(go test -list 'Fuzz.*' ./bloom | grep '^Fuzz'); do
			go test -run '^$' -fuzz "^$f\$" -fuzztime 10s ./bloom
		done
		log "benchmarks compile and run once"
		go test -run '^$' -bench . -benchtime 1x ./bloom
		;;
	urlkey)
		log "go test (urlkey, GOOS=js GOARCH=wasm; fuzz smoke)"
		(cd urlkey && PATH="$wasm_path" GOOS=js GOARCH=wasm go test -count=1 . &&
			go test -run '^$' -fuzz '^FuzzCanonical$' -fuzztime 10s .)
		;;
	esac
}

# test_go: lint, then every module's tests, one after another.
test_go() {
	lint_go
	local entry dir
	for entry in "${go_modules[@]}"; do
		read -r dir _ <<<"$entry"
		module_has "$dir" example || test_module "$dir"
	done
}

# lint_js: ESLint's recommended rules (eslint.config.js) and prettier's
# formatting (.prettierrc.json, .prettierignore) over every JavaScript and
# TypeScript file.
lint_js() {
	log "eslint and prettier"
	ensure_node_modules
	node_modules/.bin/eslint .
	node_modules/.bin/prettier --check --log-level warn .
}

test_js() {
	log "node tests (js/test)"
	node --test --test-reporter=spec js/test/
}

test_e2e() {
	log "browser and workerd tests (e2e)"
	node --test --test-concurrency=1 --test-reporter=spec e2e/*.test.js
}

# The packed package in Node 20.19/22.12/26, Bun, Deno, Vercel's
# edge-runtime, Vite 7 and 8, webpack 5 and tsc (e2e/ecosystem/). About
# 30 s of mostly waiting on child processes and Chromium.
test_ecosystem() {
	log "ecosystem tests (e2e/ecosystem)"
	node --test --test-reporter=spec e2e/ecosystem/
}

# The Worker in workerd (Miniflare and wrangler dev); its Go handler tests
# run with the other modules' (test_module worker). The files run two at a
# time: dev.test.js spends a minute idle (on purpose: the service must
# survive it), and the others (Miniflare, and workerd killed mid-write) fill
# that minute. worker/build.sh makes their concurrent builds safe.
test_worker_js() {
	log "worker tests in workerd"
	node --test --test-concurrency=2 --test-reporter=spec worker/test/
}

# The examples (examples/): the npm ones against the package as users get
# it, packed here once (npm pack builds the wasm) and installed into a copy
# of each example by its test (examples/test/); the Go ones are modules of
# go.work marked "example" in go_modules, tested here rather than by
# test_go.
test_examples() {
	log "examples (examples/)"
	local pack status=0 entry dir
	pack=$(mktemp -d)
	npm pack --silent --pack-destination "$pack" >/dev/null || return
	EDGEBLOOM_TARBALL=$(echo "$pack"/edgebloom-*.tgz) node --test --test-concurrency=2 --test-reporter=spec examples/test/*.test.js || status=$?
	rm -rf "$pack"
	for entry in "${go_modules[@]}"; do
		read -r dir _ <<<"$entry"
		if module_has "$dir" example; then
			test_module "$dir" || status=$?
		fi
	done
	return "$status"
}

# example NAME: what "npm install && npm start" does in examples/NAME once
# edgebloom is on npm, with the package packed from this checkout instead
# (npm install --no-save leaves the example's package.json as it is).
run_example() {
	local dir=examples/$1 pack
	if ! [ -f "$dir/package.json" ]; then
		echo "build.sh: examples/$1 is no npm example; those are: $(cd examples && dirname -- */package.json | tr '\n' ' ')(a Go one runs with go run . in its directory)" >&2
		return 2
	fi
	pack=$(mktemp -d)
	npm pack --silent --pack-destination "$pack" >/dev/null
	(cd "$dir" && npm install --no-save --no-audit --no-fund "$(echo "$pack"/edgebloom-*.tgz)")
	rm -rf "$pack"
	cd "$dir" && exec npm start
}

test_e2e_and_worker() {
	test_e2e && test_worker_js
}

# beside BG FG runs the function BG in the background and FG in the
# foreground, prints BG's output after FG's, and fails when either failed.
beside() {
	local log pid status=0 bg_status=0
	log=$(mktemp)
	"$1" >"$log" 2>&1 &
	pid=$!
	"$2" || status=$?
	wait "$pid" || bg_status=$?
	cat "$log"
	rm -f "$log"
	[ "$status" -eq 0 ] && [ "$bg_status" -eq 0 ]
}

case "${1:-}" in
build) build_wasm ;;
wasm-size) wasm_size "${2:-}" ;;
clock-patch)
	# Rewrites the wasm_exec.js at the absolute path $2 in place with the
	# clock of clock_patched (worker/build.sh uses it on syumai/workers'
	# glue); a file patched already is left as it is.
	if ! grep -qF 'setInt64(sp + 8, nanotime());' "$2"; then
		clock_patched "$2" >"$2.tmp" || { rm -f "$2.tmp"; exit 1; }
		mv -f "$2.tmp" "$2"
	fi
	;;
deps) ensure_node_modules ;;
setup) setup ;;
demo)
	build_wasm
	exec node web-demo/serve.js
	;;
test-go) setup && test_go ;;
lint) lint_js ;;
lint-go) lint_go ;;
test-module) setup && test_module "${2:?usage: build.sh test-module DIR (an entry of go_modules)}" ;;
test-redis) setup && test_module redisfilter ;;
test-colly) setup && test_module colly ;;
test-parquet) test_module parquettest ;;
test-modules) test_module modtest ;;
test-js) setup && build_wasm && test_js ;;
test-e2e) setup && build_wasm && test_e2e ;;
test-ecosystem) setup && build_wasm && test_ecosystem ;;
test-worker) setup && build_wasm && test_module worker && test_worker_js ;;
test-examples) ensure_node_modules && ensure_system_packages && test_examples ;;
example) run_example "${2:?usage: build.sh example NAME (a directory of examples/)}" ;;
test)
	setup
	lint_js
	test_go
	build_wasm
	# The ecosystem suite mostly waits on child processes, so it runs beside
	# the Node tests; the examples run beside the e2e and workerd suites,
	# which spend much of their time waiting on Chromium, workerd and timers.
	beside test_ecosystem test_js
	beside test_examples test_e2e_and_worker
	;;
*)
	sed -n '2,/^set -euo/{/^#/p}' "$0" >&2
	exit 2
	;;
esac
