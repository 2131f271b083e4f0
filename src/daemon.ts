/**
 * Composition root of the daemon: provision the account (docs/contract.md §1.2 order), compose the
 * services, start the background loops, serve HTTP, and shut everything down in order on
 * SIGTERM/SIGINT.
 */
import { type GatewayConfig, parseConfig, shadowedEnvInputs } from "./config.ts";
import { ConfigError, describeError, StartupError } from "./errors.ts";
import { logger, setLogLevel } from "./log.ts";
import { deadlineIn, finishShutdown, SHUTDOWN_DEADLINE_MS, StopSignals } from "./shutdown.ts";

const log = logger("daemon");

/** Usage text of `serve`. */
export const SERVE_USAGE =
  `usage: edge-gateway [serve] [options]      (also: privitty-edged [options])

Runs the gateway daemon (SPEC §1: provisions on first start, then serves HTTP).

Options:
  --port P             HTTP port (default 7200)
  --host H             listen address (default 127.0.0.1; the container image sets 0.0.0.0).
                       Beyond loopback, turn API tokens on (EDGE_API_TOKEN): without them
                       anyone who reaches the address can call /rpc
  --listen HOST:PORT   both at once, the product's form (e.g. 0.0.0.0:7200, [::1]:7200)
  --data-dir D         data directory: keys, database, blobs, license (default /var/lib/privitty)
  --accounts D         the same, the product's name
  --files-dir F        the only directory whose files may be sent or protected
                       (default <data dir>/files)
  --cors=ORIGINS       let these browser origins call the API (comma list, e.g.
                       --cors=https://hmi.example); a bare --cors allows every origin (warned).
                       Off by default: a request from another origin is refused (403)
  --allowed-hosts H    Host names the API answers besides IP addresses, localhost and
                       single-label names (comma list, *.example.org; * turns the check off)
  --import-backup FILE restore this backup (export_backup) into the empty data directory
                       before provisioning; the passphrase comes from EDGE_BACKUP_PASSPHRASE
  --p2p-listen A       UDP HOST:PORT of the direct file path over QUIC (default 0.0.0.0:0,
                       an ephemeral port; off disables it; see docs/p2p.md)
  --stun HOST:PORT     a STUN server that tells the direct path its public address (none)
  --help               this text
Give one form of each: --listen or --host/--port, --accounts or --data-dir.

Environment (each also as PRIVITTY_*, e.g. PRIVITTY_PROFILE; the EDGE_ name wins):
  EDGE_PROFILE               display name, required on first start
  EDGE_SERVER                relay host, https://host/new URL, or http://127.0.0.1:PORT
  EDGE_LICENSE_URL           license delivery URL, activated at first start
  EDGE_LICENSE_TRUSTED_KEYS  license-server public keys trusted when run from source
  EDGE_DATA_DIR              as --data-dir
  EDGE_FILES_DIR             as --files-dir
  EDGE_LOG_LEVEL             debug | info | warn | error (default info)
  EDGE_SSE_PING_MS           SSE keepalive interval (default 15000)
  EDGE_ALLOW_PLAINTEXT_MAIL  true: allow IMAP/SMTP without TLS (default false)
  EDGE_HOST                  as --host (the container image sets PRIVITTY_HOST=0.0.0.0)
  EDGE_ALLOWED_HOSTS         as --allowed-hosts
  EDGE_API_TOKEN             one API token with every scope: /rpc and /events then need
                             Authorization: Bearer <token> (off by default)
  EDGE_API_TOKENS_FILE       or named tokens with scopes, one a line:
                             <name> <read,send,admin> sha256:<hex of the token>
  EDGE_IMPORT_BACKUP         as --import-backup
  EDGE_BACKUP_PASSPHRASE     the passphrase of the backup to import (docs/backup.md)
  EDGE_P2P_LISTEN            as --p2p-listen
  EDGE_STUN_SERVER           as --stun
See README.md for details.`;

/** Parses the configuration, runs the daemon until a stop signal, and returns the exit code. */
export async function runDaemon(args: readonly string[]): Promise<number> {
  let config: GatewayConfig;
  const env = (name: string) => Deno.env.get(name);
  try {
    config = parseConfig(args, env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`edge-gateway: ${err.message}`);
      return 2;
    }
    if (err instanceof Deno.errors.NotCapable) {
      // e.g. `deno run main.ts` or `deno task cli` with no command: not the daemon's permissions.
      console.error(
        "edge-gateway: this process lacks the daemon's permissions " +
          `(${err.message.split(",")[0]}); run the daemon with \`deno task start …\` ` +
          "(scripts/start.sh grants its permission set) or the compiled binary",
      );
      return 2;
    }
    throw err;
  }
  setLogLevel(config.logLevel);
  for (const note of shadowedEnvInputs(env)) log.warn(note);
  try {
    const { startDaemon } = await import("./daemon_start.ts");
    const daemon = await startDaemon(config);
    const signals = new StopSignals();
    await signals.first;
    const deadline = deadlineIn(SHUTDOWN_DEADLINE_MS);
    const outcome = await finishShutdown(daemon.stop(), deadline.reached, daemon.unfinished);
    deadline.cancel();
    signals.close();
    if (outcome.finished) return 0;
    const message = `shutdown did not finish within ${SHUTDOWN_DEADLINE_MS / 1000} s; ` +
      `still running: ${outcome.running.join(", ")}`;
    log.error(message);
    console.error(`edge-gateway: ${message}`);
    return 1;
  } catch (err) {
    // One line, once: the provisioning step that failed logged only its name.
    const fatal = err instanceof StartupError || err instanceof ConfigError;
    console.error(`edge-gateway: ${fatal ? "" : "fatal: "}${describeError(err)}`);
    if (!fatal && err instanceof Error && err.stack) log.debug(err.stack);
    return 1;
  }
}
