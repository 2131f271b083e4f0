/** Tests of autoconfig_xml.ts: Mozilla and Outlook documents into server candidates. */
import assert from "node:assert/strict";
import {
  outlookRedirect,
  parseMozillaAutoconfig,
  parseOutlookAutodiscover,
} from "../../src/provision/autoconfig_xml.ts";

const MOZILLA = `<?xml version="1.0"?>
<clientConfig version="1.1"><emailProvider id="example.org">
  <incomingServer type="imap"><hostname>imap.example.org</hostname><port>993</port>
    <socketType>SSL</socketType><username>%EMAILADDRESS%</username></incomingServer>
  <incomingServer type="pop3"><hostname>pop.example.org</hostname><port>995</port>
    <socketType>SSL</socketType><username>%EMAILADDRESS%</username></incomingServer>
  <incomingServer type="imap"><hostname>%EMAILDOMAIN%</hostname><port>143</port>
    <socketType>STARTTLS</socketType><username>%EMAILLOCALPART%</username></incomingServer>
  <incomingServer type="imap"><hostname>broken.example.org</hostname>
    <socketType>SSL</socketType><username>x</username></incomingServer>
  <outgoingServer type="smtp"><hostname>smtp.example.org</hostname><port>465</port>
    <socketType>SSL</socketType><username>%EMAILADDRESS%</username></outgoingServer>
  <outgoingServer type="smtp"><hostname>smtp.example.org</hostname><port>25</port>
    <socketType>plain</socketType><username>%EMAILADDRESS%</username></outgoingServer>
</emailProvider></clientConfig>`;

Deno.test("parseMozillaAutoconfig() substitutes placeholders and keeps IMAP/SMTP in order", () => {
  const c = parseMozillaAutoconfig(MOZILLA, "alice@example.org");
  assert.deepEqual(c.imap, [
    { host: "imap.example.org", port: 993, security: "ssl", user: "alice@example.org" },
    { host: "example.org", port: 143, security: "starttls", user: "alice" },
  ]);
  assert.deepEqual(c.smtp, [
    { host: "smtp.example.org", port: 465, security: "ssl", user: "alice@example.org" },
    { host: "smtp.example.org", port: 25, security: "plain", user: "alice@example.org" },
  ]);
});

Deno.test("parseMozillaAutoconfig() returns nothing for garbage", () => {
  assert.deepEqual(parseMozillaAutoconfig("<html>nope</html>", "a@b.c"), { imap: [], smtp: [] });
});

Deno.test("parseOutlookAutodiscover() reads Protocol entries and redirects", () => {
  const xml = `<Autodiscover><Response><Account>
    <Protocol><Type>IMAP</Type><Server>mx.example.org</Server><Port>993</Port><SSL>on</SSL></Protocol>
    <Protocol><Type>SMTP</Type><Server>mx.example.org</Server><Port>587</Port><SSL>off</SSL></Protocol>
  </Account></Response></Autodiscover>`;
  const c = parseOutlookAutodiscover(xml, "bob@example.org");
  assert.deepEqual(c.imap, [{
    host: "mx.example.org",
    port: 993,
    security: "ssl",
    user: "bob@example.org",
  }]);
  assert.deepEqual(c.smtp, [{
    host: "mx.example.org",
    port: 587,
    security: "plain",
    user: "bob@example.org",
  }]);
  assert.equal(outlookRedirect("<RedirectUrl>https://x/a.xml</RedirectUrl>"), "https://x/a.xml");
});

Deno.test("parseMozillaAutoconfig() reads any attribute order, entities, and unknown socketType as automatic", () => {
  const xml = `<clientConfig><emailProvider>
    <incomingServer id='1' type='IMAP'><hostname>IMAP.Example.org</hostname><port>993</port>
      <socketType>weird</socketType><username>u&amp;%EMAILLOCALPART%</username></incomingServer>
    <incomingServer type="imap"><hostname>imap.example.org</hostname><port>1143</port>
      <username>%EMAILADDRESS%</username></incomingServer>
    <incomingServer type="imap"><port>993</port><username>x</username></incomingServer>
    <incomingServer type="imap"><hostname>h</hostname><port>993</port></incomingServer>
    <incomingServer type="imap"><hostname>h</hostname><port>99x</port><username>x</username></incomingServer>
    <outgoingServer type="smtp"><hostname>%EMAILDOMAIN%</hostname><port>465</port>
      <username>%EMAILADDRESS%</username></outgoingServer>
  </emailProvider></clientConfig>`;
  const c = parseMozillaAutoconfig(xml, "alice@example.org");
  assert.deepEqual(c.imap, [
    { host: "imap.example.org", port: 993, security: "ssl", user: "u&alice" },
    { host: "imap.example.org", port: 1143, security: "starttls", user: "alice@example.org" },
  ]);
  assert.deepEqual(c.smtp, [
    { host: "example.org", port: 465, security: "ssl", user: "alice@example.org" },
  ]);
});

Deno.test("parseMozillaAutoconfig() reads the test relay's document (SSL, STARTTLS, plain)", () => {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<clientConfig version="1.1">
  <emailProvider id="_relay.test">
    <domain>_relay.test</domain>
    <incomingServer type="imap">
      <hostname>127.0.0.1</hostname>
      <port>21993</port>
      <socketType>SSL</socketType>
      <authentication>password-cleartext</authentication>
      <username>%EMAILADDRESS%</username>
    </incomingServer>
    <incomingServer type="imap">
      <hostname>127.0.0.1</hostname>
      <port>21143</port>
      <socketType>STARTTLS</socketType>
      <authentication>password-cleartext</authentication>
      <username>%EMAILADDRESS%</username>
    </incomingServer>
    <incomingServer type="imap">
      <hostname>127.0.0.1</hostname>
      <port>21143</port>
      <socketType>plain</socketType>
      <authentication>password-cleartext</authentication>
      <username>%EMAILADDRESS%</username>
    </incomingServer>
  </emailProvider>
</clientConfig>`;
  const c = parseMozillaAutoconfig(xml, "abc@_relay.test");
  assert.deepEqual(c.imap.map((e) => `${e.port}/${e.security}`), [
    "21993/ssl",
    "21143/starttls",
    "21143/plain",
  ]);
  assert.deepEqual(c.smtp, []);
});

Deno.test("parseOutlookAutodiscover() uses LoginName when given and drops entries without a server", () => {
  const xml = `<Autodiscover><Response><Account>
    <Protocol><Type>IMAP</Type><Server>mx.example.org</Server><Port>143</Port>
      <LoginName>bob</LoginName></Protocol>
    <Protocol><Type>SMTP</Type><Port>587</Port></Protocol>
    <Protocol><Type>POP3</Type><Server>pop.example.org</Server><Port>995</Port></Protocol>
  </Account></Response></Autodiscover>`;
  const c = parseOutlookAutodiscover(xml, "bob@example.org");
  assert.deepEqual(c.imap, [{
    host: "mx.example.org",
    port: 143,
    security: "starttls",
    user: "bob",
  }]);
  assert.deepEqual(c.smtp, []);
  assert.equal(outlookRedirect(xml), undefined);
});
