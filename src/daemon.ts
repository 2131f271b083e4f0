/**
 * Composition root of the daemon: provision the account (SPEC §1 order), compose the services,
 * start the background loops, serve HTTP, and shut everything down in order on SIGTERM/SIGINT.
 */
import { type GatewayConfig, parseConfig, shadowedEnvInputs } from "./config.ts";
import { ConfigError, describeError, StartupError } from "./errors.ts";
import { logger, setLogLevel } from "./log.ts";

const log = logger("daemon");

/** Usage text of `serve`. */
export const SERVE_USAGE =
  `usage: edge-gateway [serve] [--port P] [--host H] [--data-dir D] [--files-dir F] [--cors]
       privitty-edged [--listen HOST:PORT] [--accounts DIR] [--files-dir F] [--cors]

Runs the gateway daemon. --listen HOST:PORT and --accounts DIR are the product's names for
--host/--port and --data-dir (give one form of each). Environment: EDGE_PROFILE (required on
first run), EDGE_SERVER, EDGE_LICENSE_URL, EDGE_DATA_DIR, EDGE_FILES_DIR, EDGE_LOG_LEVEL,
EDGE_SSE_PING_MS, EDGE_ALLOW_PLAINTEXT_MAIL; each also as PRIVITTY_* (PRIVITTY_PROFILE, …),
the EDGE_ name winning when both are set. See README.md for details.`;

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
    throw err;
  }
  setLogLevel(config.logLevel);
  for (const note of shadowedEnvInputs(env)) log.warn(note);
  try {
    const { startDaemon } = await import("./daemon_start.ts");
    const daemon = await startDaemon(config);
    await waitForStopSignal();
    await daemon.stop();
    return 0;
  } catch (err) {
    const fatal = err instanceof StartupError || err instanceof ConfigError;
    log.error(fatal ? describeError(err) : `fatal: ${describeError(err)}`);
    console.error(`edge-gateway: ${describeError(err)}`);
    return 1;
  }
}

/** Resolves on the first SIGTERM or SIGINT. */
function waitForStopSignal(): Promise<Deno.Signal> {
  return new Promise((resolve) => {
    const signals: Deno.Signal[] = ["SIGTERM", "SIGINT"];
    const handlers = signals.map((sig) => {
      const h = () => {
        handlers.forEach(([s, fn]) => Deno.removeSignalListener(s, fn));
        log.info(`received ${sig}; shutting down`);
        resolve(sig);
      };
      Deno.addSignalListener(sig, h);
      return [sig, h] as const;
    });
  });
}
