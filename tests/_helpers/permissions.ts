/** The daemon permission flags from scripts/permissions.sh, for tests that run the program as shipped. */

const ROOT = new URL("../../", import.meta.url).pathname;

/** The flags scripts/permissions.sh prints for these directories. */
export async function daemonFlags(dataDir: string, filesDir: string): Promise<string[]> {
  const out = await new Deno.Command("bash", {
    args: [
      "-c",
      `. "${ROOT}scripts/permissions.sh" && daemon_permission_flags "$1" "$2"`,
      "_",
      dataDir,
      filesDir,
    ],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).trim().split("\n");
}
