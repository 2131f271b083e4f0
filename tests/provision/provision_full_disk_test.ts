/**
 * provision() on a full disk (issue 18 §3), on a real tmpfs: a provisioned account starts (its
 * store says the disk is full, writes that can wait are left for the next start), a new account
 * cannot be set up and the start error says the disk is full, naming the step.
 */
import assert from "node:assert/strict";
import { StartupError } from "../../src/errors.ts";
import { setLogSink } from "../../src/log.ts";
import { provision, type ProvisionDeps } from "../../src/provision/mod.ts";
import { ConfigKey } from "../../src/store/mod.ts";
import { fillDisk, mountTmpfs, NO_TMPFS } from "../_helpers/tmpfs.ts";
import { autoconfigXml, fakeFetch, fakeLogins, testConfig } from "./_fakes.ts";

const NEW = "http://127.0.0.1:8080/new";
const AUTOCONFIG = "http://127.0.0.1:8080/.well-known/autoconfig/mail/config-v1.1.xml";
const ACCOUNT = JSON.stringify({ email: "abcdefghi@_relay.test", password: "s3cret-pass-word" });

function deps(): Partial<ProvisionDeps> {
  const logins = fakeLogins(["127.0.0.1"]);
  return {
    fetch: fakeFetch({ [NEW]: ACCOUNT, [AUTOCONFIG]: autoconfigXml("127.0.0.1") }).fetch,
    verifyImap: logins.verifyImap,
    verifySmtp: logins.verifySmtp,
    clock: () => 1_700_000_000_000,
  };
}

Deno.test({
  name: "a provisioned account starts on a full disk; the display name waits for space",
  ignore: NO_TMPFS,
  async fn() {
    const lines: string[] = [];
    const prev = setLogSink((l) => lines.push(l));
    try {
      await using fs = await mountTmpfs("prov-full", "8m");
      const dataDir = `${fs.path}/data`;
      const first = await provision(testConfig(dataDir), deps());
      first.store.close();
      first.lock.release();
      fillDisk(`${fs.path}/filler`);
      const again = await provision(testConfig(dataDir, { EDGE_PROFILE: "Renamed" }), deps());
      try {
        assert.equal(again.addr, first.addr);
        assert.equal(again.fingerprint, first.fingerprint);
        assert.equal(again.store.disk.word, "full");
        assert.equal(again.store.config.get(ConfigKey.DISPLAY_NAME), "Gateway One");
        assert.ok(
          lines.some((l) =>
            /the disk is full: the display name .* left for the next start/.test(l)
          ),
          lines.join("\n"),
        );
      } finally {
        again.store.close();
        again.lock.release();
      }
    } finally {
      setLogSink(prev);
    }
  },
});

Deno.test({
  name: "a new account on a full disk: the start fails saying the disk is full",
  ignore: NO_TMPFS,
  async fn() {
    const prev = setLogSink(() => {});
    try {
      await using fs = await mountTmpfs("prov-full-new", "1m");
      fillDisk(`${fs.path}/filler`);
      const dataDir = `${fs.path}/data`;
      await assert.rejects(
        () => provision(testConfig(dataDir), deps()),
        (err: unknown) => {
          assert.ok(err instanceof StartupError, String(err));
          assert.match(err.message, /^the disk is full \(.+\): the start step ".+" cannot go on/);
          assert.match(err.message, /free space in the data directory and start again/);
          return true;
        },
      );
    } finally {
      setLogSink(prev);
    }
  },
});
