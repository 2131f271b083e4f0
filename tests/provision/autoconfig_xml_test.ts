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
