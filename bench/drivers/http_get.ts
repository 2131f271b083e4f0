/**
 * A minimal HTTP/1.1 GET client for benchmarks: one keep-alive TCP connection, bodies with a
 * `Content-Length` read into one reused buffer and dropped, so the client costs little CPU on a
 * machine whose cores the server under test needs too (fetch() copies each part into a new array).
 */

const CRLF2 = [13, 10, 13, 10];

/** What one GET got: status, body bytes, ms to the first body bytes and to the last one. */
export interface GetResult {
  readonly status: number;
  readonly bytes: number;
  readonly ttfb: number;
  readonly ms: number;
}

/** One connection to `hostname:port`; requests run one after another. */
export class HttpGetClient implements Disposable {
  #conn: Deno.TcpConn | undefined;
  readonly #buf = new Uint8Array(1 << 20);

  constructor(private readonly hostname: string, private readonly port: number) {}

  /**
   * GET `path` with `headers`; reads the whole body (it must have a Content-Length). A kept
   * connection the server closed meanwhile (its idle timeout) is replaced once.
   */
  async get(path: string, headers: Record<string, string> = {}): Promise<GetResult> {
    const reused = this.#conn !== undefined;
    try {
      return await this.#get(path, headers);
    } catch (err) {
      if (!reused || !(err instanceof ClosedBeforeHeaders)) throw err;
      this.#conn?.close();
      this.#conn = undefined;
      return await this.#get(path, headers);
    }
  }

  async #get(path: string, headers: Record<string, string>): Promise<GetResult> {
    const t0 = performance.now();
    this.#conn ??= await Deno.connect({ hostname: this.hostname, port: this.port });
    const conn = this.#conn;
    const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
    const request = new TextEncoder().encode(
      `GET ${path} HTTP/1.1\r\nHost: ${this.hostname}\r\n${lines}\r\n`,
    );
    try {
      for (let at = 0; at < request.length;) at += await conn.write(request.subarray(at));
    } catch {
      throw new ClosedBeforeHeaders(path);
    }
    const buf = this.#buf;
    let have = 0;
    let bodyAt = -1;
    while (bodyAt < 0) {
      const n = await conn.read(buf.subarray(have)).catch((err) => {
        if (have === 0) throw new ClosedBeforeHeaders(path);
        throw err;
      });
      if (n === null) throw new ClosedBeforeHeaders(path);
      have += n;
      bodyAt = indexOf(buf.subarray(0, have), CRLF2);
      if (bodyAt < 0 && have === buf.length) throw new Error(`GET ${path}: headers too long`);
    }
    const head = new TextDecoder().decode(buf.subarray(0, bodyAt));
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
    if (length === null) {
      throw new Error(`GET ${path}: no Content-Length (${head.split("\r\n")[0]})`);
    }
    const total = Number(length[1]);
    let bytes = have - (bodyAt + 4);
    let ttfb = bytes > 0 ? performance.now() - t0 : -1;
    while (bytes < total) {
      const n = await conn.read(buf);
      if (n === null) throw new Error(`GET ${path}: connection closed after ${bytes} of ${total}`);
      if (ttfb < 0) ttfb = performance.now() - t0;
      bytes += n;
    }
    if (bytes !== total) throw new Error(`GET ${path}: ${bytes - total} bytes after the body`);
    return { status, bytes, ttfb, ms: performance.now() - t0 };
  }

  [Symbol.dispose](): void {
    this.#conn?.close();
    this.#conn = undefined;
  }
}

/** The connection ended before a response began (a kept connection the server closed). */
class ClosedBeforeHeaders extends Error {
  constructor(path: string) {
    super(`GET ${path}: the connection closed before the response`);
  }
}

function indexOf(haystack: Uint8Array, needle: readonly number[]): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let k = 0; k < needle.length; k++) if (haystack[i + k] !== needle[k]) continue outer;
    return i;
  }
  return -1;
}
