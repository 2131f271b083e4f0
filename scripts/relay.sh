#!/usr/bin/env bash
# `deno task relay [DIR] [start-relay.sh options]`: runs a test relay by hand (default DIR
# ./.data/relay), prints its settings, and stops it again on Ctrl-C. Needs root.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/.data/relay"
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  DIR="$1"
  shift
fi
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
# a checkout path can be deep; unix sockets under DIR need a short path
if [ "${#DIR}" -gt 60 ]; then
  echo "relay.sh: $DIR is too long for the relay's unix sockets; give a short DIR, e.g. /tmp/relay" >&2
  exit 1
fi

"$ROOT/scripts/relay/start-relay.sh" "$DIR" "$@"
echo
echo "relay running in $DIR; use it with:  . $DIR/relay.env"
echo "register an account:  curl -s -X POST \"\$RELAY_NEW_URL\"    (Ctrl-C stops the relay)"
sleep infinity &
nap=$!
trap 'kill "$nap" 2>/dev/null; "$ROOT/scripts/relay/stop-relay.sh" "$DIR"; exit 0' INT TERM
wait "$nap"
