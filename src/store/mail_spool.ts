/**
 * The spool: rendered mails too large for the database, one file per mail (`<name>.eml`) in the
 * account's spool directory, written under a temporary name, flushed to disk and renamed before
 * the transaction that queues it commits; removed once sent or given up, and at start when no
 * outbox row names it.
 */
import { diskFullError } from "../errors.ts";

const SUFFIX = ".eml";
const TEMP = ".tmp";
const NAME = /^[0-9a-f]{32}\.eml$/;

/** A mail written to the spool. */
export interface SpooledMail {
  /** File name in the spool directory. */
  readonly name: string;
  readonly bytes: number;
}

/** Reads and writes the spool directory `dir`. */
export class MailSpool {
  constructor(readonly dir: string) {}

  /** Absolute path of spool file `name` (a name this spool made). */
  path(name: string): string {
    if (!NAME.test(name)) throw new Error(`not a spool file name: ${name}`);
    return `${this.dir}/${name}`;
  }

  /**
   * Writes `chunks` to a new spool file: a temporary name first, then flushed (file and
   * directory) and renamed, so a crash leaves either nothing or the whole mail. A full disk
   * throws DiskFullError; any failure removes what was written.
   */
  async write(chunks: AsyncIterable<Uint8Array>): Promise<SpooledMail> {
    const id = Array.from(
      crypto.getRandomValues(new Uint8Array(16)),
      (b) => b.toString(16).padStart(2, "0"),
    ).join("");
    const name = `${id}${SUFFIX}`;
    const temp = `${this.dir}/${id}${TEMP}`;
    let bytes = 0;
    try {
      await Deno.mkdir(this.dir, { recursive: true });
      using file = await Deno.open(temp, { write: true, createNew: true, mode: 0o600 });
      for await (const chunk of chunks) {
        for (let at = 0; at < chunk.length;) at += await file.write(chunk.subarray(at));
        bytes += chunk.length;
      }
      await file.sync();
      await Deno.rename(temp, `${this.dir}/${name}`);
      await this.#syncDir();
      return { name, bytes };
    } catch (err) {
      await Deno.remove(temp).catch(() => {});
      throw diskFullError(err) ?? err;
    }
  }

  /** Removes spool file `name`; a missing file is not an error. */
  async remove(name: string): Promise<void> {
    try {
      await Deno.remove(this.path(name));
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
  }

  /**
   * Removes every file of the spool but those in `keep` (what outbox rows name): mails of
   * transactions that never committed and temporary files of writes a crash cut short. Call it
   * when no send is being rendered (at start). Returns how many files it removed.
   */
  async sweep(keep: ReadonlySet<string>): Promise<number> {
    let removed = 0;
    try {
      for await (const e of Deno.readDir(this.dir)) {
        if (!e.isFile || keep.has(e.name)) continue;
        if (!e.name.endsWith(SUFFIX) && !e.name.endsWith(TEMP)) continue;
        await Deno.remove(`${this.dir}/${e.name}`).catch(() => {});
        removed++;
      }
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    return removed;
  }

  async #syncDir(): Promise<void> {
    try {
      using dir = await Deno.open(this.dir, { read: true });
      await dir.sync();
    } catch {
      // Not every file system lets a directory be flushed; the rename is still atomic.
    }
  }
}
