/**
 * A license for tests of gated methods with real daemons: the project's license server running,
 * its key trusted through EDGE_LICENSE_TRUSTED_KEYS, and one license every gateway of a test
 * activates at start (each installation takes a seat of its own: docs/identity.md).
 */
import assert from "node:assert/strict";
import { licenseServerCommand, startLicenseServer } from "./license_server.ts";
import { makeTempDir } from "./temp.ts";

/** The environment a licensed gateway starts with, and the server to stop. */
export interface TestLicense extends AsyncDisposable {
  readonly env: Record<string, string>;
}

/** Starts a license server, issues one license and returns the daemon environment for it. */
export async function testLicense(): Promise<TestLicense> {
  const tmp = await makeTempDir("lic");
  const dir = `${tmp.path}/srv`;
  const server = await startLicenseServer(dir);
  try {
    const keyFile = `${tmp.path}/license-server.pem`;
    await Deno.writeTextFile(
      keyFile,
      (await licenseServerCommand("public-key", "--data-dir", dir)).stdout,
    );
    const out = await licenseServerCommand(
      "issue",
      "--data-dir",
      dir,
      "--type",
      "standard",
      "--max-devices",
      "10",
      "--days",
      "30",
    );
    assert.equal(out.code, 0, out.stderr);
    const url = out.stdout.trim().split("\n").at(-1)!;
    return {
      env: { EDGE_LICENSE_TRUSTED_KEYS: keyFile, EDGE_LICENSE_URL: url },
      [Symbol.asyncDispose]: async () => {
        await server[Symbol.asyncDispose]();
        await tmp.cleanup();
      },
    };
  } catch (err) {
    await server[Symbol.asyncDispose]();
    await tmp.cleanup();
    throw err;
  }
}
