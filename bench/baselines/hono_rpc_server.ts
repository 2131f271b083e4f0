/**
 * Second HTTP baseline: the smallest Hono JSON-RPC handler (`c.req.json()` → `c.json()`), the
 * shape deno-notes measured. It shows what Hono + a JSON body costs before any gateway logic.
 */
import { Hono } from "hono";
const port = Number(Deno.args[0] ?? 7397);
const app = new Hono();
app.post("/rpc", async (c) => {
  const req = await c.req.json();
  return c.json({ jsonrpc: "2.0", id: req.id, result: "addr@example.org" });
});
Deno.serve({ hostname: "127.0.0.1", port, onListen: () => console.log("listening") }, app.fetch);
