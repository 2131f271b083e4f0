/**
 * The user text of a received chat mail, as Delta Chat shows it: without the signature footer
 * (after a `-- ` line) and, for chat messages, with the quote a reply puts above the text split
 * off (`core:src/simplify.rs`). Pure.
 */

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
  const body = removeFooter(text);
  if (!chatMessage) return { text: body.replace(/\n+$/, ""), quote: "" };
  const lines = body.split("\n");
  let n = 0;
  while (n < lines.length && lines[n].startsWith(">")) n++;
  if (n === 0) return { text: body.replace(/\n+$/, ""), quote: "" };
  const quote = lines.slice(0, n).map((l) => l.slice(1).replace(/^ /, "")).join("\n");
  const rest = lines.slice(n).join("\n").replace(/^\n+/, "").replace(/\n+$/, "");
  return { text: rest, quote };
}
