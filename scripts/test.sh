#!/usr/bin/env bash
# Hermetic test runner behind `deno task test`: installs what the tests need, re-runs itself in a
# loopback-only network + mount namespace, runs `deno test`, and ends with "N passed, N failed".
#
# usage: deno task test [--unit] [deno test arguments...]
#   deno task test                      static checks (deno fmt --check, deno lint, deno check),
#                                       then every test, isolated (root; installs Postfix/Dovecot)
#   deno task test tests/rpc            only these paths; other arguments go to `deno test` as-is
#   deno task test --filter "relay"     (no path given: tests/)
#   deno task test --unit tests/cli     quick run: no relay tests (they count as skipped), no namespace
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DENO_VERSION=2.9.5
# shellcheck source=scripts/isolation.sh
. "$ROOT/scripts/isolation.sh" # TEST_DOMAINS, enter_isolation, cleanup_run
# shellcheck source=scripts/permissions.sh
. "$ROOT/scripts/permissions.sh" # DAEMON_*_FLAGS: the tests run with the daemon's runtime flags

die() {
  echo "test.sh: $*" >&2
  exit 1
}

# The deno binary: our parent when run by `deno task`, else one on PATH, else the npm one.
find_deno() {
  local parent
  parent="$(readlink "/proc/$PPID/exe" 2>/dev/null || true)"
  if [ "${parent##*/}" = deno ]; then
    echo "$parent"
  elif command -v deno >/dev/null 2>&1; then
    command -v deno
  else
    npx --yes "deno@$DENO_VERSION" eval 'console.log(Deno.execPath())' 2>/dev/null
  fi
}

# ---- hook: tools that are not imports of deno.json ----------------------------------------------
# Every scripts/install-*.sh runs once here, outside the namespace (it has no network): e.g. the
# esbuild download of `deno bundle`, the Delta Chat core from npm into .tools/ (gitignored).
install_npm_tools() {
  local f
  for f in "$ROOT"/scripts/install-*.sh; do
    [ -e "$f" ] || continue
    DENO="$DENO" bash "$f" || die "install step $f failed"
  done
}
# --------------------------------------------------------------------------------------------------

# ---- static checks: a full run (no arguments, as the README and CI run it) starts with them ----
# Each failing check counts as one failure in the closing summary (EDGE_STATIC_FAILED).
run_static_checks() {
  local out failed=0 results=() name
  out="$(mktemp /tmp/edge-static.XXXXXX.log)"
  # deno check covers what `deno task check` covers: every TypeScript file (bench/ included).
  local -a checks=("fmt --check" "lint" "check main.ts src/ license_server/ tests/ bench/ scripts/")
  for name in "${checks[@]}"; do
    # shellcheck disable=SC2086 # the check's words are meant to split
    if NO_COLOR=1 "$DENO" $name >"$out" 2>&1; then
      results+=("deno ${name%% *} ok")
    else
      cat "$out"
      results+=("deno ${name%% *} FAILED")
      failed=$((failed + 1))
    fi
  done
  rm -f "$out"
  local IFS=","
  echo "static checks:${results[*]/#/ }"
  EDGE_STATIC_FAILED="$failed"
}

# Runs deno test with the given arguments (tests/ when no path is among them), tees its output
# into $1, prints the summary line (static check failures counted) and exits with the verdict.
run_deno_test() {
  local log="$1" arg has_path=0 rc=0 summary passed failed ignored
  shift
  for arg in "$@"; do [ -e "$arg" ] && has_path=1; done
  [ "$has_path" = 1 ] || set -- "$@" tests/
  NO_COLOR=1 "$DENO" test -A --no-prompt "$DAEMON_UNSTABLE_FLAGS" "$DAEMON_V8_FLAGS" "$@" 2>&1 | tee "$log" || rc="${PIPESTATUS[0]}"
  # Deno's closing line: "ok | 3 passed (2 steps) | 0 failed | 1 ignored (10ms)" or "FAILED | ..."
  summary="$(grep -E '^(ok|FAILED) \| [0-9]+ passed' "$log" | tail -n 1 || true)"
  local static_failed="${EDGE_STATIC_FAILED:-0}"
  if [ "$static_failed" -gt 0 ]; then
    echo "test.sh: $static_failed static check(s) failed (see \"static checks:\" above)"
  fi
  if [ -z "$summary" ]; then
    echo "test.sh: deno test exited with $rc and printed no summary (see the errors above)"
    echo "0 passed, $((1 + static_failed)) failed"
    exit 1
  fi
  passed="$(sed -E 's/.*\| ([0-9]+) passed.*/\1/' <<<"$summary")"
  failed="$(sed -E 's/.*\| ([0-9]+) failed.*/\1/' <<<"$summary")"
  ignored="$(grep -oE '[0-9]+ ignored' <<<"$summary" | cut -d' ' -f1 || true)"
  if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
    echo "test.sh: deno test exited with $rc although no test failed; counting that as a failure"
    failed=1
  fi
  failed=$((failed + static_failed))
  if [ "${ignored:-0}" -gt 0 ]; then
    echo "$passed passed, $failed failed, $ignored skipped"
  else
    echo "$passed passed, $failed failed"
  fi
  [ "$failed" = 0 ] && [ "$rc" = 0 ]
}

# Inside the namespace (scripts/isolation.sh), then the tests; relays left behind are stopped.
run_isolated() {
  enter_isolation edge-test "edge gateway tests"
  run_deno_test "$RUN_DIR/deno-test.log" "$@"
}

if [ "${EDGE_TEST_IN_NS:-}" = 1 ]; then
  run_isolated "$@"
  exit $?
fi

FULL_RUN=0
[ "$*" = "" ] || [ "$*" = --unit ] && FULL_RUN=1
UNIT=0
args=()
for arg in "$@"; do
  if [ "$arg" = --unit ]; then UNIT=1; else args+=("$arg"); fi
done
DENO="${DENO:-$(find_deno)}"
[ -x "$DENO" ] || die "no deno binary found (run this through: npx --yes deno@$DENO_VERSION task test)"
export DENO

if [ "$UNIT" = 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    scripts/relay/install-deps.sh --check || true # names the missing packages, if any
    scripts/browser/install-chromium.sh --check || true
    die "the tests run as root: they need a private network namespace (unshare --net --mount) and their own Postfix/Dovecot; use --unit for a quick run without relay tests"
  fi
  unshare --net --mount true 2>/dev/null ||
    die "unshare --net --mount failed: this machine does not allow network namespaces; refusing to run the tests un-isolated"
  scripts/relay/install-deps.sh
  scripts/browser/install-chromium.sh # the browser test (skipped by --unit runs)
fi
"$DENO" install --frozen --quiet || die "deno install --frozen failed: is deno.lock up to date?"
install_npm_tools
EDGE_STATIC_FAILED=0
[ "$FULL_RUN" = 1 ] && run_static_checks
export EDGE_STATIC_FAILED

if [ "$UNIT" = 1 ]; then
  export EDGE_TEST_NO_RELAY=1
  log="$(mktemp /tmp/edge-unit.XXXXXX.log)"
  trap 'rm -f "$log"' EXIT
  run_deno_test "$log" "${args[@]}"
  exit $?
fi

exec unshare --net --mount --propagation private env EDGE_TEST_IN_NS=1 bash "$ROOT/scripts/test.sh" "${args[@]}"
