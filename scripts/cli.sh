#!/usr/bin/env bash
# `deno task cli [global options] <command> …`: the CLI from source with the narrowest permissions
# that let each command do what the compiled CLI does. Always: the network (the daemon's address
# is only known at run time), EDGE_URL/PRIVITTY_URL, EDGE_TOKEN/PRIVITTY_TOKEN, and what the device fingerprint needs
# (`fingerprint`, `view`: the MAC and /etc/machine-id). Besides, only what the arguments name:
#   --accounts DIR   read DIR (license status without a daemon, the stored fingerprint), and the
#                    license keys EDGE_LICENSE_TRUSTED_KEYS names, as the daemon run from source
#   --out F          write F (view); nothing else is writable
#   backup import FILE --data-dir D   read FILE, read and write D (the offline restore)
# Relative paths are taken from the caller's directory and passed on absolute.
#   serve …          runs the daemon: handed to scripts/start.sh (its production permission set)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

if [ "${1-}" = serve ]; then
  shift
  exec bash "$here/start.sh" "$@"
fi

caller_cwd="${INIT_CWD:-$PWD}"
abspath() { case "$1" in /* | '') printf '%s' "$1" ;; *) printf '%s/%s' "$caller_cwd" "$1" ;; esac; }

reads=(/etc/machine-id) writes=() args=()
env_allow="EDGE_URL,PRIVITTY_URL,EDGE_TOKEN,PRIVITTY_TOKEN,EDGE_BACKUP_PASSPHRASE,PRIVITTY_BACKUP_PASSPHRASE"
while [ $# -gt 0 ]; do
  case "$1" in
  --accounts | --out)
    [ $# -ge 2 ] || { args+=("$1") && shift && continue; } # the CLI says what is missing
    path="$(abspath "$2")"
    if [ "$1" = --accounts ]; then reads+=("$path"); else writes+=("$path"); fi
    args+=("$1" "$path") && shift 2
    ;;
  --accounts=* | --out=*)
    path="$(abspath "${1#*=}")"
    if [ "${1%%=*}" = --accounts ]; then reads+=("$path"); else writes+=("$path"); fi
    args+=("${1%%=*}=$path") && shift
    ;;
  --data-dir)
    [ $# -ge 2 ] || { args+=("$1") && shift && continue; }
    path="$(abspath "$2")" && reads+=("$path") && writes+=("$path")
    args+=("$1" "$path") && shift 2
    ;;
  --data-dir=*)
    path="$(abspath "${1#*=}")" && reads+=("$path") && writes+=("$path")
    args+=("--data-dir=$path") && shift
    ;;
  --) args+=("$@") && break ;;
  *) args+=("$1") && shift ;;
  esac
done

# `backup import FILE`: FILE is read (made absolute like the other paths).
if [ "${args[0]-}" = backup ] && [ "${args[1]-}" = import ] && [ -n "${args[2]-}" ]; then
  args[2]="$(abspath "${args[2]}")" && reads+=("${args[2]}")
fi

# With a data directory to read offline: the license keys trusted when run from source
# (docs/licenses.md#trust-boundary), as scripts/start.sh grants them to the daemon.
keys_in="${EDGE_LICENSE_TRUSTED_KEYS:-${PRIVITTY_LICENSE_TRUSTED_KEYS:-}}"
if [ ${#reads[@]} -gt 1 ] && [ -n "$keys_in" ]; then
  key_files=""
  IFS=',' read -ra key_list <<<"$keys_in"
  for k in "${key_list[@]}"; do
    k="${k#"${k%%[![:space:]]*}"}" && k="${k%"${k##*[![:space:]]}"}"
    [ -n "$k" ] && k="$(abspath "$k")" && reads+=("$k") && key_files="${key_files:+$key_files,}$k"
  done
  export EDGE_LICENSE_TRUSTED_KEYS="$key_files"
  env_allow="$env_allow,EDGE_LICENSE_TRUSTED_KEYS"
fi

join() {
  local IFS=,
  printf '%s' "$*"
}
flags=(--no-prompt --allow-net "--allow-env=$env_allow" --allow-sys=networkInterfaces
  "--allow-read=$(join "${reads[@]}")")
[ ${#writes[@]} -eq 0 ] || flags+=("--allow-write=$(join "${writes[@]}")")
exec "${DENO:-deno}" run "${flags[@]}" "$root/main.ts" ${args[@]+"${args[@]}"}
