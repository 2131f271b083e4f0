/**
 * Which files the daemon reads on a caller's behalf (attachments, files to protect): regular files
 * whose real path lies inside the files directory, checked on the opened file, never its own state.
 */
import fs from "node:fs";
import { posix } from "node:path";
import { DATA_DIR_STATE_ENTRIES } from "../constants.ts";
import { GatewayError } from "../errors.ts";
import { baseName, isBlobName } from "./blobs.ts";
import { blobDirOf } from "./context.ts";
import { concatBytes } from "../bytes.ts";

/** The device identity file (the viewer's fingerprint); never sent, whatever links lead to it. */
export const MACHINE_ID_PATH = "/etc/machine-id";

/** Why a file was refused; each rule has its own message. */
export const FileRule = {
  NOT_ABSOLUTE: "not-absolute",
  NO_FILES_DIR: "no-files-dir",
  NOT_FOUND: "not-found",
  OUTSIDE: "outside",
  GATEWAY_STATE: "gateway-state",
  DEVICE_IDENTITY: "device-identity",
  DIRECTORY: "directory",
  NOT_DIRECTORY: "not-directory",
  NOT_REGULAR: "not-regular",
  HARD_LINKS: "hard-links",
  CHANGED: "changed",
  UNREADABLE: "unreadable",
} as const;
export type FileRule = typeof FileRule[keyof typeof FileRule];

/** A file refused by a rule (JSON-RPC -1); the message names the rule and the files directory. */
export class FileAccessError extends GatewayError {
  constructor(readonly rule: FileRule, message: string, options?: ErrorOptions) {
    super(message, undefined, options);
  }
}

/** Where files may come from. */
export interface FileAccessRoots {
  /** The files directory (configured path, as shown in messages). */
  readonly filesDir: string;
  /** The data directory: nothing in it is readable except the files and blob directories. */
  readonly dataDir: string;
  /** Also allow the gateway's own blobs here (forwarding a stored message's file). */
  readonly blobDir?: string;
}

/** Who reads the file, for messages: `send_msg`, "sent". */
export interface FileUse {
  readonly method: string;
  /** Past participle: "sent", "protected". */
  readonly verb: string;
}

/** The roots for attachments: the files directory and, for forwarding, the blob directory. */
export function attachmentRoots(config: { dataDir: string; filesDir: string }): FileAccessRoots {
  return { ...config, blobDir: blobDirOf(config.dataDir) };
}

const CHUNK_BYTES = 256 * 1024;
const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW;
/** Module-private: only `openAttachableFile` can make an AttachableFile. */
const CHECKED: unique symbol = Symbol("checked");

/** A file that passed every rule, opened read-only: read it here, never again by path. */
export class AttachableFile implements AsyncDisposable {
  #handle: fs.promises.FileHandle | undefined;

  /** Only `openAttachableFile` makes one. */
  private constructor(
    handle: fs.promises.FileHandle,
    /** The path as the caller gave it. */
    readonly path: string,
    /** Its real path (every symlink resolved), inside the files or blob directory. */
    readonly realPath: string,
    /** Size in bytes when it was checked. */
    readonly size: number,
  ) {
    this.#handle = handle;
  }

  static [CHECKED](
    handle: fs.promises.FileHandle,
    path: string,
    realPath: string,
    size: number,
  ): AttachableFile {
    return new AttachableFile(handle, path, realPath, size);
  }

  /** The last segment of the path the caller gave (the name shown to the peer). */
  get name(): string {
    return baseName(this.path);
  }

  /** The content from the start to its end, in chunks. */
  async *chunks(): AsyncGenerator<Uint8Array> {
    const handle = this.#handle;
    if (handle === undefined) throw new Error(`"${this.path}" is closed`);
    for (let position = 0;;) {
      const buffer = new Uint8Array(CHUNK_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  }

  /**
   * Reads into `buffer` from byte `position` (straight into it: no chunk buffers); resolves to
   * the bytes read, 0 at the end.
   */
  async readAt(buffer: Uint8Array, position: number): Promise<number> {
    const handle = this.#handle;
    if (handle === undefined) throw new Error(`"${this.path}" is closed`);
    const { bytesRead } = await handle.read(buffer, 0, buffer.byteLength, position);
    return bytesRead;
  }

  /** The whole content. */
  async readAll(): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for await (const chunk of this.chunks()) parts.push(chunk);
    return concatBytes(parts);
  }

  /** Closes the file; safe to call more than once. */
  async close(): Promise<void> {
    const handle = this.#handle;
    this.#handle = undefined;
    await handle?.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/** `p` lies strictly inside directory `root` (both absolute, normalized, real). */
function inside(p: string, root: string): boolean {
  return root === "/" ? p !== "/" : p.startsWith(`${root}/`);
}

async function realPathOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await Deno.realPath(path);
  } catch {
    return undefined;
  }
}

/** The checks of one call: the roots resolved once, and how to word a refusal. */
class Checker {
  constructor(
    readonly path: string,
    readonly roots: FileAccessRoots,
    readonly use: FileUse,
    readonly filesRoot: string,
    readonly dataRoot: string,
    readonly blobRoot: string | undefined,
  ) {}

  /** The rule's tail: which files may be used ("there" when the message named the directory). */
  only(there: boolean): string {
    const where = there ? "there" : `inside the files directory ${this.roots.filesDir}`;
    const blobs = this.roots.blobDir === undefined ? "" : ", or files of stored messages,";
    return `only regular files ${where}${blobs} may be ${this.use.verb}`;
  }

  refuse(rule: FileRule, what: string, cause?: unknown): FileAccessError {
    const there = what.includes(`the files directory ${this.roots.filesDir}`);
    const message = `${this.use.method}: "${this.path}" ${what} (${this.only(there)})`;
    return new FileAccessError(rule, message, cause === undefined ? undefined : { cause });
  }

  /** Whether the given path, `.` and `..` applied without following links, names a file inside. */
  get lexicallyInside(): boolean {
    const p = posix.normalize(this.path);
    return inside(p, posix.normalize(this.roots.filesDir)) ||
      (this.roots.blobDir !== undefined && inside(p, posix.normalize(this.roots.blobDir)));
  }

  /** Resolves every symlink; a path it may not read or that is missing is refused. */
  async resolve(): Promise<string> {
    try {
      return await Deno.realPath(this.path);
    } catch (cause) {
      const missing = cause instanceof Deno.errors.NotFound ||
        cause instanceof Deno.errors.NotADirectory || cause instanceof Deno.errors.FilesystemLoop;
      if (missing && this.lexicallyInside) {
        throw this.refuse(FileRule.NOT_FOUND, "does not exist", cause);
      }
      if (cause instanceof Deno.errors.PermissionDenied) {
        throw this.refuse(FileRule.UNREADABLE, "cannot be read: permission denied", cause);
      }
      throw this.refuse(FileRule.OUTSIDE, this.outsideWhat(), cause);
    }
  }

  outsideWhat(): string {
    return this.lexicallyInside
      ? `leads outside the files directory ${this.roots.filesDir} through a symbolic link`
      : `is not inside the files directory ${this.roots.filesDir}`;
  }

  /** "is" when the path names `real` itself, "leads to" when a symlink took it there. */
  isOrLeadsTo(real: string): string {
    return posix.normalize(this.path) === real ? "is" : "leads to";
  }

  /** Refuses a real path that is the device identity, the gateway's state or elsewhere. */
  place(real: string, machineIdReal: string | undefined): void {
    if (real === MACHINE_ID_PATH || real === machineIdReal) {
      const how = this.isOrLeadsTo(real);
      throw this.refuse(
        FileRule.DEVICE_IDENTITY,
        `${how} the device identity ${MACHINE_ID_PATH} and is never ${this.use.verb}`,
      );
    }
    if (real === this.filesRoot) throw this.refuse(FileRule.DIRECTORY, "is a directory");
    const inFiles = inside(real, this.filesRoot);
    const inBlobs = this.blobRoot !== undefined && posix.dirname(real) === this.blobRoot &&
      isBlobName(posix.basename(real));
    if (real === this.dataRoot || inside(real, this.dataRoot)) {
      const filesInData = inside(this.filesRoot, this.dataRoot) &&
        !DATA_DIR_STATE_ENTRIES.has(this.filesRoot.slice(this.dataRoot.length + 1).split("/")[0]);
      if (!inBlobs && !(inFiles && filesInData)) {
        throw this.refuse(
          FileRule.GATEWAY_STATE,
          `${this.isOrLeadsTo(real)} the gateway's own state in its data directory ` +
            `${this.roots.dataDir} and is never ${this.use.verb}`,
        );
      }
      return;
    }
    if (!inFiles) throw this.refuse(FileRule.OUTSIDE, this.outsideWhat());
  }

  /** Refuses what is not a regular file, from its lstat (a FIFO is never opened). */
  kind(info: Deno.FileInfo): void {
    if (info.isSymlink) {
      throw this.refuse(FileRule.CHANGED, "changed while it was checked; try again");
    }
    if (info.isDirectory) throw this.refuse(FileRule.DIRECTORY, "is a directory");
    if (!info.isFile) throw this.refuse(FileRule.NOT_REGULAR, `is ${specialKind(info)}`);
  }
}

function specialKind(info: Deno.FileInfo): string {
  if (info.isFifo) return "a FIFO (named pipe), not a regular file";
  if (info.isSocket) return "a socket, not a regular file";
  if (info.isCharDevice || info.isBlockDevice) return "a device, not a regular file";
  return "not a regular file";
}

/**
 * Opens `path` for `use` when it is a regular file whose real path (every symlink resolved) lies
 * inside the files directory, or, with `roots.blobDir`, is one of the gateway's blobs. Never the
 * data directory's state nor `/etc/machine-id`. A FIFO, socket or device is refused from its
 * lstat without being opened (the open is non-blocking anyway). On the opened file it proves that
 * its (dev, ino) is that of the re-resolved real path, which is still inside, and that it has one
 * link: a hard link cannot be told apart from the file it links to, which may lie outside.
 * Refusals are FileAccessError (-1) naming the rule and the files directory.
 */
export async function openAttachableFile(
  path: string,
  roots: FileAccessRoots,
  use: FileUse,
): Promise<AttachableFile> {
  if (!path.startsWith("/") || path.includes("\0")) {
    throw new FileAccessError(
      FileRule.NOT_ABSOLUTE,
      `${use.method}: "${path}" is not an absolute path; give the absolute path of a file ` +
        `inside the files directory ${roots.filesDir}`,
    );
  }
  const filesRoot = await realPathOrUndefined(roots.filesDir);
  if (filesRoot === undefined) {
    throw new FileAccessError(
      FileRule.NO_FILES_DIR,
      `${use.method}: the files directory ${roots.filesDir} does not exist; create it and put ` +
        `the files to be ${use.verb} there`,
    );
  }
  const dataRoot = await realPathOrUndefined(roots.dataDir) ?? posix.normalize(roots.dataDir);
  const blobRoot = roots.blobDir === undefined
    ? undefined
    : await realPathOrUndefined(roots.blobDir);
  const c = new Checker(path, roots, use, filesRoot, dataRoot, blobRoot);
  const machineIdReal = await realPathOrUndefined(MACHINE_ID_PATH);
  const real = await c.resolve();
  c.place(real, machineIdReal);
  c.kind(await lstatOrRefuse(c, real));
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(real, OPEN_FLAGS);
  } catch (cause) {
    throw openFailure(c, cause);
  }
  try {
    return await prove(c, handle, real);
  } catch (err) {
    await handle.close().catch(() => {});
    throw err;
  }
}

async function lstatOrRefuse(c: Checker, real: string): Promise<Deno.FileInfo> {
  try {
    return await Deno.lstat(real);
  } catch (cause) {
    throw openFailure(c, cause);
  }
}

function openFailure(c: Checker, cause: unknown): FileAccessError {
  const code = (cause as { code?: string }).code;
  if (cause instanceof Deno.errors.NotCapable) {
    return c.refuse(
      FileRule.UNREADABLE,
      "cannot be read: the daemon's permissions do not cover its real location (give the " +
        "files directory's real path, without symbolic links, at start)",
      cause,
    );
  }
  if (cause instanceof Deno.errors.PermissionDenied || code === "EACCES" || code === "EPERM") {
    return c.refuse(FileRule.UNREADABLE, "cannot be read: permission denied", cause);
  }
  return c.refuse(FileRule.CHANGED, "changed while it was checked; try again", cause);
}

/** The checks on the opened file; returns it as an AttachableFile when they hold. */
async function prove(
  c: Checker,
  handle: fs.promises.FileHandle,
  real: string,
): Promise<AttachableFile> {
  const opened = await handle.stat();
  if (!opened.isFile()) throw c.refuse(FileRule.NOT_REGULAR, "is not a regular file");
  if (opened.nlink > 1) {
    throw c.refuse(
      FileRule.HARD_LINKS,
      `has ${opened.nlink} hard links; a file with more than one link cannot be told apart ` +
        `from a link to a file outside the files directory ${c.roots.filesDir}, so it is never ` +
        `${c.use.verb}; copy it there instead of linking it`,
    );
  }
  const again = await realPathOrUndefined(real);
  const now = again === undefined ? undefined : await Deno.lstat(again).catch(() => undefined);
  if (again !== real || now?.dev !== opened.dev || now?.ino !== opened.ino) {
    throw c.refuse(FileRule.CHANGED, "changed while it was checked; try again");
  }
  const identity = await Deno.stat(MACHINE_ID_PATH).catch(() => undefined);
  if (identity !== undefined && identity.dev === opened.dev && identity.ino === opened.ino) {
    throw c.refuse(
      FileRule.DEVICE_IDENTITY,
      `is a link to the device identity ${MACHINE_ID_PATH} and is never ${c.use.verb}`,
    );
  }
  return AttachableFile[CHECKED](handle, c.path, real, opened.size);
}
