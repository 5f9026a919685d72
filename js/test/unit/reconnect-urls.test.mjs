// reconnect-urls.test.mjs: reconnectUrl as a list, for a cluster without
// an edge (docs/client.md, "A first device"): every reconnect takes the
// next URL of the list, after the back-off as before, starting after the
// first connection's URL when the list holds it; a URL where nothing
// listens is passed over.  Played by fake nodes (test/fake-node.mjs).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { connect } from "../../dist/index.js";
import { WebSocketImpl } from "../platform-ws.mjs";
import { READY, fakeNode, until } from "../fake-node.mjs";

const nodes = [];
after(() => { for (const n of nodes) n.wss.close(); });

/* a node whose ready carries its name, so the client's ready says where it is */
async function named(name) {
  const n = await fakeNode((ws) => ws.send(JSON.stringify({ ...JSON.parse(READY), node: name })));
  nodes.push(n);
  return n;
}

/* a URL where nothing listens: a port taken and let go */
async function deadUrl() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, "127.0.0.1", r));
  const port = s.address().port;
  await new Promise((r) => s.close(r));
  return `ws://127.0.0.1:${port}/gateway`;
}

test("reconnectUrl as a list: each reconnect takes the next node, a dead URL passed over, the session resumed", async () => {
  const [a, b] = [await named("a"), await named("b")];
  const dead = await deadUrl();
  const c = connect({ url: a.url, reconnectUrl: [a.url, dead, b.url], token: "tok", WebSocket: WebSocketImpl,
    autoIdle: false, backoff: { minMs: 50, maxMs: 100 } });
  const readies = [];
  c.on("ready", (r) => readies.push(`${r.node}:${r.resumed}`));
  await until(() => readies.length === 1, 5000, "ready on a");
  for (const ws of a.wss.clients) ws.close(1012);          /* a restarts: the next URLs are dead, then b */
  await until(() => readies.length === 2, 5000, "ready on b");
  for (const ws of b.wss.clients) ws.close(1012);          /* b restarts: round to a */
  await until(() => readies.length === 3, 5000, "ready on a again");
  assert.deepEqual(readies, ["a:false", "b:true", "a:true"]);
  assert.equal(a.connections, 2);
  assert.equal(b.connections, 1);
  assert.match(b.received[0], /"op":"resume","token":"r1"/);
  c.close();
});

test("a single reconnectUrl still takes every reconnect", async () => {
  const [a, b] = [await named("a"), await named("b")];
  const c = connect({ url: a.url, reconnectUrl: b.url, token: "tok", WebSocket: WebSocketImpl,
    autoIdle: false, backoff: { minMs: 50, maxMs: 100 } });
  const readies = [];
  c.on("ready", (r) => readies.push(r.node));
  await until(() => readies.length === 1, 5000, "ready on a");
  for (const ws of a.wss.clients) ws.close(1012);
  await until(() => readies.length === 2, 5000, "ready on b");
  for (const ws of b.wss.clients) ws.close(1012);
  await until(() => readies.length === 3, 5000, "ready on b again");
  assert.deepEqual(readies, ["a", "b", "b"]);
  c.close();
});

test("a reconnectUrl list that is empty or holds a non-ws URL throws at connect", () => {
  for (const bad of [[], ["http://x/gateway"], ["ws://x/gateway", 7], "ftp://x"])
    assert.throws(() => connect({ url: "ws://x/gateway", reconnectUrl: bad, token: "tok", WebSocket: WebSocketImpl }), TypeError,
      JSON.stringify(bad));
});
