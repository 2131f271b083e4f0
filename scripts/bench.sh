#!/usr/bin/env bash
# `deno task bench`: installs wrk (Debian), the relay's packages and the Delta Chat core if
# missing, then runs the benchmark driver (bench/run.ts) inside a loopback-only network + mount
# namespace set up like scripts/test.sh's (private /etc/hosts and resolv.conf, one test
# certificate trusted through DENO_CERT); writes BENCHMARKS.md.
#   BENCH_ONLY=e2e deno task bench     only the end-to-end messaging section (bench/e2e.ts)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
DENO="${DENO:-$(command -v deno)}"
# Same names as scripts/test.sh: inside the namespace they all resolve to 127.0.0.1.
TEST_DOMAINS="_relay.test _relay2.test _relay3.test"

# Inside the namespace (the same steps as scripts/test.sh's run_isolated; kept in sync by hand).
if [ "${EDGE_BENCH_IN_NS:-}" = 1 ]; then
  ip link set lo up
  RUN_DIR="$(mktemp -d /tmp/edge-bench.XXXXXX)"
  chmod 755 "$RUN_DIR"
  cleanup_run() {
    local d
    for d in "$RUN_DIR"/relay-*; do
      [ -f "$d/relay.env" ] && "$root/scripts/relay/stop-relay.sh" "$d" >/dev/null 2>&1
    done
    rm -rf "$RUN_DIR"
  }
  trap cleanup_run EXIT
  printf '127.0.0.1\tlocalhost %s\n::1\tlocalhost ip6-localhost\n' "$TEST_DOMAINS" >"$RUN_DIR/hosts"
  printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$RUN_DIR/resolv.conf"
  mount --bind "$RUN_DIR/hosts" /etc/hosts
  mount --bind "$RUN_DIR/resolv.conf" /etc/resolv.conf
  san="DNS:localhost,IP:127.0.0.1"
  for d in $TEST_DOMAINS; do san="$san,DNS:$d"; done
  mkdir "$RUN_DIR/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
    -subj "/CN=edge gateway bench" -addext "subjectAltName=$san" \
    -addext "basicConstraints=critical,CA:FALSE" -addext "keyUsage=critical,digitalSignature" \
    -addext "extendedKeyUsage=serverAuth" -keyout "$RUN_DIR/tls/key.pem" \
    -out "$RUN_DIR/tls/cert.pem" >/dev/null 2>&1
  export DENO_CERT="$RUN_DIR/tls/cert.pem" EDGE_TEST_TLS_CERT="$RUN_DIR/tls/cert.pem"
  export EDGE_TEST_TLS_KEY="$RUN_DIR/tls/key.pem" EDGE_TEST_DOMAINS="$TEST_DOMAINS"
  export EDGE_TEST_TMP="$RUN_DIR" # temp dirs and relays go here; cleanup_run stops what is left
  "$DENO" run -A --no-prompt bench/run.ts
  exit $?
fi

[ "$(id -u)" = 0 ] || { echo "bench.sh: needs root (packages, network namespace)" >&2; exit 1; }
if [ "${BENCH_ONLY:-}" != e2e ]; then
  command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
  command -v node >/dev/null || { echo "bench.sh: node is needed for the SSE client" >&2; exit 1; }
fi
scripts/relay/install-deps.sh
"$DENO" install --frozen --quiet
DENO="$DENO" bash scripts/install-deltachat.sh >/dev/null # the e2e baseline: Delta Chat core
exec unshare --net --mount --propagation private env EDGE_BENCH_IN_NS=1 DENO="$DENO" \
  bash "$root/scripts/bench.sh"
