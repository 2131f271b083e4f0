/**
 * Counts the members of a JSON-RPC batch in the raw body text without parsing it, so a batch
 * over the limit is refused before `JSON.parse` builds half a million objects from one request.
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

/**
 * The number of top-level members of `text` if it is a JSON array, counting no further than
 * `stopAt`; 0 when it is not an array (or empty). Malformed JSON gives some count: `JSON.parse`
 * reports it afterwards.
 */
export function countBatchMembers(text: string, stopAt: number): number {
  let i = 0;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== OPEN_ARRAY) return 0;
  i++;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  if (i >= text.length || text.charCodeAt(i) === CLOSE_ARRAY) return 0;
  let members = 1;
  let depth = 1;
  let inString = false;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
    else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (--depth === 0) break;
    } else if (c === COMMA && depth === 1 && ++members >= stopAt) break;
  }
  return members;
}
