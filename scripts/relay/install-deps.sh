#!/usr/bin/env bash
# Makes sure the test relay can run: Debian packages postfix, dovecot-core, dovecot-imapd,
# dovecot-lmtpd and openssl (plus nodejs when node is absent), and a system user "vmail"; also
# faketime and libfaketime, for the clock-skew tests (a gateway or a certificate on another clock);
# iproute2, nftables and coturn (its STUN server) for the direct-path tests (tests/transport/p2p/).
#
# usage: install-deps.sh [--check]
#   --check  only report what is missing (exit 1 if anything is), never install
# Idempotent (a no-op in a few ms when everything is there) and safe to run concurrently.
# The system-wide postfix/dovecot services are never started: apt runs behind a policy-rc.d
# that refuses service starts.
set -euo pipefail

say() { echo "install-deps: $*" >&2; }

missing_packages() {
  local m=()
  [ -x /usr/sbin/postfix ] && [ -x /usr/lib/postfix/sbin/master ] || m+=(postfix)
  [ -x /usr/sbin/dovecot ] || m+=(dovecot-core)
  [ -x /usr/lib/dovecot/imap ] || m+=(dovecot-imapd)
  [ -x /usr/lib/dovecot/lmtp ] || m+=(dovecot-lmtpd)
  command -v openssl >/dev/null 2>&1 || m+=(openssl)
  command -v node >/dev/null 2>&1 || m+=(nodejs)
  command -v faketime >/dev/null 2>&1 || m+=(faketime)
  # the preload library, where Debian's multiarch layout puts it (tests/_helpers/faketime.ts)
  [ -e "/usr/lib/$(uname -m)-linux-gnu/faketime/libfaketime.so.1" ] || m+=(libfaketime)
  # the direct-path tests: namespaces and veth pairs, dropped UDP, NAT, a STUN server
  command -v ip >/dev/null 2>&1 || m+=(iproute2)
  command -v nft >/dev/null 2>&1 || m+=(nftables)
  command -v turnserver >/dev/null 2>&1 || m+=(coturn)
  echo "${m[*]:-}"
}

check_only=0
[ "${1:-}" = --check ] && check_only=1

missing="$(missing_packages)"
if [ -n "$missing" ]; then
  if [ "$check_only" = 1 ] || [ "$(id -u)" != 0 ]; then
    say "missing Debian packages: $missing"
    say "install them as root:  apt-get install --no-install-recommends $missing"
    exit 1
  fi
  exec 9>/var/lock/edge-relay-install-deps.lock
  flock 9
  missing="$(missing_packages)" # another run may have installed them while we waited
fi

if [ -n "$missing" ]; then
  # policy-rc.d exit code 101 = "action forbidden": the packages' postinst must not start daemons.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  log="$(mktemp /tmp/edge-relay-apt.XXXXXX.log)"
  t0=$(date +%s%N)
  say "installing: $missing (log: $log)"
  printf '%s\n' 'postfix postfix/main_mailer_type select No configuration' \
    'postfix postfix/mailname string localhost.localdomain' | debconf-set-selections
  # refresh the package lists only when they are missing or older than 6 hours
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -360 2>/dev/null | head -1)" ]; then
    apt-get update -qq >>"$log" 2>&1 || { cat "$log" >&2; say "apt-get update failed"; exit 1; }
  fi
  # shellcheck disable=SC2086 # word splitting of the package list is intended
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
    >>"$log" 2>&1 || { cat "$log" >&2; say "apt-get install failed"; exit 1; }
  say "installed in $((($(date +%s%N) - t0) / 1000000)) ms"
  rm -f "$log"
  missing="$(missing_packages)"
  [ -z "$missing" ] || { say "still missing after install: $missing"; exit 1; }
fi

if ! id vmail >/dev/null 2>&1; then
  if [ "$check_only" = 1 ] || [ "$(id -u)" != 0 ]; then
    say "missing system user vmail (as root: useradd --system --no-create-home --shell /usr/sbin/nologin vmail)"
    exit 1
  fi
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin vmail 2>/dev/null ||
    id vmail >/dev/null
fi
exit 0
