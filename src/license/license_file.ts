/**
 * The license file `privitty.lic` in the data directory: JSON holding the signed token, the
 * customer's name and the delivery URL that sync and deactivate go back to. A bare token (an
 * offline-issued file) is read too. Written atomically with mode 0600.
 */

/** The contents of a license file. */
export interface LicenseFile {
  /** The signed license (compact JWS). */
  readonly license_jwt: string;
  readonly customer_name?: string;
  /** The delivery URL it came from (absent for a file installed by hand). */
  readonly url?: string;
}

/** Parses a license file's text; returns a reason when it is neither form. */
export function parseLicenseFile(text: string): LicenseFile | string {
  const trimmed = text.trim();
  if (trimmed === "") return "the license file is empty";
  if (!trimmed.startsWith("{")) return { license_jwt: trimmed };
  let raw: unknown;
  try {
    raw = JSON.parse(trimmed);
  } catch {
    return "the license file is neither JSON nor a signed token";
  }
  const o = raw as Record<string, unknown>;
  if (typeof o !== "object" || o === null || typeof o.license_jwt !== "string") {
    return 'the license file has no "license_jwt" string';
  }
  return {
    license_jwt: o.license_jwt,
    ...(typeof o.customer_name === "string" ? { customer_name: o.customer_name } : {}),
    ...(typeof o.url === "string" ? { url: o.url } : {}),
  };
}

/** The file's text (pretty JSON, members in a fixed order). */
export function renderLicenseFile(file: LicenseFile): string {
  return JSON.stringify(
    { license_jwt: file.license_jwt, customer_name: file.customer_name, url: file.url },
    null,
    2,
  ) + "\n";
}

/** Writes `file` to `path` through a temporary name and a rename (mode 0600). */
export async function writeLicenseFile(path: string, file: LicenseFile): Promise<void> {
  const tmp = `${path}.tmp-${crypto.randomUUID().slice(0, 8)}`;
  try {
    await Deno.writeTextFile(tmp, renderLicenseFile(file), { mode: 0o600 });
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}

/** The delivery URL with its secret token shortened, for logs and messages. */
export function redactUrl(url: string): string {
  return url.replace(/([^/]{4})[^/]{4,}$/, "$1…");
}
