#!/usr/bin/env bash
# Starts a disposable chatmail-like relay for tests: Postfix (submission, SMTPS, MX), Dovecot
# (IMAP with STARTTLS, IMAPS, LMTP, SASL), the encryption filter and the HTTP side, all on
# loopback, with every file (config, TLS, queue, mailboxes, logs, pid files) under DIR.
#
# usage: start-relay.sh DIR [options]          (as root; blocks until every port answers)
#   --domain D             mail domain (default _relay.test)
#   --bind ADDR            loopback address to listen on (default 127.0.0.1)
#   --mail-host H          host name for autoconfig and dclogin URLs (default: ADDR)
#   --port-base N|auto     ports N+143 imap, N+993 imaps, N+587 submission, N+465 smtps, N+25 mx,
#                          N+80 http, N+443 https; "auto" (the default) picks a free N
#   --imap-port P  --imaps-port P  --submission-port P  --smtps-port P  --mx-port P
#   --http-port P  --https-port P                        set one port (beats --port-base)
#   --route DOMAIN=PORT    hand mail for DOMAIN to 127.0.0.1:PORT (another relay's MX); repeatable
#   --tls-cert F --tls-key F   use this certificate instead of generating a self-signed one
#   --no-filter            accept unencrypted mail (no chatmail encryption filter)
#   --no-chatmail-cap      do not advertise the XCHATMAIL IMAP capability
#   --no-header-cleanup    keep Received/User-Agent/Subject on submitted mail
#   --timeout S            readiness timeout in seconds (default 30)
#   --message-size-limit N largest mail in bytes Postfix and the filter accept, advertised in
#                          the SMTP SIZE extension (default 31457280, chatmail's 30 MiB)
#   --mail-only            (re)start only Postfix and Dovecot of the relay already set up in DIR
#                          (see stop-relay.sh --mail-only), keeping its ports and accounts
# On success prints DIR/relay.env and READY. DIR/relay.json holds the same facts as JSON.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
T0=$(date +%s%N)
die() {
  echo "start-relay: $*" >&2
  exit 1
}
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

[ $# -ge 1 ] && [ "${1#-}" = "$1" ] || die "usage: start-relay.sh DIR [options] (see the header of $0)"
DIR_ARG="$1"
shift

DOMAIN=_relay.test BIND=127.0.0.1 MAIL_HOST="" BASE=auto ROUTES="" TIMEOUT=30
IMAP_PORT="" IMAPS_PORT="" SUBMISSION_PORT="" SMTPS_PORT="" MX_PORT="" HTTP_PORT="" HTTPS_PORT=""
TLS_CERT="" TLS_KEY="" FILTER=1 CHATMAIL_CAP=1 HEADER_CLEANUP=1 MAIL_ONLY=0
MESSAGE_SIZE_LIMIT=31457280
while [ $# -gt 0 ]; do
  case "$1" in
  --domain | --bind | --mail-host | --port-base | --imap-port | --imaps-port | --submission-port | \
    --smtps-port | --mx-port | --http-port | --https-port | --route | --tls-cert | --tls-key | --timeout | --message-size-limit)
    [ $# -ge 2 ] || die "$1 needs a value"
    case "$1" in
    --domain) DOMAIN="$2" ;;
    --bind) BIND="$2" ;;
    --mail-host) MAIL_HOST="$2" ;;
    --port-base) BASE="$2" ;;
    --imap-port) IMAP_PORT="$2" ;;
    --imaps-port) IMAPS_PORT="$2" ;;
    --submission-port) SUBMISSION_PORT="$2" ;;
    --smtps-port) SMTPS_PORT="$2" ;;
    --mx-port) MX_PORT="$2" ;;
    --http-port) HTTP_PORT="$2" ;;
    --https-port) HTTPS_PORT="$2" ;;
    --route) ROUTES="${ROUTES:+$ROUTES,}$2" ;;
    --tls-cert) TLS_CERT="$2" ;;
    --tls-key) TLS_KEY="$2" ;;
    --timeout) TIMEOUT="$2" ;;
    --message-size-limit) MESSAGE_SIZE_LIMIT="$2" ;;
    esac
    shift 2
    ;;
  --no-filter) FILTER=0 && shift ;;
  --no-chatmail-cap) CHATMAIL_CAP=0 && shift ;;
  --no-header-cleanup) HEADER_CLEANUP=0 && shift ;;
  --mail-only) MAIL_ONLY=1 && shift ;;
  *) die "unknown option $1" ;;
  esac
done

[ "$(id -u)" = 0 ] || die "must run as root (the Postfix master needs it)"
mkdir -p "$DIR_ARG"
DIR="$(cd "$DIR_ARG" && pwd)"
chmod 755 "$DIR" # the postfix, dovecot and vmail users work below it
# unix socket paths are limited to 107 bytes; this is the longest one we create
longest="$DIR/run/dovecot/login/imap-urlauth"
[ "${#longest}" -lt 100 ] || die "DIR path too long for unix sockets (use a short path under /tmp): $DIR"
PF="$DIR/etc/postfix"

# shellcheck source=scripts/relay/lib.sh
. "$HERE/lib.sh"

if [ "$MAIL_ONLY" = 1 ]; then
  [ -f "$DIR/relay.env" ] || die "--mail-only needs a relay set up in $DIR (no relay.env there)"
  # shellcheck disable=SC1091
  . "$DIR/relay.env"
  load_relay_env
  pid_alive "$DIR/run/dovecot/master.pid" && die "Dovecot of $DIR is already running"
  start_mail
  wait_ready mail
  write_state
  echo "start-relay: mail restarted in $(ms_since "$T0") ms" >&2
  echo READY
  exit 0
fi

[[ "$MESSAGE_SIZE_LIMIT" =~ ^[1-9][0-9]*$ ]] || die "--message-size-limit must be a byte count"
case "$BIND" in 127.* | ::1) ;; *) die "refusing to listen on non-loopback address $BIND" ;; esac
[[ "$DOMAIN" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]*\.[A-Za-z0-9_-]+$ ]] || die "domain must be dotted: $DOMAIN"
{ [ -n "$TLS_CERT" ] && [ -n "$TLS_KEY" ]; } || { [ -z "$TLS_CERT" ] && [ -z "$TLS_KEY" ]; } ||
  die "--tls-cert and --tls-key go together"
: "${MAIL_HOST:=$BIND}"
if pid_alive "$DIR/run/dovecot/master.pid" || pid_alive "$DIR/run/http.pid"; then
  die "a relay already runs in $DIR (stop it with stop-relay.sh $DIR)"
fi

"$HERE/install-deps.sh"
for u in postfix dovecot; do # they reach sockets and files under DIR
  runuser -u "$u" -- test -x "$DIR" 2>/dev/null || die "user $u cannot enter $DIR (make its parents world-executable)"
done

# Ports: with "auto", a free base is chosen under a lock held until our daemons listen,
# so relays started side by side never pick the same ports.
exec 8>/tmp/.edge-relay-ports.lock
flock 8
choose_ports
make_layout
make_tls
write_dovecot_conf
write_postfix_conf
write_state
start_mail
start_node_parts
wait_ready all
flock -u 8
exec 8>&-
write_state
echo "RELAY_START_MS=$(ms_since "$T0")" >>"$DIR/relay.env"
cat "$DIR/relay.env"
echo READY
