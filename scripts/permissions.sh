# The daemon's Deno permission set, defined once. Sourced by scripts/start.sh, scripts/dev.sh,
# compile.sh and the scratch-image test. A shell function (not deno.json "permissions") because
# the data and files directories are only known at run time.
#
#   daemon_permission_flags DATA_DIR FILES_DIR [KEY_FILES]   -> prints one flag per line
# KEY_FILES: comma-separated license public-key files (EDGE_LICENSE_TRUSTED_KEYS) and the API
# tokens file (EDGE_API_TOKENS_FILE) the daemon may read when run from source; compile.sh never
# passes it (the compiled daemon reads a tokens file inside its data directory). The flags end with the daemon's
# runtime flags (DAEMON_UNSTABLE_FLAGS, DAEMON_V8_FLAGS), so every way of running it runs it alike.

# The daemon's one runtime flag (not a permission: it grants no access). --expose-gc makes
# `gc` callable, and the .prv reader and writer ask for a cheap minor GC every 64 chunks
# (src/prv/gc_hint.ts): WebCrypto returns a new buffer per 64 KiB chunk and V8
# frees them late, so without it RSS grows by 45-60 MB while 1 GiB streams, with it by about
# 25 MB (issue 11 asks < 32 MB; BENCHMARKS.md). scripts/test.sh runs the tests with it too.
DAEMON_V8_FLAGS="--v8-flags=--expose-gc"

# Deno's QUIC (Deno.QuicEndpoint, Deno.connectQuic) is unstable in 2.9: the direct file path
# (src/transport/p2p/, docs/p2p.md) needs it. Not a permission either: UDP is under --allow-net.
DAEMON_UNSTABLE_FLAGS="--unstable-net"

# Environment variables the program reads: src/config.ts DAEMON_ENV_ALLOW (each EDGE_ input and
# its PRIVITTY_ twin), the CLI's EDGE_URL / PRIVITTY_URL and EDGE_TOKEN / PRIVITTY_TOKEN,
# and NODE_V8_COVERAGE (read by imapflow's logger dependency at import).
DAEMON_ENV_ALLOW="EDGE_PROFILE,EDGE_LICENSE_URL,EDGE_LICENSE_TRUSTED_KEYS,EDGE_SERVER,EDGE_DATA_DIR,EDGE_FILES_DIR,EDGE_LOG_LEVEL,EDGE_SSE_PING_MS,EDGE_ALLOW_PLAINTEXT_MAIL,EDGE_HOST,EDGE_ALLOWED_HOSTS,EDGE_API_TOKEN,EDGE_API_TOKENS_FILE,EDGE_P2P_LISTEN,EDGE_STUN_SERVER,EDGE_IMPORT_BACKUP,EDGE_BACKUP_PASSPHRASE,PRIVITTY_PROFILE,PRIVITTY_LICENSE_URL,PRIVITTY_LICENSE_TRUSTED_KEYS,PRIVITTY_SERVER,PRIVITTY_DATA_DIR,PRIVITTY_FILES_DIR,PRIVITTY_LOG_LEVEL,PRIVITTY_SSE_PING_MS,PRIVITTY_ALLOW_PLAINTEXT_MAIL,PRIVITTY_HOST,PRIVITTY_ALLOWED_HOSTS,PRIVITTY_API_TOKEN,PRIVITTY_API_TOKENS_FILE,PRIVITTY_P2P_LISTEN,PRIVITTY_STUN_SERVER,PRIVITTY_IMPORT_BACKUP,PRIVITTY_BACKUP_PASSPHRASE,EDGE_URL,PRIVITTY_URL,EDGE_TOKEN,PRIVITTY_TOKEN,NODE_V8_COVERAGE"

daemon_permission_flags() {
  local data_dir="$1" files_dir="$2" key_files="${3:-}"
  # --allow-net: relay, IMAP/SMTP and license hosts are only known at run time (autodiscovery);
  #   the listener too, and the direct path's UDP port and its peers (docs/p2p.md). /etc/machine-id: the viewer's device fingerprint. sys: the MAC address
  #   (networkInterfaces), os.hostname() called by imapflow's logger at import, and the daemon's
  #   own UID (uid) to say exactly what to chown when the data directory belongs to another user,
  #   and the free space of the data directory's file system (statfs) before a large file is
  #   accepted (docs/transfer.md).
  printf '%s\n' \
    --no-prompt \
    --allow-net \
    "--allow-read=${data_dir},${files_dir},/etc/machine-id${key_files:+,${key_files}}" \
    "--allow-write=${data_dir},${files_dir}" \
    "--allow-env=${DAEMON_ENV_ALLOW}" \
    --allow-sys=networkInterfaces,hostname,uid,statfs \
    "$DAEMON_UNSTABLE_FLAGS" \
    "$DAEMON_V8_FLAGS"
}
