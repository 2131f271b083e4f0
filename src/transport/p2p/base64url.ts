/** Base64url without padding, for the tokens and certificates in offers. */
import { Buffer } from "node:buffer";

/** Encodes bytes as base64url without padding. */
export function encodeBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64url");
}

/** Decodes base64url (no padding); throws on any other character. */
export function decodeBase64Url(text: string): Uint8Array<ArrayBuffer> {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new Error("not base64url");
  return new Uint8Array(Buffer.from(text, "base64url"));
}
