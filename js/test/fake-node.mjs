// fake-node.mjs: a node played by a WebSocket server of the `ws` package on
// 127.0.0.1, for the unit tests that need a node to say what a real one
// would not, or to see exactly what the client sent.
import assert from "node:assert/strict";
import { WebSocketServer } from "ws";

export const READY = JSON.stringify({ op: "ready", session: "s", bind: "b", resume: "r1", node: "n", heartbeat_ms: 30000 });

/* A fake node: answers every identify or resume with reply(conn, index);
 * node.received holds every message of every connection, in order. */
export function fakeNode(reply) {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  const node = { wss, connections: 0, received: [], url: "" };
  wss.on("connection", (ws) => {
    const index = node.connections++;
    ws.on("message", (data, binary) => {
      node.received.push(binary ? data : String(data));
      if (!binary && /"op":"(identify|resume)"/.test(String(data))) reply(ws, index);
    });
  });
  return new Promise((resolve) => wss.on("listening", () => {
    node.url = `ws://127.0.0.1:${wss.address().port}/gateway`;
    resolve(node);
  }));
}

/* Waits until fn() is true; fails the test after ms. */
export async function until(fn, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (fn()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`${what}: not within ${ms} ms`);
}
