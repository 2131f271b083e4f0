/**
 * The inner MIME of the hidden transfer mails (docs/transfer.md#mails): a part carries its
 * payload as the body with `Content-Transfer-Encoding: binary`, so the OpenPGP literal data holds
 * the file's bytes as they are and the armor is the only base64 layer (~1.37× on the wire); a
 * control mail carries only its header. Both are sealed like any chat mail (encrypted, signed).
 */
import { rfc5322Date } from "../../mime/encrypted_envelope.ts";
import { Capability, CHAT_VERSION, Header } from "../../protocol.ts";

/** The inputs of one hidden transfer mail. */
export interface TransferMailInput {
  readonly from: string;
  readonly to: readonly string[];
  /** Message-ID without angle brackets. */
  readonly messageId: string;
  readonly date: Date;
  /** The one transfer header: part or control. */
  readonly header: readonly [string, string];
  /** A part's payload; none for a control mail. */
  readonly body?: Uint8Array;
}

/** The header every mail of ours carries: what this gateway can receive. */
export const CAPABILITY_HEADER: readonly [string, string] = [
  Header.EDGE_CAPABILITIES,
  Capability.LARGE_FILES,
];

/** Renders the inner MIME (CRLF headers, then the binary body). */
export function renderTransferMail(m: TransferMailInput): Uint8Array {
  const head = renderTransferHead(m);
  const body = m.body ?? new Uint8Array();
  const out = new Uint8Array(head.byteLength + body.byteLength);
  out.set(head, 0);
  out.set(body, head.byteLength);
  return out;
}

/**
 * The inner MIME's headers and the blank line: a part's payload follows as it is (so a part can
 * be streamed from its file after them).
 */
export function renderTransferHead(m: Omit<TransferMailInput, "body">): Uint8Array {
  const headers: [string, string][] = [
    [Header.FROM, `<${m.from}>`],
    [Header.TO, m.to.map((a) => `<${a}>`).join(", ")],
    [Header.SUBJECT, "[...]"],
    [Header.DATE, rfc5322Date(m.date)],
    [Header.MESSAGE_ID, `<${m.messageId}>`],
    [Header.CHAT_VERSION, CHAT_VERSION],
    ["MIME-Version", "1.0"],
    [Header.CONTENT_TYPE, "application/octet-stream"],
    ["Content-Transfer-Encoding", "binary"],
    [CAPABILITY_HEADER[0], CAPABILITY_HEADER[1]],
    [m.header[0], m.header[1]],
  ];
  return new TextEncoder().encode(
    headers.map(([k, v]) => `${k}: ${v}`).join("\r\n") + "\r\n\r\n",
  );
}

/** Whether a mail's headers announce the large-file capability. */
export function announcesLargeFiles(value: string | undefined): boolean {
  return (value ?? "").split(/[\s,]+/).includes(Capability.LARGE_FILES);
}
