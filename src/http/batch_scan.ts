/**
 * Counts the members of a JSON-RPC batch in the raw body bytes as they arrive, without decoding or
 * parsing them, so a batch over the limit is refused before the body is held or parsed.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Where the scanner is: before the first byte, after `[`, inside the array, or done. */
const Phase = { Start: 0, Opened: 1, Members: 2, Done: 3 } as const;
type Phase = typeof Phase[keyof typeof Phase];

/**
 * Counts the top-level members of a body that is a JSON array, fed in chunks of any size (a
 * chunk may end inside a string or an escape). Structural bytes are ASCII and never occur inside
 * a UTF-8 multi-byte sequence, so the bytes need no decoding. It counts no further than `stopAt`;
 * the count is 0 when the body is not an array (or is empty). Malformed JSON gives some count:
 * `JSON.parse` reports it afterwards.
 */
export class BatchScanner {
  #phase: Phase = Phase.Start;
  #members = 0;
  #depth = 0;
  #inString = false;
  #escaped = false;

  constructor(private readonly stopAt: number) {}

  /** Members counted so far (at most `stopAt`). */
  get members(): number {
    return this.#members;
  }

  /** True once the count is final: the array ended, `stopAt` was reached, or it is no array. */
  get done(): boolean {
    return this.#phase === Phase.Done;
  }

  /** Scans the next bytes of the body; returns the members counted so far. */
  feed(bytes: Uint8Array): number {
    let i = 0;
    const n = bytes.length;
    if (this.#phase === Phase.Start) {
      while (i < n && isSpace(bytes[i])) i++;
      if (i === n) return this.#members;
      if (bytes[i] !== OPEN_ARRAY) return this.#finish();
      this.#phase = Phase.Opened;
      i++;
    }
    if (this.#phase === Phase.Opened) {
      while (i < n && isSpace(bytes[i])) i++;
      if (i === n) return this.#members;
      if (bytes[i] === CLOSE_ARRAY) return this.#finish();
      this.#phase = Phase.Members;
      this.#members = 1;
      this.#depth = 1;
      if (this.#members >= this.stopAt) return this.#finish();
    }
    if (this.#phase === Phase.Members) this.#scanMembers(bytes, i);
    return this.#members;
  }

  #scanMembers(bytes: Uint8Array, from: number): void {
    let inString = this.#inString;
    let escaped = this.#escaped;
    let depth = this.#depth;
    let members = this.#members;
    for (let i = from; i < bytes.length; i++) {
      const c = bytes[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
        continue;
      }
      if (c === QUOTE) inString = true;
      else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
      else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        if (--depth === 0) {
          this.#phase = Phase.Done;
          break;
        }
      } else if (c === COMMA && depth === 1 && ++members >= this.stopAt) {
        this.#phase = Phase.Done;
        break;
      }
    }
    this.#inString = inString;
    this.#escaped = escaped;
    this.#depth = depth;
    this.#members = members;
  }

  #finish(): number {
    this.#phase = Phase.Done;
    return this.#members;
  }
}
