/**
 * Random identifiers of the protocol: tokens for invites and Message-IDs, group ids and channel
 * secrets, all URL-safe base64 as Delta Chat makes them (tools.rs `create_id`).
 */

/** Source of random bytes (tests pin it). */
export type RandomBytes = (n: number) => Uint8Array;

const secureRandom: RandomBytes = (n) => crypto.getRandomValues(new Uint8Array(n));

/** `n` random bytes as URL-safe base64 without padding. */
export function randomBase64Url(n: number, random: RandomBytes = secureRandom): string {
  return btoa(String.fromCharCode(...random(n))).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** A random token: 18 bytes as 24 base64url characters (`i=` / `s=`, Message-IDs, group ids). */
export function newToken(random: RandomBytes = secureRandom): string {
  return randomBase64Url(18, random);
}
