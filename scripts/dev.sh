#!/usr/bin/env bash
# `deno task dev [--local-relay] [--gateways N] [serve options]`: local development run with the
# production permission set. Data in ./.data (EDGE_DEV_DIR overrides), EDGE_PROFILE "dev" (gateway
# N > 1: "dev-N"), listening on 127.0.0.1 unless --host/--listen says otherwise, CORS only with
# --cors. --local-relay starts the project's own relay on loopback first (root; Debian's postfix
# and dovecot on first use), on the same ports as last time, so a restarted gateway finds it.
# --gateways N starts N gateways on consecutive ports from --port (default 7200) and joins them
# to each other by SecureJoin before printing their URLs. A license server runs on --port + 100;
# the gateways trust its key and activate a dev license from it. Ctrl-C stops everything it started.
# When the gateways answer it prints, per gateway, its URL and address and its chat id with each
# other gateway, then "dev: ready".
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
cd "$root"

die() {
  echo "dev: $*" >&2
  exit 1
}

usage() {
  cat <<'EOF'
usage: deno task dev [--local-relay] [--gateways N] [--port P] [serve options]

Local development run: N gateways (default 1) from source with the production permission set,
data in ./.data (EDGE_DEV_DIR overrides), listening on 127.0.0.1, each with a dev license from
the project's license server on port P + 100. It prints each gateway's URL, address and chat ids
with the others, then "dev: ready". Ctrl-C stops everything it started.

  --local-relay   start the project's own relay on loopback first (root: runs its own Postfix
                  and Dovecot; installs Debian's packages on first use)
  --gateways N    N gateways on ports P, P+1, ..., joined to each other by SecureJoin (1-99)
  --port P        the first gateway's port (default 7200)
  -h, --help      this text; starts nothing
Other options go to every gateway (deno task start's: --host, --listen, --cors, --files-dir;
run `deno task start --help` for them).
EOF
}

local_relay=0 gateways=1 port=7200 host_given=0
args=()
while [ $# -gt 0 ]; do
  case "$1" in
  -h | --help) usage && exit 0 ;;
  --local-relay) local_relay=1 && shift ;;
  --gateways) [ $# -ge 2 ] || die "--gateways needs a number" && gateways="$2" && shift 2 ;;
  --gateways=*) gateways="${1#*=}" && shift ;;
  --port) [ $# -ge 2 ] || die "--port needs a number" && port="$2" && shift 2 ;;
  --port=*) port="${1#*=}" && shift ;;
  --host | --host=* | --listen | --listen=*) host_given=1 && args+=("$1") && shift ;;
  *) args+=("$1") && shift ;;
  esac
done
[[ "$gateways" =~ ^[1-9][0-9]?$ ]] || die "--gateways must be a number from 1 to 99, got '$gateways'"
[[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ $((port + gateways - 1)) -le 65535 ] ||
  die "--port must leave room for $gateways port(s) below 65536, got '$port'"
if [ "$gateways" -gt 1 ]; then
  for a in ${args[@]+"${args[@]}"}; do
    case "$a" in --listen | --listen=* | --data-dir* | --accounts*)
      die "$a cannot be combined with --gateways (each gateway gets its own port and data dir)" ;;
    esac
  done
fi
[ "$host_given" = 1 ] || args+=(--host 127.0.0.1)

state="${EDGE_DEV_DIR:-$root/.data}"
mkdir -p "$state"
state="$(cd "$state" && pwd)"
pids=()
relay_dir=""
stop_all() {
  local pid
  # Once: a terminal's Ctrl-C reaches this shell more than once (from the terminal, then
  # forwarded by `deno task`), and a later INT would end the shell here, before the relay is
  # stopped. Children started from here on (stop-relay.sh) inherit the ignored signals.
  # (The INT and TERM traps ignore them already; this covers the other ways out, e.g. die.)
  trap '' INT TERM
  for pid in ${pids[@]+"${pids[@]}"}; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in ${pids[@]+"${pids[@]}"}; do wait "$pid" 2>/dev/null || true; done
  pids=()
  if [ -n "$relay_dir" ]; then
    "$here/relay/stop-relay.sh" "$relay_dir" >/dev/null 2>&1 || true
    relay_dir=""
  fi
}
trap stop_all EXIT
# Each ignores further signals before it exits: the EXIT trap must not be cut short (stop_all).
trap 'trap "" INT TERM; exit 130' INT
trap 'trap "" INT TERM; exit 143' TERM

if [ "$local_relay" = 1 ]; then
  [ "$(id -u)" = 0 ] || die "--local-relay needs root (it runs its own Postfix and Dovecot); see README 'Local development'"
  relay_opts=()
  if [ -f "$state/relay/relay.env" ]; then
    # Same ports as the last run: the gateways stored them at provisioning.
    # shellcheck disable=SC1091
    . "$state/relay/relay.env"
    relay_opts=(--imap-port "$RELAY_IMAP_PORT" --imaps-port "$RELAY_IMAPS_PORT"
      --submission-port "$RELAY_SUBMISSION_PORT" --smtps-port "$RELAY_SMTPS_PORT"
      --mx-port "$RELAY_MX_PORT" --http-port "$RELAY_HTTP_PORT" --https-port "$RELAY_HTTPS_PORT")
    "$here/relay/stop-relay.sh" "$state/relay" >/dev/null 2>&1 || true # a relay left by a kill -9
  fi
  relay_dir="$state/relay" # set first: Ctrl-C during the start stops what did start
  "$here/relay/start-relay.sh" "$state/relay" ${relay_opts[@]+"${relay_opts[@]}"} >/dev/null ||
    die "the local relay did not start (see the messages above; ports of the last run busy? remove $state/relay to start afresh, which also forgets the gateways' accounts)"
  # shellcheck disable=SC1091
  . "$relay_dir/relay.env"
  export EDGE_SERVER="http://127.0.0.1:${RELAY_HTTP_PORT}" DENO_CERT="${RELAY_CERT}"
  echo "dev: local relay at $EDGE_SERVER (domain ${RELAY_DOMAIN}), trusted through DENO_CERT" >&2
fi

# License: the project's license server on --port + 100 (7300), its key trusted by the gateways
# (run from source), and one dev license they activate at start unless EDGE_LICENSE_URL is set.
# Each gateway is its own installation (docs/identity.md) and takes a seat: 16 seats cover any
# --gateways a development box runs, also when a later run asks for more than the first.
lic_dir="$state/license-server"
lic_port=$((port + 100))
bash "$here/license_server.sh" serve --data-dir "$lic_dir" --port "$lic_port" >/dev/null &
pids+=("$!")
lic_up() { (exec 3<>"/dev/tcp/127.0.0.1/$lic_port") 2>/dev/null; }
for _ in $(seq 1 100); do lic_up && break || sleep 0.1; done
lic_up || die "the license server did not start on port $lic_port (busy? see the messages above)"
bash "$here/license_server.sh" public-key --data-dir "$lic_dir" >"$lic_dir/public-key.pem"
export EDGE_LICENSE_TRUSTED_KEYS="$lic_dir/public-key.pem${EDGE_LICENSE_TRUSTED_KEYS:+,$EDGE_LICENSE_TRUSTED_KEYS}"
if [ -z "${EDGE_LICENSE_URL:-}" ]; then
  [ -s "$lic_dir/dev-license.url" ] ||
    bash "$here/license_server.sh" issue --data-dir "$lic_dir" --type dev --days 365 \
      --max-devices 16 --customer "Local development" | tail -n 1 >"$lic_dir/dev-license.url"
  EDGE_LICENSE_URL="$(cat "$lic_dir/dev-license.url")"
  export EDGE_LICENSE_URL
fi
echo "dev: license server at http://127.0.0.1:$lic_port (data in $lic_dir), trusted by the gateways" >&2

profile="${EDGE_PROFILE:-dev}"
urls=()
for i in $(seq 1 "$gateways"); do
  data_dir="$state/gateway"
  [ "$i" = 1 ] || data_dir="$state/gateway-$i"
  p=$((port + i - 1))
  name="$profile"
  [ "$i" = 1 ] || name="$profile-$i"
  EDGE_PROFILE="$name" bash "$here/start.sh" --data-dir "$data_dir" --port "$p" \
    ${args[@]+"${args[@]}"} &
  pids+=("$!")
  urls+=("http://127.0.0.1:$p")
done

# Waits for every gateway, joins them (N > 1), prints URLs, addresses, chat ids and "dev: ready".
"${DENO:-deno}" run --quiet --allow-net=127.0.0.1 "$here/dev/join_gateways.ts" "${urls[@]}" ||
  die "could not join the gateways (see above)"
# Not exec: the EXIT trap stops the gateways and the relay. The first gateway to exit ends the run.
wait -n "${pids[@]}" || true
