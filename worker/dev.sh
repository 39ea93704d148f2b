#!/usr/bin/env bash
# Serves the Worker locally with wrangler dev on http://127.0.0.1:${PORT:-8787},
# its Durable Object state persisted under ${EDGEBLOOM_STATE:-worker/.wrangler/state}.
# Every EDGEBLOOM_* variable of the environment but EDGEBLOOM_STATE reaches
# the Worker as a var (--var NAME:VALUE): EDGEBLOOM_TOKEN, required, and the
# others of worker/README.md's Configuration when set (test/dev-vars.test.js
# checks that each one arrives). On a fresh clone it first installs the npm
# dependencies (wrangler); wrangler's build command (build.sh) then builds the
# Go front and the npm module's wasm.
set -euo pipefail
cd "$(dirname "$0")"
if [ -z "${EDGEBLOOM_TOKEN:-}" ]; then
	echo "dev.sh: set EDGEBLOOM_TOKEN to the bearer token clients must send" >&2
	exit 2
fi
bash ../build.sh deps >&2
export WRANGLER_SEND_METRICS=false
state=${EDGEBLOOM_STATE:-.wrangler/state}
echo "edgebloom worker: http://127.0.0.1:${PORT:-8787}, state in $(realpath -m "$state"); Ctrl-C stops it" >&2
vars=()
for name in $(compgen -e); do
	if [[ $name == EDGEBLOOM_* && $name != EDGEBLOOM_STATE && -n ${!name} ]]; then
		vars+=(--var "$name:${!name}")
	fi
done
if [ ! -f build/app.wasm ]; then
	echo "dev.sh: building the Worker (build.sh compiles the Go front on a first run, a few minutes on a fresh clone; wrangler answers once it is built)" >&2
fi
exec ../node_modules/.bin/wrangler dev --ip 127.0.0.1 --port "${PORT:-8787}" --inspector-port 0 \
	--persist-to "$state" "${vars[@]}" "$@"
