/** Tests of mail_source.ts: a mail in memory and in a file read the same way. */
import assert from "node:assert/strict";
import { mailBytes, mailHead, mailSize, mailWhole, openMail } from "../../src/mime/mail_source.ts";
import { withTempDir } from "../_helpers/temp.ts";

Deno.test("a mail in memory and the same mail in a file give the same size, head and bytes", async () => {
  await withTempDir(async (dir) => {
    const bytes = new Uint8Array(100_000).map((_, i) => i % 256);
    await Deno.writeFile(`${dir}/m.eml`, bytes);
    for (
      const m of [mailBytes(bytes), { kind: "file", path: `${dir}/m.eml`, size: 100_000 } as const]
    ) {
      assert.equal(mailSize(m), 100_000);
      assert.deepEqual(await mailHead(m, 10), bytes.subarray(0, 10));
      assert.deepEqual(await mailHead(m, 200_000), bytes);
      assert.deepEqual(await mailWhole(m), bytes);
      const source = await openMail(m);
      const buf = new Uint8Array(30_000);
      let total = 0;
      for (let n = await source.read(buf); n !== null; n = await source.read(buf)) total += n;
      source.close();
      assert.equal(total, 100_000);
    }
  });
});
