#!/usr/bin/env bash
# Makes sure the browser test can run: Debian's chromium package (headless; no browser download).
# Run by scripts/test.sh before it enters the network namespace (apt needs the network), only for
# full runs: `--unit` runs skip the browser test and never install it.
#
# usage: install-chromium.sh [--check]
#   --check  only report whether it is missing (exit 1 if so), never install
# Idempotent (a no-op in a few ms when chromium is there) and safe to run concurrently.
set -euo pipefail

say() { echo "install-chromium: $*" >&2; }

present() { [ -x /usr/bin/chromium ]; }

check_only=0
[ "${1:-}" = --check ] && check_only=1

present && exit 0
if [ "$check_only" = 1 ] || [ "$(id -u)" != 0 ]; then
  say "missing Debian package: chromium"
  say "install it as root:  apt-get install --no-install-recommends chromium"
  exit 1
fi
exec 9>/var/lock/edge-chromium-install.lock
flock 9
present && exit 0 # another run installed it while we waited

# policy-rc.d exit code 101 = "action forbidden": no package may start a service.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
log="$(mktemp /tmp/edge-chromium-apt.XXXXXX.log)"
t0=$(date +%s%N)
say "installing chromium (log: $log)"
# refresh the package lists only when they are missing or older than 6 hours
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -360 2>/dev/null | head -1)" ]; then
  apt-get update -qq >>"$log" 2>&1 || { cat "$log" >&2; say "apt-get update failed"; exit 1; }
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
  >>"$log" 2>&1 || { cat "$log" >&2; say "apt-get install failed"; exit 1; }
say "installed in $((($(date +%s%N) - t0) / 1000000)) ms"
rm -f "$log"
present || { say "chromium still missing after install"; exit 1; }
