/**
 * Error classes with stable codes. Domain code throws these; `rpc/dispatch.ts` maps them to
 * JSON-RPC errors in one place, and the daemon maps start-up errors to an exit message.
 */
import { RpcCode } from "./constants.ts";

/** Base class: a message that says what failed and why, a JSON-RPC code, and an optional cause. */
export class GatewayError extends Error {
  readonly code: number;
  constructor(message: string, code: number = RpcCode.APPLICATION, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A parameter had the wrong type, arity or value. */
export class InvalidParamsError extends GatewayError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, RpcCode.INVALID_PARAMS, options);
  }
}

/** Something asked for does not exist (chat, message, contact, file). */
export class NotFoundError extends GatewayError {}

/** A license-gated method was called without an active license (docs/contract.md §7). */
export class LicenseRequiredError extends GatewayError {
  constructor(method: string) {
    super(
      `License required: "${method}" needs an active license, but the license status is no_license. ` +
        `Activate one with: edge-gateway license activate <url>`,
      RpcCode.LICENSE_REQUIRED,
    );
  }
}

/** Invalid configuration at start-up; the message names the input and the accepted form. */
export class ConfigError extends GatewayError {}

/** A fatal start-up failure (data dir, provisioning); the daemon prints it and exits non-zero. */
export class StartupError extends GatewayError {}

/**
 * Returns a readable one-line description of any thrown value, keeping the cause chain; a cause
 * whose text an outer message already quotes is not repeated.
 */
export function describeError(err: unknown): string {
  const parts: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; cur !== undefined && cur !== null && depth < 5; depth++) {
    if (cur instanceof Error) {
      const text = cur.message;
      if (!parts.some((p) => p.includes(text))) parts.push(text);
      cur = cur.cause;
    } else {
      parts.push(String(cur));
      break;
    }
  }
  return parts.join(": ");
}
