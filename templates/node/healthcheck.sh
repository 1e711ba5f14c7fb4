#!/bin/sh
# Exit 0 when the node answers MNCore.ping (GET {baseURL}/v2/monitor/ping), 1 otherwise.
# Used by Docker's HEALTHCHECK; also fine for monitoring agents and load balancers.
#   MEMBERKIT_HEALTH_URL   default http://127.0.0.1:8080/mn/v2/monitor/ping
#   MEMBERKIT_HEALTH_TIMEOUT seconds, default 5
set -eu
URL=${MEMBERKIT_HEALTH_URL:-http://127.0.0.1:8080/mn/v2/monitor/ping}
TIMEOUT=${MEMBERKIT_HEALTH_TIMEOUT:-5}

if command -v curl >/dev/null 2>&1; then
  exec curl --silent --show-error --fail --output /dev/null --max-time "$TIMEOUT" "$URL"
fi
# node:20-slim has no curl: Node's fetch does the same.
exec node -e '
const [url, seconds] = process.argv.slice(1);
fetch(url, { signal: AbortSignal.timeout(Number(seconds) * 1000) })
  .then((res) => { if (!res.ok) console.error(`ping answered ${res.status}`); process.exit(res.ok ? 0 : 1); })
  .catch((err) => { console.error(`ping failed: ${err.message}`); process.exit(1); });
' "$URL" "$TIMEOUT"
