/**
 * Composition root of the daemon: provision the account (SPEC §1 order), compose the services,
 * start the background loops, serve HTTP, and shut everything down in order on SIGTERM/SIGINT.
 */
import { type GatewayConfig, parseConfig } from "./config.ts";
import { ConfigError, describeError, StartupError } from "./errors.ts";
import { logger, setLogLevel } from "./log.ts";
import { deadlineIn, finishShutdown, SHUTDOWN_DEADLINE_MS, StopSignals } from "./shutdown.ts";

const log = logger("daemon");

/** Usage text of `serve`. */
export const SERVE_USAGE =
  `usage: edge-gateway [serve] [--port P] [--host H] [--data-dir D] [--files-dir F] [--cors]

Runs the gateway daemon. Environment: EDGE_PROFILE (required on first run), EDGE_SERVER,
EDGE_LICENSE_URL, EDGE_DATA_DIR, EDGE_FILES_DIR, EDGE_LOG_LEVEL, EDGE_SSE_PING_MS,
EDGE_ALLOW_PLAINTEXT_MAIL. See README.md for details.`;

/** Parses the configuration, runs the daemon until a stop signal, and returns the exit code. */
export async function runDaemon(args: readonly string[]): Promise<number> {
  let config: GatewayConfig;
  try {
    config = parseConfig(args, (name) => Deno.env.get(name));
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`edge-gateway: ${err.message}`);
      return 2;
    }
    throw err;
  }
  setLogLevel(config.logLevel);
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
    const fatal = err instanceof StartupError || err instanceof ConfigError;
    log.error(fatal ? describeError(err) : `fatal: ${describeError(err)}`);
    console.error(`edge-gateway: ${describeError(err)}`);
    return 1;
  }
}
