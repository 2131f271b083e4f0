/** The send-file progress line, and the bar drawn on a terminal from the transfer's events. */
import assert from "node:assert/strict";
import { runCli } from "../../src/cli/mod.ts";
import { progressLine } from "../../src/cli/transfer_progress.ts";
import { startFakeDaemon } from "./fixtures/fake_daemon.ts";

Deno.test("the progress line shows a bar, the percentage and megabytes", () => {
  assert.equal(progressLine(0, 2_000_000, 10), "[..........]   0 %  0.0 / 2.0 MB");
  assert.equal(progressLine(1_000_000, 2_000_000, 10), "[#####.....]  50 %  1.0 / 2.0 MB");
  assert.equal(progressLine(2_000_000, 2_000_000, 10), "[##########] 100 %  2.0 / 2.0 MB");
});

/** Runs the CLI in this process with stderr as a terminal (or not); returns stdout and stderr. */
async function runOnTerminal(args: string[], url: string, terminal: boolean) {
  let stdout = "", stderr = "";
  const code = await runCli(args, {
    stdout: (t) => Promise.resolve(void (stdout += t)),
    stderr: (t) => Promise.resolve(void (stderr += t)),
    env: (name) => name === "EDGE_URL" ? url : undefined,
    stderrIsTerminal: () => terminal,
  });
  return { code, stdout, stderr };
}

const FIELDS = {
  chatId: 10,
  msgId: 44,
  transferId: "t",
  direction: "out" as const,
  total: 2_000_000,
  path: "relay" as const,
};

Deno.test("send-file on a terminal follows the transfer's events to the end", async () => {
  const d = await startFakeDaemon({
    rpc: {
      send_msg: { result: 44 },
      get_transfer: { result: { state: "active", reason: "", bytes: 0, total: 2_000_000 } },
    },
    events: {
      list: [
        { id: 1, event: { kind: "TransferProgress", ...FIELDS, msgId: 7, bytes: 1 } },
        { id: 2, event: { kind: "TransferProgress", ...FIELDS, bytes: 1_000_000 } },
        { id: 3, event: { kind: "TransferDone", ...FIELDS, bytes: 2_000_000 } },
      ],
      perConnection: 10,
    },
  });
  try {
    const tty = await runOnTerminal(["send-file", "10", "/srv/files/big.bin"], d.url, true);
    assert.equal(tty.code, 0);
    assert.match(tty.stdout, /44/);
    assert.match(tty.stderr, / 50 % {2}1\.0 \/ 2\.0 MB/);
    assert.match(tty.stderr, /100 % {2}2\.0 \/ 2\.0 MB {2}delivered\n$/);
    const pipe = await runOnTerminal(["send-file", "10", "/srv/files/big.bin"], d.url, false);
    assert.deepEqual([pipe.code, pipe.stderr], [0, ""], "no bar off a terminal");
  } finally {
    await d.close();
  }
});
