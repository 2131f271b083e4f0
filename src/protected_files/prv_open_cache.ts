/**
 * A small LRU of what `/stream` established when it opened a `.prv` (header MAC, final chunk,
 * keys, sniffed type), so the next request for the same unchanged file with the same key skips it.
 */
import { createHmac } from "node:crypto";
import type { VerifiedPrv } from "../prv/mod.ts";

/** Entries kept by default (a few hundred bytes each: two CryptoKeys, a header, a type). */
export const OPEN_CACHE_ENTRIES = 64;

/**
 * A file modified less than this long ago (ms) is not cached: file times tick in steps of a few
 * ms (the kernel's coarse clock), so a second write within one step could keep the same identity.
 */
export const RECENT_WRITE_MS = 50;

/**
 * Which file a path named when it was opened: a write, truncation, rename over it or a new file
 * changes one of these (ctime changes on any write, and cannot be set back from user space).
 */
export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
}

/** The identity of an opened file from its `stat()`. */
export function identityOf(info: Deno.FileInfo): FileIdentity {
  return {
    dev: info.dev,
    ino: info.ino ?? -1,
    size: info.size,
    mtimeMs: info.mtime?.getTime() ?? -1,
    ctimeMs: info.ctime?.getTime() ?? -1,
  };
}

/** What a verified open left for the next one: the reader's `verified` and the sniffed type. */
export interface CachedOpen extends VerifiedPrv {
  readonly mime: string;
}

interface Entry {
  readonly identity: FileIdentity;
  /** Keyed digest of the content key the open was verified with (the key is not kept). */
  readonly keyTag: string;
  /** The received file id, for `forgetFile` (undefined: the owner's own file). */
  readonly fileId: number | undefined;
  readonly open: CachedOpen;
}

const sameIdentity = (a: FileIdentity, b: FileIdentity) =>
  a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs &&
  a.ctimeMs === b.ctimeMs;

/**
 * Verified opens by path, at most `limit`, least recently used dropped first. A lookup hits only
 * for the same file identity and the same content key; anything else drops the entry. Access is
 * never cached: the caller checks it before every lookup, and `forgetFile` drops a received
 * file's entry when its grant ends (revoke, expiry).
 */
export class PrvOpenCache {
  readonly #entries = new Map<string, Entry>();
  /** Per-process key of the key tags: a content key leaves no digest that outlives the process. */
  readonly #tagKey = crypto.getRandomValues(new Uint8Array(32));
  readonly #now: () => number;
  readonly limit: number;

  /** `limit` entries at most; `now` is the wall clock in Unix ms (tests inject one). */
  constructor(options: { limit?: number; now?: () => number } = {}) {
    this.limit = options.limit ?? OPEN_CACHE_ENTRIES;
    this.#now = options.now ?? Date.now;
  }

  /** Lookups answered from the cache, and lookups that were not (for tests and logs). */
  hits = 0;
  misses = 0;

  get size(): number {
    return this.#entries.size;
  }

  #tag(cek: Uint8Array): string {
    return createHmac("sha256", this.#tagKey).update(cek).digest("base64");
  }

  /** The open cached for `path` if it is still the file `identity` names, opened with `cek`. */
  get(path: string, identity: FileIdentity, cek: Uint8Array): CachedOpen | undefined {
    const e = this.#entries.get(path);
    if (e !== undefined) this.#entries.delete(path);
    if (e === undefined || !sameIdentity(e.identity, identity) || e.keyTag !== this.#tag(cek)) {
      this.misses++;
      return undefined;
    }
    this.#entries.set(path, e); // most recently used last
    this.hits++;
    return e.open;
  }

  /**
   * Keeps a verified open of `path` (replacing any earlier one); `fileId`: a received file. A
   * file written within the last RECENT_WRITE_MS is not kept (false).
   */
  set(
    path: string,
    identity: FileIdentity,
    cek: Uint8Array,
    open: CachedOpen,
    fileId?: number,
  ): boolean {
    this.#entries.delete(path);
    if (this.#now() - identity.mtimeMs < RECENT_WRITE_MS) return false;
    this.#entries.set(path, { identity, keyTag: this.#tag(cek), fileId, open });
    while (this.#entries.size > this.limit) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    return true;
  }

  /** Drops the entry of `path` (the file is gone or did not open). */
  forgetPath(path: string): void {
    this.#entries.delete(path);
  }

  /** Drops every entry of received file `fileId` (its access ended). */
  forgetFile(fileId: number): void {
    for (const [path, e] of this.#entries) {
      if (e.fileId === fileId) this.#entries.delete(path);
    }
  }
}
