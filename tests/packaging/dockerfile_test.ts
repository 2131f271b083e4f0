/** Static checks of the Dockerfile (no Docker engine here): the final image's contract. */
import assert from "node:assert/strict";

const text = Deno.readTextFileSync(new URL("../../Dockerfile", import.meta.url));
const lines = text.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
const finalStage = lines.slice(lines.findLastIndex((l) => /^FROM\s/i.test(l)));

Deno.test("Dockerfile is multi-stage and its final stage is FROM scratch", () => {
  assert.ok(lines.filter((l) => /^FROM\s/i.test(l)).length >= 2);
  assert.equal(finalStage[0], "FROM scratch");
});

Deno.test("Dockerfile final stage runs as 1000:1000 with the data volume, port and exec-form health check", () => {
  const has = (re: RegExp) => assert.ok(finalStage.some((l) => re.test(l)), `missing ${re}`);
  has(/^USER 1000:1000$/);
  has(/^EXPOSE 7200$/);
  has(/^VOLUME \["\/var\/lib\/privitty"\]$/);
  has(/^HEALTHCHECK .*--start-period=\d+s.* CMD \["\/edge-gateway", "health"\]$/);
  has(/^ENTRYPOINT \["\/edge-gateway"\]$/);
  has(/^ENV .*HOME=\/tmp/);
});

Deno.test("Dockerfile builds with compile.sh and copies the libraries ldd lists", () => {
  assert.match(text, /\.\/compile\.sh --target/);
  assert.match(text, /ldd \/rootfs\/edge-gateway/);
  assert.match(text, /chmod 1777 \/rootfs\/tmp/);
  assert.match(text, /chown 1000:1000 \/rootfs\/var\/lib\/privitty/);
});
