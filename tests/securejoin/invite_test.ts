/** Tests of invite.ts: both link forms, escaping, tokens and clear errors. */
import assert from "node:assert/strict";
import {
  encodeParam,
  formatInvite,
  InvalidInviteError,
  parseInvite,
} from "../../src/securejoin/invite.ts";

const FPR = "0B2C6C0C6A2D3E4F5A6B7C8D9E0F1A2B3C4D08A4";
const I = "RqiMPXUB0bRmGAer3ziaFH7I";
const S = "ql5vOJ2niBKPf7kOlreor9Cp";

Deno.test("formatInvite() writes the legacy OPENPGP4FPR form with Delta Chat's escaping and no v=3", () => {
  const link = formatInvite({
    fingerprint: FPR.toLowerCase(),
    addr: "tpe0nuyz1@_bars.test",
    name: "Gateway",
    inviteNumber: I,
    auth: S,
  });
  assert.equal(link, `OPENPGP4FPR:${FPR}#a=tpe0nuyz1%40_bars.test&n=Gateway&i=${I}&s=${S}`);
  assert.doesNotMatch(link, /v=3/);
  assert.equal(encodeParam("Edge GW-1 ü"), "Edge+GW%2D1+%C3%BC");
});

Deno.test("parseInvite() round-trips and decodes + and percent escapes", () => {
  const link = formatInvite({
    fingerprint: FPR,
    addr: "gw@relay.test",
    name: "Edge GW-1 ü",
    inviteNumber: I,
    auth: S,
  });
  const inv = parseInvite(link);
  assert.deepEqual([inv.kind, inv.fingerprint, inv.addr, inv.name, inv.inviteNumber, inv.auth], [
    "contact",
    FPR,
    "gw@relay.test",
    "Edge GW-1 ü",
    I,
    S,
  ]);
});

Deno.test("parseInvite() accepts Delta Chat's https form with v=3 and relays, and %23 for #", () => {
  const inv = parseInvite(
    `https://i.delta.chat/#${FPR}&v=3&i=${I}&s=${S}&a=alice%40x.test&r=b%40y.test,c%40z.test&n=Alice`,
  );
  assert.deepEqual([inv.kind, inv.version, inv.addr, inv.name, inv.relays], [
    "contact",
    3,
    "alice@x.test",
    "Alice",
    ["b@y.test", "c@z.test"],
  ]);
  assert.equal(parseInvite(`openpgp4fpr:${FPR}%23a=a%40b.c&i=${I}&s=${S}`).inviteNumber, I);
  const group = parseInvite(
    `OPENPGP4FPR:${FPR}#x=grp123456789&i=${I}&s=${S}&a=a%40b.c&n=G&g=Spike+group`,
  );
  assert.deepEqual([group.kind, group.groupId, group.groupName], [
    "group",
    "grp123456789",
    "Spike group",
  ]);
});

Deno.test("parseInvite() accepts any https link whose fragment carries the invite (product-compat.md#invite-links)", () => {
  const fragment = `${FPR}&a=gw%40relay.test&n=GW&i=${I}&s=${S}`;
  for (
    const link of [
      `https://i.privittytech.com/#${fragment}`,
      `https://i.delta.chat/#${fragment}`,
      `HTTPS://I.Delta.Chat/#${fragment}`,
      `https://invite.example.org/join/?ref=x#${fragment}`,
      `https://i.privittytech.com/#OPENPGP4FPR:${FPR}#a=gw%40relay.test&n=GW&i=${I}&s=${S}`,
      `  https://i.privittytech.com/#${fragment}\n`,
    ]
  ) {
    const inv = parseInvite(link);
    assert.deepEqual([inv.kind, inv.fingerprint, inv.addr, inv.name, inv.inviteNumber, inv.auth], [
      "contact",
      FPR,
      "gw@relay.test",
      "GW",
      I,
      S,
    ], link);
  }
});

Deno.test("parseInvite() accepts the product's ?-separated OPENPGP4FPR form, any case", () => {
  for (
    const link of [
      `OPENPGP4FPR:${FPR}?a=factory-gw-01%40chat.privittytech.com&n=factory-gw-01&i=${I}&s=${S}`,
      `openpgp4fpr:${FPR.toLowerCase()}?a=factory-gw-01%40chat.privittytech.com&n=factory-gw-01&i=${I}&s=${S}`,
      `OpenPGP4Fpr:${FPR}#a=factory-gw-01%40chat.privittytech.com&n=factory-gw-01&i=${I}&s=${S}`,
    ]
  ) {
    const inv = parseInvite(link);
    assert.deepEqual([inv.kind, inv.fingerprint, inv.addr, inv.name, inv.inviteNumber, inv.auth], [
      "contact",
      FPR,
      "factory-gw-01@chat.privittytech.com",
      "factory-gw-01",
      I,
      S,
    ], link);
  }
});

Deno.test("formatInvite() keeps Delta Chat's # form for our own invites", () => {
  const link = formatInvite({
    fingerprint: FPR,
    addr: "a@b.c",
    name: "N",
    inviteNumber: I,
    auth: S,
  });
  assert.match(link, new RegExp(`^OPENPGP4FPR:${FPR}#a=`));
  assert.doesNotMatch(link, /\?/);
});

Deno.test("parseInvite() tells a fingerprint-only link from an invite and cuts long names as Delta Chat does", () => {
  assert.equal(parseInvite(`OPENPGP4FPR:${FPR}#a=a%40b.c`).kind, "fingerprint");
  const long = formatInvite({
    fingerprint: FPR,
    addr: "a@b.c",
    name: "A very long gateway display name",
    inviteNumber: I,
    auth: S,
  });
  assert.equal(parseInvite(long).name, "A very long gateway displ…".slice(0, 24) + "…");
});

Deno.test("parseInvite() explains what is wrong", () => {
  const cases: [string, RegExp][] = [
    ["hello", /not an invite link: expected OPENPGP4FPR:.* or an https link whose fragment/],
    ["http://i.delta.chat/#" + FPR, /not an invite link/],
    ["https://i.privittytech.com/", /the https link has no #fragment carrying the invite/],
    ["https://i.privittytech.com/#", /the https link has no #fragment carrying the invite/],
    ["https://exa mple.com/#x", /the https link is not a valid URL/],
    [
      "https://example.com/#section-2",
      /invalid fingerprint in invite link: fingerprint must have 40 hex digits/,
    ],
    [
      `OPENPGP4FPR:ABC#a=a%40b.c&i=${I}&s=${S}`,
      /invalid fingerprint in invite link: fingerprint must have 40 hex digits, got 3/,
    ],
    [`OPENPGP4FPR:${FPR}#i=${I}&s=${S}`, /no valid address/],
    [`OPENPGP4FPR:${FPR}#a=a%40b.c&i=short&s=${S}`, /i= must be 11-32 base64url/],
    [`OPENPGP4FPR:${FPR}#a=%E0%A4%A&i=${I}&s=${S}`, /not valid percent-encoding/],
  ];
  for (const [link, re] of cases) {
    assert.throws(
      () => parseInvite(link),
      (e: Error) => e instanceof InvalidInviteError && re.test(e.message),
      link,
    );
  }
});
