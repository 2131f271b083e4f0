/**
 * ImapLoop against the real relay: mail is handed to reception in order and deleted only after
 * delivery resolved; a message whose delivery throws stays on the server (while it has attempts
 * left) and does not block the next.
 */
import assert from "node:assert/strict";
import { ConnectivityMonitor } from "../../src/core/connectivity.ts";
import { createImapClient } from "../../src/transport/imap_client.ts";
import { ImapLoop } from "../../src/transport/imap_loop.ts";
import { DEFAULT_DRAIN_LIMITS } from "../../src/transport/inbox_drain.ts";
import { createSmtpTransport } from "../../src/transport/smtp_client.ts";
import { NO_RELAY, startRelay } from "../_helpers/relay.ts";
import { MemorySink } from "./_memory_sink.ts";

Deno.test({
  name: "ImapLoop delivers new mail in order, deletes it after delivery, keeps what failed",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay({ filter: false, headerCleanup: false });
    const acc = await relay.register();
    const imap = {
      host: relay.host,
      port: relay.imapsPort,
      security: "ssl" as const,
      user: acc.email,
    };
    const smtp = {
      host: relay.host,
      port: relay.smtpsPort,
      security: "ssl" as const,
      user: acc.email,
    };
    const sink = new MemorySink((subject) => subject === "bad");
    const events = { publish: () => {} };
    const loop = new ImapLoop({
      params: { imap, smtp },
      password: acc.password,
      connectivity: new ConnectivityMonitor(events),
      events,
      reception: sink,
      drainLimits: { ...DEFAULT_DRAIN_LIMITS, maxAttempts: 100 },
    });
    const stop = new AbortController();
    loop.start(stop.signal);
    const transport = createSmtpTransport(smtp, acc.password);
    try {
      for (const subject of ["one", "bad", "three"]) {
        await transport.sendMail({ from: acc.email, to: acc.email, subject, text: subject });
      }
      await sink.until(() => sink.tried.length >= 3 && sink.delivered.length >= 2);
      await new Promise((r) => setTimeout(r, 500)); // let the delete land
    } finally {
      transport.close();
      stop.abort();
      await loop.stop();
    }
    assert.deepEqual(sink.delivered, ["one", "three"]);
    assert.deepEqual(sink.givenUp, []);
    const check = createImapClient(imap, acc.password);
    check.on("error", () => {});
    await check.connect();
    try {
      const box = await check.mailboxOpen("INBOX");
      assert.equal(box.exists, 1, "only the failed message is left on the server");
    } finally {
      await check.logout().catch(() => check.close());
    }
  },
});
