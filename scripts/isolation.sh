# Sourced by scripts/test.sh and scripts/bench.sh once they run inside their loopback-only
# network + mount namespace: `enter_isolation PREFIX CN` brings loopback up, makes a run dir
# (/tmp/PREFIX.XXXXXX) with a private /etc/hosts mapping TEST_DOMAINS to 127.0.0.1 and a
# resolv.conf pointing nowhere, one test TLS certificate trusted through DENO_CERT, and exports
# what tests/_helpers expect (EDGE_TEST_*); on exit `cleanup_run` stops relays left in the run
# dir by their pid files and removes it.

# Names tests and benchmarks may use for relays; inside the namespace they resolve to 127.0.0.1.
TEST_DOMAINS="_relay.test _relay2.test _relay3.test"
ISOLATION_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

isolation_die() {
  echo "isolation: $*" >&2
  exit 1
}

cleanup_run() {
  local d
  for d in "$RUN_DIR"/relay-*; do
    [ -f "$d/relay.env" ] && "$ISOLATION_ROOT/scripts/relay/stop-relay.sh" "$d" >/dev/null 2>&1
  done
  rm -rf "$RUN_DIR"
}

enter_isolation() {
  local prefix="$1" cn="$2" san="DNS:localhost,IP:127.0.0.1" d
  ip link set lo up
  RUN_DIR="$(mktemp -d "/tmp/$prefix.XXXXXX")"
  chmod 755 "$RUN_DIR"
  trap cleanup_run EXIT
  printf '127.0.0.1\tlocalhost %s\n::1\tlocalhost ip6-localhost\n' "$TEST_DOMAINS" >"$RUN_DIR/hosts"
  printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"$RUN_DIR/resolv.conf"
  mount --bind "$RUN_DIR/hosts" /etc/hosts || isolation_die "cannot bind-mount a private /etc/hosts"
  mount --bind "$RUN_DIR/resolv.conf" /etc/resolv.conf ||
    isolation_die "cannot bind-mount a private /etc/resolv.conf"
  for d in $TEST_DOMAINS; do san="$san,DNS:$d"; done
  mkdir "$RUN_DIR/tls"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
    -subj "/CN=$cn" -addext "subjectAltName=$san" \
    -addext "basicConstraints=critical,CA:FALSE" -addext "keyUsage=critical,digitalSignature" \
    -addext "extendedKeyUsage=serverAuth" -keyout "$RUN_DIR/tls/key.pem" \
    -out "$RUN_DIR/tls/cert.pem" >/dev/null 2>&1 ||
    isolation_die "openssl could not create the test certificate"
  export DENO_CERT="$RUN_DIR/tls/cert.pem" EDGE_TEST_TLS_CERT="$RUN_DIR/tls/cert.pem"
  export EDGE_TEST_TLS_KEY="$RUN_DIR/tls/key.pem" EDGE_TEST_DOMAINS="$TEST_DOMAINS"
  export EDGE_TEST_TMP="$RUN_DIR" # tests/_helpers/temp.ts puts every temp dir (and relay) here
}
