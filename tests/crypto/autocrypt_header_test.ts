/** Tests of autocrypt_header.ts: the Level 1 parsing rules and folded formatting. */
import assert from "node:assert/strict";
import {
  formatAutocrypt,
  parseAutocrypt,
  pickAutocrypt,
} from "../../src/crypto/autocrypt_header.ts";
import { generateAccountKey } from "../../src/crypto/keygen.ts";

const key = (await generateAccountKey("alice@example.org")).publicKey;
const b64 = btoa(String.fromCharCode(...key));

Deno.test("formatAutocrypt() folds keydata into lines of at most 78 characters and round-trips", () => {
  const value = formatAutocrypt({
    addr: "Alice@Example.org",
    keydata: key,
    preferEncrypt: "mutual",
  });
  const header = `Autocrypt: ${value}`;
  for (const line of header.split("\r\n")) assert.ok(line.length <= 78, `${line.length}: ${line}`);
  const unfolded = value.replace(/\r\n /g, " ");
  const parsed = parseAutocrypt(unfolded)!;
  assert.equal(parsed.addr, "alice@example.org");
  assert.equal(parsed.preferEncrypt, "mutual");
  assert.deepEqual(parsed.keydata, key);
});

Deno.test("parseAutocrypt() follows the Level 1 rules", () => {
  assert.equal(parseAutocrypt(`addr=a@b.c; keydata=${b64}`)?.preferEncrypt, "nopreference");
  assert.deepEqual(parseAutocrypt(`addr=a@b.c; _verified=1; keydata=${b64}`)?.extra, {
    _verified: "1",
  });
  assert.equal(
    parseAutocrypt(`addr=a@b.c; critical=1; keydata=${b64}`),
    undefined,
    "unknown critical attribute",
  );
  assert.equal(parseAutocrypt(`keydata=${b64}; addr=a@b.c`), undefined, "keydata must be last");
  assert.equal(parseAutocrypt(`keydata=${b64}`), undefined, "addr is required");
  assert.equal(parseAutocrypt(`addr=a@b.c; keydata=%%%`), undefined, "bad base64");
  assert.equal(
    parseAutocrypt(`addr=a@b.c; keydata=${"A".repeat(11_000)}`),
    undefined,
    "over 10 KiB",
  );
  assert.equal(
    parseAutocrypt(`addr=a@b.c; addr=d@e.f; keydata=${b64}`),
    undefined,
    "duplicate attribute",
  );
});

Deno.test("pickAutocrypt() takes the last valid header whose addr is the sender", () => {
  const other = formatAutocrypt({ addr: "mallory@example.org", keydata: key }).replace(
    /\r\n /g,
    " ",
  );
  const first = `addr=alice@example.org; keydata=${b64}`;
  const last = `addr=alice@example.org; prefer-encrypt=mutual; keydata=${b64}`;
  assert.equal(
    pickAutocrypt([first, other, last, "garbage"], "ALICE@example.org")?.preferEncrypt,
    "mutual",
  );
  assert.equal(pickAutocrypt([other], "alice@example.org"), undefined);
});
