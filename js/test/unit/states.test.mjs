// states.test.mjs: when the client's state events come, against a fake
// node (test/fake-node.mjs): the first one, connecting with reason
// "connect", reaches a listener added right after connect(); a client made
// with new Client() waits for open(); a silent node is given up within
// the bounds docs/client.md ("Reconnecting") gives; an op of the other
// kind (a person's ack) is refused at the call, before the node would
// close the connection with 4002 for good; a socket given up while it
// still connects raises nothing (the ws package's error on an abort).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { WebSocket as WsWebSocket } from "ws";
import { connect, Client } from "../../dist/index.js";
import { WebSocketImpl } from "../platform-ws.mjs";
import { READY, fakeNode, until } from "../fake-node.mjs";

const nodes = [];
after(() => { for (const n of nodes) n.wss.close(); });

async function node(reply = (ws) => ws.send(READY)) {
  const n = await fakeNode(reply);
  nodes.push(n);
  return n;
}

test("the first state event (connecting, connect) reaches a listener added right after connect()", async () => {
  const n = await node();
  const states = [];
  const c = connect({ url: n.url, token: "tok", WebSocket: WebSocketImpl, autoIdle: false });
  assert.equal(c.state, "connecting", "the state is connecting at once");
  c.on("state", (s) => states.push(`${s.state}:${s.reason}:${s.code}`));
  await until(() => c.state === "connected", 5000, "ready");
  assert.deepEqual(states, ["connecting:connect:0", "connected:ready:0"]);
  c.close();
});

test("new Client() is disconnected and sends nothing until open(); open() twice dials once", async () => {
  const n = await node();
  const c = new Client({ url: n.url, token: "tok", WebSocket: WebSocketImpl, autoIdle: false });
  const states = [];
  c.on("state", (s) => states.push(`${s.state}:${s.reason}`));
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(c.state, "disconnected");
  assert.equal(n.connections, 0);
  assert.deepEqual(states, []);
  assert.equal(c.open(), c);
  c.open();
  await until(() => c.state === "connected", 5000, "ready");
  assert.deepEqual(states, ["connecting:connect", "connected:ready"]);
  assert.equal(n.connections, 1);
  c.close();
});

test("close() right after connect(): closed, and no connecting event after it", async () => {
  const n = await node();
  const states = [];
  const c = connect({ url: n.url, token: "tok", WebSocket: WebSocketImpl, autoIdle: false });
  c.on("state", (s) => states.push(`${s.state}:${s.reason}`));
  c.close();
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(states, ["closed:client"]);
  assert.equal(n.connections, 0);
});

test("close() while the socket is still connecting, on the ws package: closed, no uncaught error", async () => {
  /* a server that takes the TCP connection and never answers the handshake */
  const tcp = net.createServer(() => {});
  await new Promise((r) => tcp.listen(0, "127.0.0.1", r));
  try {
    const c = connect({ url: `ws://127.0.0.1:${tcp.address().port}/gateway`, token: "tok", WebSocket: WsWebSocket, autoIdle: false });
    await new Promise((r) => setTimeout(r, 200));
    c.close();
    /* the ws package reports the aborted handshake as an error event on the next tick */
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(c.state, "closed");
  } finally {
    tcp.close();
  }
});

/* A node that sends ready with heartbeat_ms 1000 and answers the first
 * `answers` heartbeats, then nothing: when did the client give up, counted
 * from the last message the node sent? */
async function silentAfter(answers) {
  let lastSent = 0, heartbeats = 0;
  const n = await node((ws) => {
    ws.send(JSON.stringify({ ...JSON.parse(READY), heartbeat_ms: 1000 }));
    lastSent = Date.now();
    ws.on("message", (d) => {
      if (/"op":"heartbeat"/.test(String(d)) && heartbeats++ < answers) {
        ws.send('{"op":"heartbeat_ack"}');
        lastSent = Date.now();
      }
    });
  });
  const c = connect({ url: n.url, token: "tok", WebSocket: WebSocketImpl, autoIdle: false, backoff: { minMs: 60000 } });
  let gaveUp = 0;
  c.on("close", (e) => { if (!gaveUp) gaveUp = Date.now(); assert.equal(e.code, 1006); });
  await until(() => gaveUp > 0, 10000, "given up");
  c.close();
  return { silence: gaveUp - lastSent, heartbeats };
}

/* docs/client.md: never before 2 x heartbeat_ms of silence, at the latest
 * 2 x heartbeat_ms + 1 s after the last message (here 2000 to 3000 ms; 250
 * ms more allowed for a loaded machine's timers) */
test("a node silent after its ready is given up between 2 x heartbeat_ms and 2 x heartbeat_ms + 1 s", async () => {
  const { silence } = await silentAfter(0);
  assert.ok(silence >= 2000 && silence <= 3250, `given up ${silence} ms after the ready`);
});

test("a node silent after answering heartbeats is given up between 2 x heartbeat_ms and 2 x heartbeat_ms + 1 s", async () => {
  const { silence, heartbeats } = await silentAfter(2);
  assert.ok(heartbeats >= 3, "heartbeats went on after the answers stopped");
  assert.ok(silence >= 2000 && silence <= 3250, `given up ${silence} ms after the last heartbeat_ack`);
});

test("a person's ack (an op for agents) throws and sends nothing; the connection stays", async () => {
  const n = await node();
  const c = connect({ url: n.url, token: "tok", WebSocket: WebSocketImpl, autoIdle: false });
  await until(() => c.state === "connected", 5000, "ready");
  assert.equal(c.kind, "person");
  assert.throws(() => c.ack(1), { name: "Error", message: /ack is an op for agent consumers.*4002/ });
  assert.throws(() => c.setAgentState("busy"), /setAgentState is an op for agent consumers/);
  /* a heartbeat sent after: everything before it has reached the node */
  assert.equal(c.focus(null), true);
  await until(() => n.received.length === 2, 5000, "the focus");
  assert.deepEqual(n.received.map((m) => JSON.parse(m).op), ["identify", "focus"]);
  assert.equal(c.state, "connected");
  c.close();
});

test("an agent's focus (an op for persons) throws and sends nothing", async () => {
  const n = await node((ws) => ws.send(JSON.stringify({ ...JSON.parse(READY), acked: 0 })));
  const c = connect({ url: n.url, token: "tok", WebSocket: WebSocketImpl, autoIdle: false });
  await until(() => c.state === "connected", 5000, "ready");
  assert.throws(() => c.focus(null), /focus is an op for persons' devices.*4002/);
  assert.throws(() => c.idle(true), /idle is an op for persons' devices/);
  assert.equal(c.ack(0), true);
  await until(() => n.received.length === 2, 5000, "the ack");
  assert.deepEqual(n.received.map((m) => JSON.parse(m).op), ["identify", "ack"]);
  c.close();
});

test("before the first ready a token's own kind decides: a person-device token's ack throws", () => {
  const payload = Buffer.from(JSON.stringify({ kind: "person-device", exp: 4102444800, person: "p", device: "d" })).toString("base64url");
  const c = new Client({ url: "ws://127.0.0.1:9/gateway", token: `bothy1.k.${payload}.sig`, WebSocket: WebSocketImpl, autoIdle: false });
  assert.throws(() => c.ack(1), /ack is an op for agent consumers/);
  c.close();
});
