#!/usr/bin/env bash
# Bundles the program into one JavaScript file (dist/edge-gateway.bundle.js) that the plain
# `deno` binary runs with the daemon's permission set: the scratch-image layout used by tests
# where `deno compile` cannot fetch its runtime. First use fetches esbuild from npm.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/dist/edge-gateway.bundle.js}"
mkdir -p "$(dirname "$out")"
"${DENO:-deno}" bundle --quiet --platform deno -o "$out" "$root/main.ts"
echo "$out"
