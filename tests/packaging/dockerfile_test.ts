/** Static checks of the Dockerfile (no Docker engine here): the final image's contract. */
import assert from "node:assert/strict";
import { roleOf, runsDaemon } from "../../src/program_name.ts";

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
  has(/^EXPOSE 7200\/udp$/); // the direct file path over QUIC (docs/p2p.md)
  has(/^ENV PRIVITTY_P2P_LISTEN=0\.0\.0\.0:7200$/);
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

Deno.test("Dockerfile ships the product's names on PATH as links to the one binary (product-compat.md#container)", () => {
  assert.match(text, /for name in edge-gateway privitty-edged privitty-edge; do/);
  assert.match(text, /ln -s \/edge-gateway "\/rootfs\/usr\/local\/bin\/\$name"/);
  assert.ok(finalStage.some((l) => /^ENV PATH=\/usr\/local\/bin /.test(l)), "PATH finds them");
  assert.ok(
    !finalStage.some((l) => /EDGE_DATA_DIR=/.test(l)),
    "no image-set EDGE_ variable shadows a user's PRIVITTY_ twin",
  );
});

Deno.test("Dockerfile's entry point serves the docker run line and the compose command (product-compat.md#container)", () => {
  const json = (directive: string) =>
    JSON.parse(finalStage.find((l) => l.startsWith(`${directive} `))!.slice(directive.length + 1));
  const entrypoint: string[] = json("ENTRYPOINT");
  const cmd: string[] = json("CMD");
  assert.equal(roleOf(entrypoint[0]), "any", "the neutral name decides by the arguments");
  // `docker run … privitty/edge:latest`: ENTRYPOINT + CMD.
  assert.deepEqual([...entrypoint.slice(1), ...cmd], ["serve"]);
  // compose `command:` replaces CMD.
  const compose = ["--listen", "0.0.0.0:7200", "--accounts", "/var/lib/privitty", "--cors"];
  assert.equal(runsDaemon([...entrypoint.slice(1), ...compose]), true);
  // `docker run … privitty/edge:latest license status` is the CLI.
  assert.equal(runsDaemon([...entrypoint.slice(1), "license", "status"]), false);
});

Deno.test("Dockerfile listens on every interface inside the container (the daemon's default is loopback)", () => {
  // The PRIVITTY_ twin: a user's EDGE_HOST, PRIVITTY_HOST, --host or --listen still wins.
  assert.ok(finalStage.includes("ENV PRIVITTY_HOST=0.0.0.0"), "ENV PRIVITTY_HOST=0.0.0.0");
  assert.ok(!finalStage.some((l) => /EDGE_HOST=/.test(l)), "no image-set EDGE_HOST");
});

Deno.test("Dockerfile sets glibc's mmap threshold as scripts/start.sh does", () => {
  const start = Deno.readTextFileSync(new URL("../../scripts/start.sh", import.meta.url));
  const fromStart = /MALLOC_MMAP_THRESHOLD_:-(\d+)/.exec(start)?.[1];
  const fromImage = finalStage.join("\n").match(/MALLOC_MMAP_THRESHOLD_=(\d+)/)?.[1];
  assert.ok(fromStart !== undefined, "start.sh sets a default");
  assert.equal(fromImage, fromStart);
});
