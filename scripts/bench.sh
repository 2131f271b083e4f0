#!/usr/bin/env bash
# `deno task bench`: installs wrk (Debian), the relay's packages and the Delta Chat core if
# missing, then runs the benchmark driver (bench/drivers/run.ts) inside a loopback-only network +
# mount namespace set up by scripts/isolation.sh, as the tests are; writes BENCHMARKS.md.
# bench/drivers/ runs and reports, bench/scenarios/ is what is measured, bench/baselines/ the
# servers and floors it is measured against.
#   BENCH_ONLY=e2e deno task bench     only the end-to-end messaging section (bench/scenarios/e2e.ts)
#   BENCH_ONLY=http deno task bench    only the HTTP throughput section, printed, not written
#   BENCH_ONLY=hostile-mail deno task bench   only the inbox flood of "Hostile load" (bench/scenarios/hostile_mail.ts)
#   BENCH_ONLY=groups deno task bench  only the group send against Delta Chat (bench/scenarios/groups.ts)
#   BENCH_ONLY=prv deno task bench     only the .prv container section (no relay, network or root)
#   BENCH_ONLY=hostile deno task bench only the hostile-load section (RSS under attack)
#   BENCH_ONLY=prv-stream deno task bench   only /stream through the daemon (bench/scenarios/prv_stream.ts)
#   BENCH_ONLY=p2p deno task bench     only the direct path over QUIC (bench/scenarios/p2p.ts)
#   BENCH_ONLY=send-rss deno task bench     only the sender's memory for large files (bench/scenarios/send_rss.ts)
#   BENCH_ONLY=large-mail deno task bench   only received-mail memory (bench/scenarios/large_mail.ts)
#   BENCH_ONLY=relay-parts deno task bench  only files as relay parts (bench/scenarios/relay_parts.ts)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# The deno binary: our parent when run by `deno task`, else one on PATH.
parent_exe="$(readlink "/proc/$PPID/exe" 2>/dev/null || true)"
[ "${parent_exe##*/}" = deno ] || parent_exe="$(command -v deno || true)"
DENO="${DENO:-$parent_exe}"
[ -x "$DENO" ] || { echo "bench.sh: no deno binary found (run it as: npx --yes deno@2.9.5 task bench)" >&2; exit 1; }
export DENO
# The container benchmark uses only WebCrypto and files in /tmp: no packages, no namespace.
if [ "${BENCH_ONLY:-}" = prv ] && [ "${EDGE_BENCH_IN_NS:-}" != 1 ]; then
  exec "$DENO" run -A --no-prompt --unstable-net bench/drivers/run.ts
fi
# shellcheck source=scripts/isolation.sh
. "$root/scripts/isolation.sh" # the tests' namespace set-up: enter_isolation

# Inside the namespace: the same isolation as the tests, then the benchmark driver.
if [ "${EDGE_BENCH_IN_NS:-}" = 1 ]; then
  enter_isolation edge-bench "edge gateway bench"
  "$DENO" run -A --no-prompt --unstable-net bench/drivers/run.ts
  exit $?
fi

[ "$(id -u)" = 0 ] || { echo "bench.sh: needs root (packages, network namespace)" >&2; exit 1; }
if [ "${BENCH_ONLY:-}" != e2e ] && [ "${BENCH_ONLY:-}" != hostile-mail ] &&
  [ "${BENCH_ONLY:-}" != groups ] && [ "${BENCH_ONLY:-}" != hostile ] &&
  [ "${BENCH_ONLY:-}" != prv-stream ] && [ "${BENCH_ONLY:-}" != p2p ] &&
  [ "${BENCH_ONLY:-}" != send-rss ] && [ "${BENCH_ONLY:-}" != large-mail ] &&
  [ "${BENCH_ONLY:-}" != relay-parts ]; then
  command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
  command -v node >/dev/null || { echo "bench.sh: node is needed for the SSE client" >&2; exit 1; }
fi
scripts/relay/install-deps.sh
"$DENO" install --frozen --quiet
DENO="$DENO" bash scripts/install-deltachat.sh >/dev/null # the e2e baseline: Delta Chat core
exec unshare --net --mount --propagation private env EDGE_BENCH_IN_NS=1 DENO="$DENO" \
  bash "$root/scripts/bench.sh"
