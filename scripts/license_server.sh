#!/usr/bin/env bash
# `deno task license-server <command> --data-dir D [options]`: the project's license server
# (license_server/main.ts) with read/write limited to its data directory; only `serve`
# gets network access.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
caller_cwd="${INIT_CWD:-$PWD}"
abspath() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$caller_cwd" "$1" ;; esac; }

args=() data_dir="" command=""
while [ $# -gt 0 ]; do
  case "$1" in
  --data-dir) [ $# -ge 2 ] || { echo "license-server: --data-dir needs a value" >&2; exit 2; }
    data_dir="$(abspath "$2")" && args+=(--data-dir "$data_dir") && shift 2 ;;
  --data-dir=*) data_dir="$(abspath "${1#*=}")" && args+=(--data-dir "$data_dir") && shift ;;
  -*) args+=("$1") && shift ;;
  *) [ -n "$command" ] || command="$1"; args+=("$1") && shift ;;
  esac
done
perms=(--no-prompt)
if [ -n "$data_dir" ]; then
  mkdir -p -m 0700 "$data_dir"
  perms+=("--allow-read=$data_dir" "--allow-write=$data_dir")
fi
[ "$command" = serve ] && perms+=(--allow-net)
exec "${DENO:-deno}" run "${perms[@]}" "$root/license_server/main.ts" ${args[@]+"${args[@]}"}
