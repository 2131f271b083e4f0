#!/usr/bin/env bash
# `deno task start`: runs the daemon from source with the production permission set
# (scripts/permissions.sh), for any data directory given.
#   start.sh [--port P] [--host H] [--data-dir D] [--files-dir F] [--cors]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
# shellcheck source=scripts/permissions.sh
. "$here/permissions.sh"

caller_cwd="${INIT_CWD:-$PWD}"
data_dir="${EDGE_DATA_DIR:-/var/lib/privitty}"
files_dir="${EDGE_FILES_DIR:-}"
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir) data_dir="$2"; shift 2 ;;
    --data-dir=*) data_dir="${1#*=}"; shift ;;
    --files-dir) files_dir="$2"; shift 2 ;;
    --files-dir=*) files_dir="${1#*=}"; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
abspath() { case "$1" in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$caller_cwd" "$1" ;; esac; }
data_dir="$(abspath "$data_dir")"
files_dir="$(abspath "${files_dir:-$data_dir/files}")"
# The allow-lists name these paths, so they must exist before Deno starts.
mkdir -p -m 0700 "$data_dir" "$files_dir"

# License public keys trusted when run from source (README "Licenses"): absolute paths, readable.
key_files=""
if [ -n "${EDGE_LICENSE_TRUSTED_KEYS:-}" ]; then
  IFS=',' read -ra key_list <<<"$EDGE_LICENSE_TRUSTED_KEYS"
  for k in "${key_list[@]}"; do
    k="${k#"${k%%[![:space:]]*}"}" && k="${k%"${k##*[![:space:]]}"}"
    [ -n "$k" ] && key_files="${key_files:+$key_files,}$(abspath "$k")"
  done
  export EDGE_LICENSE_TRUSTED_KEYS="$key_files"
fi

mapfile -t flags < <(daemon_permission_flags "$data_dir" "$files_dir" "$key_files")
exec "${DENO:-deno}" run "${flags[@]}" "$root/main.ts" serve \
  --data-dir "$data_dir" --files-dir "$files_dir" ${args[@]+"${args[@]}"}
