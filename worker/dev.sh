#!/usr/bin/env bash
# Serves the Worker locally with wrangler dev on http://127.0.0.1:${PORT:-8787},
# its Durable Object state persisted under ${EDGEBLOOM_STATE:-worker/.wrangler/state}.
# The service's secret comes from EDGEBLOOM_TOKEN, and from the environment
# too, when set: EDGEBLOOM_TOKEN_PREVIOUS (the secret before a rotation,
# still accepted) and EDGEBLOOM_ALLOWED_ORIGINS (comma-separated origins
# whose pages may call the read endpoints; none by default). On a fresh clone it
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
vars=(--var "EDGEBLOOM_TOKEN:$EDGEBLOOM_TOKEN")
for name in EDGEBLOOM_TOKEN_PREVIOUS EDGEBLOOM_ALLOWED_ORIGINS; do
	if [ -n "${!name:-}" ]; then
		vars+=(--var "$name:${!name}")
	fi
done
exec ../node_modules/.bin/wrangler dev --ip 127.0.0.1 --port "${PORT:-8787}" --inspector-port 0 \
	--persist-to "$state" "${vars[@]}" "$@"
