/**
 * Mails that act on earlier messages instead of adding one (docs/protocol-notes.md §4): a reaction
 * (RFC 9078 `Content-Disposition: reaction`, aimed by `In-Reply-To`), an edit (`Chat-Edit`) and
 * a delete request (`Chat-Delete`). Pure: a read mail in, what it asks for out.
 */
import { leaves, partText } from "../../mime/parser.ts";
import { Header } from "../../protocol.ts";
import { removeFooter, simplifyText } from "../receive/text.ts";
import type { ContactRecord } from "../../store/mod.ts";
import { type ReadMail, stripAngles } from "../receive/mail_reader.ts";
import type { RenderedMail } from "./messages.ts";

/** Renders one of our control mails for the chat's members (`MailComposer.renderControl`). */
export type RenderControlFn = (
  control: ChatControl,
  recipients: readonly ContactRecord[],
  ephemeralTimer: number,
) => Promise<RenderedMail>;

/** Delta Chat prefixes edited text with this, for mail clients that do not know `Chat-Edit`. */
export const EDITED_PREFIX = "✏️";

/** Most bytes of one reaction; longer ones count as no reaction (as in Delta Chat). */
const MAX_REACTION_BYTES = 30;

/** What a control mail asks for, by the Message-IDs (without angle brackets) it names. */
export type ChatControl =
  | { readonly kind: "reaction"; readonly target: string; readonly reaction: string }
  | { readonly kind: "edit"; readonly target: string; readonly text: string }
  | { readonly kind: "delete"; readonly targets: readonly string[] };

/** The first emoji of a reaction text; '' (a removed reaction) when there is none or it is too long. */
export function reactionOf(text: string): string {
  const first = text.split(/[ \t\r\n]+/).find((t) => t !== "") ?? "";
  return new TextEncoder().encode(first).length < MAX_REACTION_BYTES ? first : "";
}

/** What `mail` asks for, or undefined when it is an ordinary chat message. */
export function chatControl(mail: ReadMail): ChatControl | undefined {
  const editOf = stripAngles(mail.headers.get(Header.CHAT_EDIT));
  const textPart = leaves(mail.content).find((p) => p.contentType.value === "text/plain");
  // Decoded only for a mail that is a control mail: every chat message passes through here.
  const text = () => textPart ? partText(textPart).replace(/\r\n/g, "\n") : "";
  if (editOf !== "") {
    const chatMessage = mail.headers.get(Header.CHAT_VERSION) !== undefined;
    const edited = simplifyText(text(), chatMessage).text;
    const plain = edited.startsWith(EDITED_PREFIX) ? edited.slice(EDITED_PREFIX.length) : edited;
    return { kind: "edit", target: editOf, text: plain };
  }
  const deletes = mail.headers.get(Header.CHAT_DELETE);
  if (deletes !== undefined) {
    const targets = deletes.split(/\s+/).map(stripAngles).filter((id) => id !== "");
    return { kind: "delete", targets: targets.slice(0, 1000) };
  }
  if (textPart?.disposition?.value === "reaction") {
    const target = stripAngles(mail.headers.get(Header.IN_REPLY_TO)?.trim().split(/\s+/)[0]);
    return { kind: "reaction", target, reaction: reactionOf(removeFooter(text())) };
  }
  return undefined;
}
