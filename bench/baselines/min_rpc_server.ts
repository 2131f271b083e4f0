/**
 * Third HTTP baseline: the least any JSON-RPC server on `Deno.serve` must do per request (check
 * Content-Type, parse the body, answer JSON), with no framework and no dispatch. The gateway's
 * ratio to it is its own overhead; its ratio to the raw "ok" server is the runtime's.
 */
const port = Number(Deno.args[0] ?? 7398);
Deno.serve(
  { hostname: "127.0.0.1", port, onListen: () => console.log("listening") },
  async (req) => {
    if (req.headers.get("content-type") !== "application/json") {
      return new Response(null, { status: 415 });
    }
    const msg = await req.json();
    return Response.json({ jsonrpc: "2.0", id: msg.id, result: "addr@example.org" });
  },
);
