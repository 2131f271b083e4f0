/** Baseline for the HTTP benchmarks: a bare `Deno.serve` answering "ok" to everything. */
const port = Number(Deno.args[0] ?? 7399);
Deno.serve(
  { hostname: "127.0.0.1", port, onListen: () => console.log("listening") },
  () => new Response("ok"),
);
