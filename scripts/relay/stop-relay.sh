#!/usr/bin/env bash
# Stops the relay that start-relay.sh started in DIR, by the pid files under DIR only, and only
# after checking that each pid really is that relay's process (pid files can be stale).
#
# usage: stop-relay.sh DIR [--mail-only] [--purge]
#   --mail-only  stop only Postfix and Dovecot (accounts, ports and the HTTP side stay;
#                start them again with start-relay.sh DIR --mail-only)
#   --purge      also delete DIR
# Each daemon leads its own process group (the Postfix and Dovecot masters daemonize, the node
# parts run under setsid); the whole group gets SIGTERM, so children go at once instead of being
# wound down by their master (Dovecot's takes ~1 s). Leftovers after 10 s get SIGKILL.
set -uo pipefail

die() {
  echo "stop-relay: $*" >&2
  exit 1
}
[ $# -ge 1 ] || die "usage: stop-relay.sh DIR [--mail-only] [--purge]"
[ -d "$1" ] || die "no such directory: $1"
DIR="$(cd "$1" && pwd)"
shift
PURGE=0 MAIL_ONLY=0
for arg in "$@"; do
  case "$arg" in
  --purge) PURGE=1 ;;
  --mail-only) MAIL_ONLY=1 ;;
  *) die "unknown option $arg" ;;
  esac
done

# proc_stat PID: sets STATE and PGRP from /proc/PID/stat (empty when the process is gone)
proc_stat() {
  local line=""
  STATE="" PGRP=""
  read -r line 2>/dev/null <"/proc/$1/stat" || return 0
  read -r STATE _ PGRP _ <<<"${line##*) }"
}
# running PID: exists and is no zombie (this machine's pid 1 reaps orphans late)
running() {
  proc_stat "$1"
  [ -n "$STATE" ] && [ "$STATE" != Z ]
}
# group_running PGID: some live process is still in that process group
group_running() {
  local f
  for f in /proc/[0-9]*; do
    proc_stat "${f#/proc/}"
    [ "$PGRP" = "$1" ] && [ "$STATE" != Z ] && return 0
  done
  return 1
}

names=() groups=()
# add NAME PIDFILE PATTERN: queue the pid's group when its command line matches PATTERN and
# it leads its process group
add() {
  [ -f "$2" ] || return 0
  local pid cmd
  pid="$(tr -dc 0-9 <"$2")"
  [ -n "$pid" ] && running "$pid" || return 0
  cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
  # shellcheck disable=SC2053 # PATTERN is a glob on purpose
  if [[ "$cmd" != $3 ]] || [ "$PGRP" != "$pid" ]; then
    echo "stop-relay: pid $pid in $2 is not this relay's $1 ($cmd); leaving it alone" >&2
    return 0
  fi
  names+=("$1") groups+=("$pid")
}
add postfix "$DIR/spool/postfix/pid/master.pid" "*master*-c $DIR/etc/postfix*"
add dovecot "$DIR/run/dovecot/master.pid" "*dovecot*-c $DIR/etc/dovecot.conf*"
if [ "$MAIL_ONLY" = 0 ]; then
  add http "$DIR/run/http.pid" "node *http.mjs $DIR/relay.json*"
  add filter "$DIR/run/filter.pid" "node *filter.mjs $DIR/run/filter.sock*"
fi

for g in "${groups[@]}"; do kill -TERM -- "-$g" 2>/dev/null; done
left=("${groups[@]}")
for _ in $(seq 500); do
  still=()
  for g in "${left[@]}"; do group_running "$g" && still+=("$g"); done
  left=("${still[@]}")
  [ "${#left[@]}" = 0 ] && break
  sleep 0.02
done
for i in "${!groups[@]}"; do
  if group_running "${groups[$i]}"; then
    kill -KILL -- "-${groups[$i]}" 2>/dev/null
    echo "stop-relay: killed ${names[$i]} (group ${groups[$i]}) after 10 s" >&2
  else
    echo "stopped ${names[$i]} (${groups[$i]})"
  fi
done
rm -f "$DIR/run/dovecot/master.pid" "$DIR/spool/postfix/pid/master.pid"
[ "$MAIL_ONLY" = 1 ] || rm -f "$DIR/run/http.pid" "$DIR/run/filter.pid"
if [ "$PURGE" = 1 ]; then
  rm -rf "$DIR" && echo "removed $DIR"
fi
exit 0
