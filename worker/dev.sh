#!/usr/bin/env bash
# Serves the Worker locally with wrangler dev on http://127.0.0.1:${PORT:-8787},
# its Durable Object state persisted under ${EDGEBLOOM_STATE:-worker/.wrangler/state}.
# The token clients must send comes from EDGEBLOOM_TOKEN. On a fresh clone it
# first installs the npm dependencies (wrangler); wrangler's build command
# (build.sh) then builds the Go front and the npm module's wasm.
set -euo pipefail
cd "$(dirname "$0")"
if [ -z "${EDGEBLOOM_TOKEN:-}" ]; then
	echo "dev.sh: set EDGEBLOOM_TOKEN to the bearer token clients must send" >&2
	exit 2
fi
bash ../build.sh deps >&2
export WRANGLER_SEND_METRICS=false
state=${EDGEBLOOM_STATE:-.wrangler/state}
echo "edgebloom worker: http://127.0.0.1:${PORT:-8787}, state in $(realpath -m "$state")" >&2
exec ../node_modules/.bin/wrangler dev --ip 127.0.0.1 --port "${PORT:-8787}" --inspector-port 0 \
	--persist-to "$state" --var "EDGEBLOOM_TOKEN:$EDGEBLOOM_TOKEN" "$@"
