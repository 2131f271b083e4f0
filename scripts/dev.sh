#!/usr/bin/env bash
# `deno task dev [--local-relay] [serve options]`: local development run with the production
# permission set: data in ./.data/gateway, EDGE_PROFILE defaulting to "dev", CORS on. With
# --local-relay the project's own relay starts first on loopback (needs root, installs
# postfix/dovecot on first use) and the gateway registers there; it is stopped on exit.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
cd "$root"
local_relay=0
args=()
for a in "$@"; do
  if [ "$a" = --local-relay ]; then local_relay=1; else args+=("$a"); fi
done
export EDGE_PROFILE="${EDGE_PROFILE:-dev}"
mkdir -p .data
if [ "$local_relay" = 1 ]; then
  relay_dir="$root/.data/relay"
  "$here/relay/start-relay.sh" "$relay_dir" >/dev/null
  trap '"$here/relay/stop-relay.sh" "$relay_dir" >/dev/null 2>&1 || true' EXIT
  # shellcheck disable=SC1091
  . "$relay_dir/relay.env"
  export EDGE_SERVER="http://127.0.0.1:${RELAY_HTTP_PORT}" DENO_CERT="${RELAY_CERT}"
  echo "dev: local relay at $EDGE_SERVER (domain ${RELAY_DOMAIN}), trusted through DENO_CERT" >&2
fi
# Not exec: the EXIT trap must run to stop the relay.
bash "$here/start.sh" --data-dir "$root/.data/gateway" --cors ${args[@]+"${args[@]}"}
