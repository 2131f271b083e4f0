#!/usr/bin/env bash
# Builds the self-contained gateway binaries with `deno compile`, baking in the daemon's
# permission set (scripts/permissions.sh) for the container paths:
#   dist/edge-gateway-x86_64-unknown-linux-gnu, dist/edge-gateway-aarch64-unknown-linux-gnu
# plus, beside each, the product's names as symlinks to it (the program reads argv[0]):
#   dist/privitty-edged-<target> (the daemon), dist/privitty-edge-<target> (the CLI)
#
# usage: ./compile.sh [--target x86_64-unknown-linux-gnu|aarch64-unknown-linux-gnu]
#
# deno compile needs the matching `denort` runtime. Offline builds: DENORT_BIN=/path/to/denort
# (one --target), or DENORT_BIN_X86_64 / DENORT_BIN_AARCH64 per target, or a cached
# $DENO_DIR/dl/release/v<version>/denort-<target>.zip. Otherwise it is downloaded from
# dl.deno.land; when none of these is available the build stops with a message saying so.
# DIST_DIR overrides the output directory (default dist/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/permissions.sh
. "$root/scripts/permissions.sh"
DENO="${DENO:-deno}"
DATA_DIR=/var/lib/privitty
FILES_DIR=/var/lib/privitty/files
all_targets=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu)

die() { echo "compile.sh: $*" >&2; exit 1; }

targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) targets+=("${2:?--target needs a value}"); shift 2 ;;
    --target=*) targets+=("${1#*=}"); shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  case " ${all_targets[*]} " in *" $t "*) ;; *) die "unsupported target $t (supported: ${all_targets[*]})" ;; esac
done
if [ -n "${DENORT_BIN:-}" ] && [ ${#targets[@]} -gt 1 ]; then
  die "DENORT_BIN is one runtime for one target: pass --target, or set DENORT_BIN_X86_64 / DENORT_BIN_AARCH64"
fi

command -v "$DENO" >/dev/null 2>&1 || die "deno not found (run through: npx --yes deno@2.9.5 task compile)"
version="$("$DENO" --version | head -n 1 | awk '{print $2}')"
deno_dir="$(NO_COLOR=1 "$DENO" info 2>/dev/null | sed -n 's/^DENO_DIR location: //p')"

# Prints the denort binary to use for target $1 (empty: let deno use its cache or download).
runtime_for() {
  local t="$1" var="DENORT_BIN_X86_64" bin
  [ "${t%%-*}" = aarch64 ] && var="DENORT_BIN_AARCH64"
  bin="${DENORT_BIN:-${!var:-}}"
  if [ -n "$bin" ]; then
    [ -f "$bin" ] && [ -x "$bin" ] || die "DENORT_BIN for $t is \"$bin\", which is not an executable file"
    printf '%s' "$bin"
    return
  fi
  local zip="$deno_dir/dl/release/v$version/denort-$t.zip"
  local url="https://dl.deno.land/release/v$version/denort-$t.zip"
  [ -n "$deno_dir" ] && [ -f "$zip" ] && return
  if command -v curl >/dev/null 2>&1 && curl -fsSI --max-time 5 "$url" >/dev/null 2>&1; then return; fi
  die "cannot get the Deno runtime (denort) for $t: it is not cached at $zip and $url is not reachable.
Provide it for an offline build with DENORT_BIN=/path/to/denort (built for $t, Deno $version),
or place denort-$t.zip at $zip, or build where dl.deno.land is reachable."
}

# The license signing keys the binary trusts (and only these): license-keys/*.pem, written into
# src/license/trusted_keys.ts, which the binary embeds like any other module.
"$DENO" run --no-prompt --allow-read="$root/license-keys,$root/src/license" \
  --allow-write="$root/src/license/trusted_keys.ts" "$root/scripts/license_keys.ts" ||
  die "cannot write src/license/trusted_keys.ts from license-keys/ (see above)"
grep -q '^    pem: ' "$root/src/license/trusted_keys.ts" ||
  echo "compile.sh: warning: license-keys/ holds no public key, so the binary accepts no license (docs/licenses.md, Trust boundary)" >&2

mapfile -t flags < <(daemon_permission_flags "$DATA_DIR" "$FILES_DIR")
dist="${DIST_DIR:-$root/dist}"
mkdir -p "$dist"
for t in "${targets[@]}"; do
  bin="$(runtime_for "$t")"
  out="$dist/edge-gateway-$t"
  echo "compile.sh: building $out (Deno $version${bin:+, runtime $bin})"
  DENORT_BIN="$bin" "$DENO" compile --target "$t" "${flags[@]}" --output "$out" "$root/main.ts"
  for name in privitty-edged privitty-edge; do
    ln -sfn "edge-gateway-$t" "$dist/$name-$t"
  done
done
