#!/usr/bin/env bash
# Test-runner install hook (runs before the network namespace): bundles once so that
# `deno bundle` has fetched its esbuild package from npm; later bundles work offline.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$root/scripts/bundle.sh" "$tmp/warmup.js" >/dev/null
