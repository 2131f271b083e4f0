/** The endpoint's short-lived self-signed certificate: creation, pin, and a peer's check. */
import "reflect-metadata"; // @peculiar/x509's dependency injection needs the Reflect polyfill
import * as x509 from "@peculiar/x509";
import { createHash } from "node:crypto";
import { P2pWire } from "../../constants.ts";
import { toHex } from "../../bytes.ts";
import { decodeBase64Url, encodeBase64Url } from "./base64url.ts";

const ECDSA_P256 = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

/** A certificate and key the endpoint listens with, and what an offer tells about it. */
export interface LocalCertificate {
  certPem: string;
  keyPem: string;
  /** DER, base64url (the offer's `cert`). */
  certB64: string;
  /** SHA-256 of the DER, hex (the offer's `pin`). */
  pin: string;
  serverName: string;
  notAfter: number;
}

/** SHA-256 of a certificate's DER, lower-case hex. */
export function certificatePin(der: Uint8Array): string {
  return createHash("sha256").update(der).digest("hex");
}

/** Makes an ECDSA P-256 leaf: CA:FALSE (critical), one SAN `<random>.p2p.invalid`. */
export async function createCertificate(
  now: number,
  validityMs: number,
): Promise<LocalCertificate> {
  const keys = await crypto.subtle.generateKey(ECDSA_P256, true, ["sign", "verify"]);
  const serverName = toHex(crypto.getRandomValues(new Uint8Array(16))) + P2pWire.SERVER_NAME_SUFFIX;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: toHex(crypto.getRandomValues(new Uint8Array(8))).replace(/^[89a-f]/, "1"),
    name: `CN=${serverName}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + validityMs),
    keys,
    signingAlgorithm: ECDSA_P256,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.SubjectAlternativeNameExtension([{ type: "dns", value: serverName }]),
    ],
  });
  const der = new Uint8Array(cert.rawData);
  const pkcs8 = await crypto.subtle.exportKey("pkcs8", keys.privateKey);
  return {
    certPem: cert.toString("pem"),
    keyPem: x509.PemConverter.encode(pkcs8, "PRIVATE KEY"),
    certB64: encodeBase64Url(der),
    pin: certificatePin(der),
    serverName,
    notAfter: now + validityMs,
  };
}

/** A peer's certificate as the dialer uses it: PEM for `caCerts`, the name to expect. */
export interface PeerCertificate {
  pem: string;
  serverName: string;
}

/**
 * Checks a peer's advertised certificate: the DER hashes to the pin, it is a CA:FALSE leaf whose
 * only SAN is the advertised `.p2p.invalid` name, valid now and for at most `maxValidityMs`.
 * Returns why not as a short phrase, or the certificate to pin.
 */
export function checkPeerCertificate(
  certB64: string,
  pin: string,
  serverName: string,
  now: number,
  maxValidityMs: number,
): PeerCertificate | string {
  let der: Uint8Array<ArrayBuffer>;
  try {
    der = decodeBase64Url(certB64);
  } catch {
    return "certificate is not base64url";
  }
  if (certificatePin(der) !== pin) return "certificate does not match its pin";
  let cert: x509.X509Certificate;
  try {
    cert = new x509.X509Certificate(new Uint8Array(der));
  } catch {
    return "certificate does not parse";
  }
  const bc = cert.getExtension(x509.BasicConstraintsExtension);
  if (!bc || bc.ca) return "certificate is not a CA:FALSE leaf";
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const names = san?.names.items ?? [];
  if (names.length !== 1 || names[0]?.type !== "dns" || names[0].value !== serverName) {
    return "certificate's SAN is not the advertised server name";
  }
  if (!serverName.endsWith(P2pWire.SERVER_NAME_SUFFIX)) return "server name is not under .invalid";
  const from = cert.notBefore.getTime(), to = cert.notAfter.getTime();
  if (now < from || now > to) return "certificate is not valid now";
  if (to - from > maxValidityMs) return "certificate is valid for too long";
  return { pem: cert.toString("pem"), serverName };
}
