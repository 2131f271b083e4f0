/** The daemon permission flags from scripts/permissions.sh, for tests that run the program as shipped. */

const ROOT = new URL("../../", import.meta.url).pathname;

/** The flags scripts/permissions.sh prints for these directories (and license key files). */
export async function daemonFlags(
  dataDir: string,
  filesDir: string,
  keyFiles = "",
): Promise<string[]> {
  const out = await new Deno.Command("bash", {
    args: [
      "-c",
      `. "${ROOT}scripts/permissions.sh" && daemon_permission_flags "$1" "$2" "$3"`,
      "_",
      dataDir,
      filesDir,
      keyFiles,
    ],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).trim().split("\n");
}
