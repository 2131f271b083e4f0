#!/usr/bin/env bash
# `deno task start`: runs the daemon from source with the production permission set
# (scripts/permissions.sh), for any data directory given.
#   start.sh [--port P] [--host H] [--data-dir D] [--files-dir F] [--cors]
#   start.sh [--listen HOST:PORT] [--accounts D] [--files-dir F] [--cors]   (the product's names)
#   … [--import-backup FILE]   (FILE, or EDGE_IMPORT_BACKUP's, becomes readable: docs/backup.md)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
# shellcheck source=scripts/permissions.sh
. "$here/permissions.sh"

caller_cwd="${INIT_CWD:-$PWD}"
abspath() { case "$1" in /*|'') printf '%s' "$1" ;; *) printf '%s/%s' "$caller_cwd" "$1" ;; esac; }
# EDGE_* wins over its PRIVITTY_* twin, as in src/config.ts.
data_dir="${EDGE_DATA_DIR:-${PRIVITTY_DATA_DIR:-/var/lib/privitty}}"
files_dir="${EDGE_FILES_DIR:-${PRIVITTY_FILES_DIR:-}}"
# --data-dir and its alias --accounts go to the daemon as given (made absolute), so giving both
# is the daemon's clear error; the first one names the directory the permissions allow.
dir_flags=()
args=()
import_backup="${EDGE_IMPORT_BACKUP:-${PRIVITTY_IMPORT_BACKUP:-}}"
while [ $# -gt 0 ]; do
  case "$1" in
    --data-dir|--accounts)
      [ $# -ge 2 ] || { args+=("$1"); shift; continue; }
      [ ${#dir_flags[@]} -gt 0 ] || data_dir="$2"
      dir_flags+=("$1" "$(abspath "$2")"); shift 2 ;;
    --data-dir=*|--accounts=*)
      [ ${#dir_flags[@]} -gt 0 ] || data_dir="${1#*=}"
      dir_flags+=("${1%%=*}" "$(abspath "${1#*=}")"); shift ;;
    --import-backup)
      [ $# -ge 2 ] || { args+=("$1"); shift; continue; }
      import_backup="$(abspath "$2")"; args+=("$1" "$import_backup"); shift 2 ;;
    --import-backup=*)
      import_backup="$(abspath "${1#*=}")"; args+=("--import-backup=$import_backup"); shift ;;
    --files-dir) files_dir="${2-}"; shift $(( $# >= 2 ? 2 : 1 )) ;;
    --files-dir=*) files_dir="${1#*=}"; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
data_dir="$(abspath "$data_dir")"
files_dir="$(abspath "${files_dir:-$data_dir/files}")"
[ ${#dir_flags[@]} -gt 0 ] || dir_flags=(--data-dir "$data_dir")
# The allow-lists name these paths, so they must exist before Deno starts.
mkdir -p -m 0700 "$data_dir" "$files_dir"

# License public keys trusted when run from source (docs/licenses.md#trust-boundary): absolute
# paths, readable.
# EDGE_LICENSE_TRUSTED_KEYS wins over its PRIVITTY_ twin, as in src/config.ts.
key_files="" keys_in="${EDGE_LICENSE_TRUSTED_KEYS:-${PRIVITTY_LICENSE_TRUSTED_KEYS:-}}"
if [ -n "$keys_in" ]; then
  IFS=',' read -ra key_list <<<"$keys_in"
  for k in "${key_list[@]}"; do
    k="${k#"${k%%[![:space:]]*}"}" && k="${k%"${k##*[![:space:]]}"}"
    [ -n "$k" ] && key_files="${key_files:+$key_files,}$(abspath "$k")"
  done
  export EDGE_LICENSE_TRUSTED_KEYS="$key_files"
fi

# glibc's allocator: map allocations of 4 MiB and more on their own, always, instead of raising the
# threshold to the largest block freed (its default behaviour), so a large mail's buffers go back to
# the system once collected rather than staying in the process's heap (BENCHMARKS.md "Inbox
# flood"). Not lower: at glibc's 128 KiB every 1 MiB read of /stream was mapped and unmapped anew
# (1 MiB /stream ratio 0.55-0.58 against 0.72-0.77 unset). The Dockerfile sets the same.
export MALLOC_MMAP_THRESHOLD_="${MALLOC_MMAP_THRESHOLD_:-4194304}"
# The API tokens file (docs/access.md), readable wherever it is; EDGE_* wins as in src/config.ts.
extra_reads="$key_files"
tokens_file="${EDGE_API_TOKENS_FILE:-${PRIVITTY_API_TOKENS_FILE:-}}"
[ -z "$tokens_file" ] || extra_reads="${extra_reads:+$extra_reads,}$tokens_file"
# A backup to restore at first start (--import-backup / EDGE_IMPORT_BACKUP, docs/backup.md): that
# one file is readable wherever it is; the restore itself writes only inside the data directory.
[ -z "$import_backup" ] || extra_reads="${extra_reads:+$extra_reads,}$import_backup"
mapfile -t flags < <(daemon_permission_flags "$data_dir" "$files_dir" "$extra_reads")
exec "${DENO:-deno}" run "${flags[@]}" "$root/main.ts" serve \
  "${dir_flags[@]}" --files-dir "$files_dir" ${args[@]+"${args[@]}"}
