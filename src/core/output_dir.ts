/**
 * Where the daemon writes files for a caller (backups): a directory whose real path is the files
 * directory or lies inside it, the same place `send_msg` reads from (docs/behaviour.md#which-files-may-be-sent),
 * so it needs no permission beyond the files directory's.
 */
import { posix } from "node:path";
import { FileAccessError, FileRule, type FileUse } from "./file_access.ts";

/** `p` is `root` or lies inside it (both absolute and real). */
function atOrInside(p: string, root: string): boolean {
  return p === root || root === "/" || p.startsWith(`${root}/`);
}

/**
 * The real path of `dir` when it is an existing directory at or inside the files directory
 * (every symlink resolved); else a FileAccessError (-1) naming the rule and the files directory.
 */
export async function resolveOutputDir(
  dir: string,
  roots: { readonly filesDir: string },
  use: FileUse,
): Promise<string> {
  const only = `only the files directory ${roots.filesDir} and directories inside it may be ` +
    `${use.verb}`;
  const refuse = (rule: FileRule, what: string, cause?: unknown) =>
    new FileAccessError(
      rule,
      `${use.method}: "${dir}" ${what} (${only})`,
      cause === undefined ? undefined : { cause },
    );
  if (!dir.startsWith("/") || dir.includes("\0")) {
    throw refuse(FileRule.NOT_ABSOLUTE, "is not an absolute path");
  }
  let filesRoot: string;
  try {
    filesRoot = await Deno.realPath(roots.filesDir);
  } catch {
    throw new FileAccessError(
      FileRule.NO_FILES_DIR,
      `${use.method}: the files directory ${roots.filesDir} does not exist; create it first`,
    );
  }
  let real: string;
  try {
    real = await Deno.realPath(dir);
  } catch (cause) {
    const lexical = atOrInside(posix.normalize(dir), posix.normalize(roots.filesDir));
    throw lexical
      ? refuse(FileRule.NOT_FOUND, "does not exist", cause)
      : refuse(FileRule.OUTSIDE, `is not inside the files directory ${roots.filesDir}`, cause);
  }
  if (!atOrInside(real, filesRoot)) {
    throw refuse(
      FileRule.OUTSIDE,
      posix.normalize(dir) === real
        ? `is not inside the files directory ${roots.filesDir}`
        : `leads outside the files directory ${roots.filesDir} through a symbolic link`,
    );
  }
  const info = await Deno.stat(real);
  if (!info.isDirectory) throw refuse(FileRule.NOT_DIRECTORY, "is not a directory");
  return real;
}
