/**
 * `license` commands without a daemon (the product's `privitty-edge --accounts DIR license …`,
 * docs/product-compat.md#cli-forms): the status is read from the license file in that data
 * directory.
 */
import { DataDirLayout } from "../constants.ts";
import { inspectLicense } from "../license/inspect.ts";

/** A failure the CLI reports as its message alone, with exit code 1. */
export class CliFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliFailure";
  }
}

/** Why `dir` cannot serve as the data directory, or undefined when it can be read. */
function unreadable(dir: string): string | undefined {
  try {
    if (!Deno.statSync(dir).isDirectory) return `--accounts ${dir} is not a directory`;
    return undefined;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return `--accounts ${dir} does not exist`;
    if (err instanceof Deno.errors.NotCapable) {
      return `this CLI may not read --accounts ${dir} (run it with --allow-read=${dir}, as the ` +
        `compiled binary and the image are)`;
    }
    return `--accounts ${dir} cannot be read: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * `license_status` as the daemon would answer it, from `<dir>/privitty.lic` (verified and judged
 * as the daemon does), plus `source` naming the file. Throws CliFailure when the directory cannot
 * be read.
 */
export async function offlineLicenseStatus(dir: string): Promise<Record<string, unknown>> {
  const why = unreadable(dir);
  if (why !== undefined) throw new CliFailure(`no gateway answers, and ${why}`);
  return { ...(await inspectLicense(dir)), source: `${dir}/${DataDirLayout.LICENSE_FILE}` };
}

/** The error for `license activate|sync|deactivate` when no daemon answers. */
export function offlineNotAvailable(action: string, dir: string, unreachable: string): CliFailure {
  return new CliFailure(
    `${unreachable}; license ${action} against --accounts ${dir} needs the running daemon ` +
      `(it talks to the license server and changes the license at once): start the daemon ` +
      `and run the command again`,
  );
}
