#!/usr/bin/env bash
# `deno task bench`: installs wrk (Debian) and the relay's packages if missing, then runs the
# benchmark driver (bench/run.ts) inside a loopback-only network namespace; writes BENCHMARKS.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
DENO="${DENO:-$(command -v deno)}"
[ "$(id -u)" = 0 ] || { echo "bench.sh: needs root (packages, network namespace)" >&2; exit 1; }
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
command -v node >/dev/null || { echo "bench.sh: node is needed for the SSE client" >&2; exit 1; }
scripts/relay/install-deps.sh
"$DENO" install --frozen --quiet
exec unshare --net --mount --propagation private bash -c \
  'ip link set lo up && exec "$0" run -A --no-prompt bench/run.ts' "$DENO"
