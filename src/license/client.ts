/**
 * The gateway's HTTP client to a license server: activate, sync and deactivate, each a POST of
 * `{"device_id", "installation_id", "previous_device_id"}` below the delivery URL (docs/licenses.md#license-server-api). Talks to that host only.
 */
import { describeError } from "../errors.ts";
import { redactUrl } from "./license_file.ts";

/** Path suffixes below a delivery URL. */
export const LicenseAction = {
  ACTIVATE: "activate",
  SYNC: "sync",
  DEACTIVATE: "deactivate",
} as const;
export type LicenseAction = typeof LicenseAction[keyof typeof LicenseAction];

/** A refusal or failure of the license server; `transient` ones are worth retrying. */
export class LicenseServerError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
    /** The server's error code (e.g. `seat_limit`), when it answered with one. */
    readonly code?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "LicenseServerError";
  }
}

/** What activation and sync deliver. */
export interface DeliveredLicense {
  readonly license_jwt: string;
  readonly customer_name?: string;
}

/**
 * Who asks: this device's id and, so that the server can move a seat instead of taking a new
 * one (docs/identity.md), the installation id and the device id of the copy installed here.
 */
export interface LicenseDevice {
  readonly deviceId: string;
  readonly installationId?: string | undefined;
  /** The device the installed license is bound to, when it is not `deviceId`. */
  readonly previousDeviceId?: string | undefined;
}

/** Seams of the client. */
export interface LicenseClientOptions {
  readonly fetch?: typeof fetch | undefined;
  /** Limit of one request (default 10 s). */
  readonly timeoutMs?: number | undefined;
}

/** Checks that `url` is an http(s) delivery URL; returns it without a trailing slash. */
export function checkDeliveryUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    throw new LicenseServerError(`"${url}" is not a license delivery URL (http or https)`, false);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new LicenseServerError(`"${url}" is not a license delivery URL (http or https)`, false);
  }
  return parsed.href.replace(/\/+$/, "");
}

/** A client for one delivery URL's server. */
export class LicenseClient {
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;

  constructor(options: LicenseClientOptions = {}) {
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** POSTs the device to `<url>/<action>`; resolves with the JSON body of a 200. */
  async #post(url: string, action: LicenseAction, device: LicenseDevice): Promise<unknown> {
    const base = checkDeliveryUrl(url);
    const shown = redactUrl(base);
    let res: Response;
    try {
      res = await this.#fetch(`${base}/${action}`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          device_id: device.deviceId,
          ...(device.installationId ? { installation_id: device.installationId } : {}),
          ...(device.previousDeviceId ? { previous_device_id: device.previousDeviceId } : {}),
        }),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      throw new LicenseServerError(
        `the license server at ${shown} is unreachable: ${describeError(err)}`,
        true,
        undefined,
        { cause: err },
      );
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      body = undefined;
    }
    if (res.status === 200 && body !== undefined) return body;
    const o = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
    const code = typeof o.error === "string" ? o.error : undefined;
    const detail = typeof o.message === "string" ? o.message : `HTTP ${res.status}`;
    throw new LicenseServerError(
      `the license server at ${shown} refused to ${action}: ${detail}` +
        (code ? ` (${code})` : ""),
      res.status >= 500 || res.status === 429,
      code,
    );
  }

  /** Binds this device to the license behind `url` (takes a seat) and returns its copy. */
  async activate(url: string, device: LicenseDevice | string): Promise<DeliveredLicense> {
    return delivered(await this.#post(url, LicenseAction.ACTIVATE, deviceOf(device)), url);
  }

  /** Fetches the current copy for this device (renewed or revoked). */
  async sync(url: string, device: LicenseDevice | string): Promise<DeliveredLicense> {
    return delivered(await this.#post(url, LicenseAction.SYNC, deviceOf(device)), url);
  }

  /** Frees this device's seat. */
  async deactivate(url: string, device: LicenseDevice | string): Promise<void> {
    await this.#post(url, LicenseAction.DEACTIVATE, deviceOf(device));
  }
}

function deviceOf(device: LicenseDevice | string): LicenseDevice {
  return typeof device === "string" ? { deviceId: device } : device;
}

function delivered(body: unknown, url: string): DeliveredLicense {
  const o = body as Record<string, unknown>;
  if (typeof o !== "object" || o === null || typeof o.license_jwt !== "string") {
    throw new LicenseServerError(
      `the license server at ${redactUrl(url)} answered without a "license_jwt"`,
      false,
    );
  }
  return {
    license_jwt: o.license_jwt,
    ...(typeof o.customer_name === "string" ? { customer_name: o.customer_name } : {}),
  };
}
