/**
 * The user text of a received chat mail, as Delta Chat shows it: without the signature footer
 * (after a `-- ` line) and, for chat messages, with the quote a reply puts above the text split
 * off (`core:src/simplify.rs`). Pure.
 */

const FOOTER_MARK = "-- ";
const ESCAPED_MARK = "-\u200B- ";

/**
 * Escapes footer marks in user text we send (a line starting `-- ` becomes `-ZWSP- `), so the
 * receiver does not cut it as a signature; Delta Chat does the same (`simplify.rs`).
 */
export function escapeFooterMarks(text: string): string {
  const inner = text.replaceAll(`\n${FOOTER_MARK}`, `\n${ESCAPED_MARK}`);
  return inner.startsWith(FOOTER_MARK) ? ESCAPED_MARK + inner.slice(FOOTER_MARK.length) : inner;
}

/** Undoes `escapeFooterMarks` on received chat text. */
export function unescapeFooterMarks(text: string): string {
  const inner = text.replaceAll(`\n${ESCAPED_MARK}`, `\n${FOOTER_MARK}`);
  return inner.startsWith(ESCAPED_MARK) ? FOOTER_MARK + inner.slice(ESCAPED_MARK.length) : inner;
}

/** A simplified text and the top quote it carried ('' for none). */
export interface SimplifiedText {
  readonly text: string;
  readonly quote: string;
}

/** Lines before the footer: everything above the first `-- ` (or `--  `) line. */
export function removeFooter(text: string): string {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => l === "-- " || l === "--  ");
  return at < 0 ? text : lines.slice(0, at).join("\n");
}

/**
 * Splits `text` (LF line ends) into the user text and the top quote: the leading lines that
 * start with `>`, with their `>` and one space removed. Only for chat messages
 * (`Chat-Version`): a classic mail's quoting is left as it is.
 */
export function simplifyText(text: string, chatMessage: boolean): SimplifiedText {
  const stripped = removeFooter(text);
  if (!chatMessage) return { text: stripped.replace(/\n+$/, ""), quote: "" };
  const body = unescapeFooterMarks(stripped);
  const lines = body.split("\n");
  let n = 0;
  while (n < lines.length && lines[n].startsWith(">")) n++;
  if (n === 0) return { text: body.replace(/\n+$/, ""), quote: "" };
  const quote = lines.slice(0, n).map((l) => l.slice(1).replace(/^ /, "")).join("\n");
  const rest = lines.slice(n).join("\n").replace(/^\n+/, "").replace(/\n+$/, "");
  return { text: rest, quote };
}
