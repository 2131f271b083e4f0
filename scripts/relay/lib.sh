# Process and state helpers for start-relay.sh (sourced, not run): port choice, starting the
# daemons, the readiness wait, and DIR/relay.env + DIR/relay.json.
# shellcheck shell=bash disable=SC2154

# shellcheck source=scripts/relay/conf.sh
. "$HERE/conf.sh"

# pid_alive PIDFILE: true when the file names a running process.
pid_alive() {
  local pid
  [ -f "$1" ] && pid="$(tr -dc 0-9 <"$1")" && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}
pid_of() { [ -f "$1" ] && tr -dc 0-9 <"$1" || true; }
port_free() { ! (exec 3<>"/dev/tcp/$BIND/$1") 2>/dev/null; }

# Sets the seven port variables from --port-base (a number or "auto") and the per-port options.
choose_ports() {
  local want_imap="$IMAP_PORT" want_imaps="$IMAPS_PORT" want_sub="$SUBMISSION_PORT"
  local want_smtps="$SMTPS_PORT" want_mx="$MX_PORT" want_http="$HTTP_PORT" want_https="$HTTPS_PORT"
  local base tries=0 p busy
  while :; do
    if [ "$BASE" = auto ]; then
      base=$((10000 + RANDOM % 20000)) # below Linux's ephemeral range (32768+)
    else
      [[ "$BASE" =~ ^[0-9]+$ ]] && [ "$BASE" -ge 1 ] && [ "$BASE" -le 64542 ] || die "bad --port-base $BASE"
      base="$BASE"
    fi
    IMAP_PORT="${want_imap:-$((base + 143))}" IMAPS_PORT="${want_imaps:-$((base + 993))}"
    SUBMISSION_PORT="${want_sub:-$((base + 587))}" SMTPS_PORT="${want_smtps:-$((base + 465))}"
    MX_PORT="${want_mx:-$((base + 25))}" HTTP_PORT="${want_http:-$((base + 80))}"
    HTTPS_PORT="${want_https:-$((base + 443))}"
    busy=""
    for p in "$IMAP_PORT" "$IMAPS_PORT" "$SUBMISSION_PORT" "$SMTPS_PORT" "$MX_PORT" "$HTTP_PORT" "$HTTPS_PORT"; do
      port_free "$p" || busy="$busy $p"
    done
    [ -z "$busy" ] && return 0
    [ "$BASE" = auto ] || die "port(s) already in use on $BIND:$busy"
    tries=$((tries + 1))
    [ "$tries" -lt 50 ] || die "found no free port base after 50 tries (last busy:$busy)"
  done
}

# Starts Dovecot and the Postfix master; both daemonize. fd 8 (the port lock) is not inherited.
start_mail() {
  dovecot -c "$DIR/etc/dovecot.conf" </dev/null >>"$DIR/log/dovecot-start.log" 2>&1 8>&- || {
    tail -n 20 "$DIR/log/dovecot-start.log" "$DIR/log/dovecot.log" >&2 2>/dev/null
    die "Dovecot failed to start"
  }
  # "postfix check" creates the queue directories and validates the configuration; "master -w"
  # returns once the master is initialised ("postfix start" would add a slow integrity scan).
  { postfix -c "$PF" check && /usr/lib/postfix/sbin/master -c "$PF" -w; } \
    </dev/null >"$DIR/log/postfix-start.log" 2>&1 8>&- || {
    cat "$DIR/log/postfix-start.log" >&2
    stop_started
    die "Postfix failed to start"
  }
}

# Starts the HTTP side and, unless --no-filter, the encryption filter, each in its own session.
start_node_parts() {
  setsid node "$HERE/http.mjs" "$DIR/relay.json" </dev/null >>"$DIR/log/http.stderr" 2>&1 8>&- &
  echo $! >"$DIR/run/http.pid"
  if [ "$FILTER" = 1 ]; then
    setsid node "$HERE/filter.mjs" "$DIR/run/filter.sock" "$DIR/spool/postfix/public/reinject" \
      "$DIR/log/filter.log" "$MESSAGE_SIZE_LIMIT" </dev/null >>"$DIR/log/filter.stderr" 2>&1 8>&- &
    echo $! >"$DIR/run/filter.pid"
  fi
}

stop_started() { "$HERE/stop-relay.sh" "$DIR" >&2 || true; }

# wait_ready mail|all: every greeting, socket and /health answers, or stop everything and fail.
wait_ready() {
  local targets=("$BIND|$IMAP_PORT|* OK" "$BIND|$IMAPS_PORT|* OK|tls" "$BIND|$SUBMISSION_PORT|220"
    "$BIND|$SMTPS_PORT|220|tls" "$BIND|$MX_PORT|220" "unix:$DIR/run/dovecot/lmtp"
    "unix:$DIR/run/dovecot/auth-postfix")
  if [ "$1" = all ]; then
    targets+=("http://$BIND:$HTTP_PORT/health")
    [ "$FILTER" = 1 ] && targets+=("unix:$DIR/run/filter.sock")
  fi
  node "$HERE/probe.mjs" "$TIMEOUT" "${targets[@]}" 8>&- && return 0
  tail -n 20 "$DIR/log/dovecot.log" "$DIR/log/postfix.log" "$DIR/log/http.stderr" \
    "$DIR/log/filter.stderr" >&2 2>/dev/null || true
  stop_started
  die "relay in $DIR did not become ready"
}

# Writes DIR/relay.env (shell) and DIR/relay.json from the current settings and pid files.
write_state() {
  local origin="http://$MAIL_HOST:$HTTP_PORT"
  local pf_pid dc_pid http_pid filter_pid
  pf_pid="$(pid_of "$DIR/spool/postfix/pid/master.pid")"
  dc_pid="$(pid_of "$DIR/run/dovecot/master.pid")"
  http_pid="$(pid_of "$DIR/run/http.pid")"
  filter_pid="$(pid_of "$DIR/run/filter.pid")"
  {
    printf 'RELAY_%s=%q\n' DIR "$DIR" DOMAIN "$DOMAIN" BIND "$BIND" HOST "$MAIL_HOST" \
      IMAP_PORT "$IMAP_PORT" IMAPS_PORT "$IMAPS_PORT" SUBMISSION_PORT "$SUBMISSION_PORT" \
      SMTPS_PORT "$SMTPS_PORT" MX_PORT "$MX_PORT" HTTP_PORT "$HTTP_PORT" HTTPS_PORT "$HTTPS_PORT" \
      HTTP_ORIGIN "$origin" NEW_URL "$origin/new" NEW_URL_HTTPS "https://$MAIL_HOST:$HTTPS_PORT/new" \
      AUTOCONFIG_URL "$origin/.well-known/autoconfig/mail/config-v1.1.xml" \
      CERT "$DIR/tls/cert.pem" KEY "$DIR/tls/key.pem" MAILDIR "$DIR/mail" ROUTES "$ROUTES" \
      FILTER "$FILTER" CHATMAIL_CAP "$CHATMAIL_CAP" HEADER_CLEANUP "$HEADER_CLEANUP" \
      MESSAGE_SIZE_LIMIT "$MESSAGE_SIZE_LIMIT" POSTFIX_PID "$pf_pid" DOVECOT_PID "$dc_pid" HTTP_PID "$http_pid" FILTER_PID "$filter_pid"
  } >"$DIR/relay.env"
  cat >"$DIR/relay.json" <<EOF
{
  "dir": "$DIR",
  "domain": "$DOMAIN",
  "bind": "$BIND",
  "mailHost": "$MAIL_HOST",
  "imapPort": $IMAP_PORT,
  "imapsPort": $IMAPS_PORT,
  "submissionPort": $SUBMISSION_PORT,
  "smtpsPort": $SMTPS_PORT,
  "mxPort": $MX_PORT,
  "httpPort": $HTTP_PORT,
  "httpsPort": $HTTPS_PORT,
  "httpOrigin": "$origin",
  "newUrl": "$origin/new",
  "autoconfigUrl": "$origin/.well-known/autoconfig/mail/config-v1.1.xml",
  "certFile": "$DIR/tls/cert.pem",
  "keyFile": "$DIR/tls/key.pem",
  "mailDir": "$DIR/mail",
  "filter": $([ "$FILTER" = 1 ] && echo true || echo false),
  "pids": { "postfix": ${pf_pid:-null}, "dovecot": ${dc_pid:-null}, "http": ${http_pid:-null}, "filter": ${filter_pid:-null} }
}
EOF
}

# Maps the RELAY_* variables of a sourced relay.env back to start-relay.sh's settings.
load_relay_env() {
  DOMAIN="$RELAY_DOMAIN" BIND="$RELAY_BIND" MAIL_HOST="$RELAY_HOST" ROUTES="$RELAY_ROUTES"
  IMAP_PORT="$RELAY_IMAP_PORT" IMAPS_PORT="$RELAY_IMAPS_PORT" SUBMISSION_PORT="$RELAY_SUBMISSION_PORT"
  SMTPS_PORT="$RELAY_SMTPS_PORT" MX_PORT="$RELAY_MX_PORT" HTTP_PORT="$RELAY_HTTP_PORT"
  HTTPS_PORT="$RELAY_HTTPS_PORT" FILTER="$RELAY_FILTER" CHATMAIL_CAP="$RELAY_CHATMAIL_CAP"
  HEADER_CLEANUP="$RELAY_HEADER_CLEANUP" MESSAGE_SIZE_LIMIT="${RELAY_MESSAGE_SIZE_LIMIT:-31457280}"
}
