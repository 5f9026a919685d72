// platform.test.mjs: what the client takes from its platform, against a
// fake node (the ws package's server on 127.0.0.1): the page's visibility
// becomes idle, the browser's "online" ends a back-off wait at once, and
// a 1006 after the client stopped running for seconds (a suspended tab, a
// blocked event loop) is taken as the node's 4008, as docs/protocol.md
// asks.  The page's document and the window's events are stand-ins (an
// EventTarget each); the stall is a real one (Atomics.wait).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { WebSocketServer } from "ws";
import { connect } from "../../dist/index.js";
import { WebSocketImpl } from "../platform-ws.mjs";

const READY = JSON.stringify({ op: "ready", session: "s", bind: "b", resume: "r1", node: "n", heartbeat_ms: 30000 });
const servers = [];
after(() => { for (const s of servers) s.close(); });

async function node(onIdentify) {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  servers.push(wss);
  const n = { wss, received: [], sockets: [], connections: 0 };
  wss.on("connection", (ws, req) => {
    n.connections++;
    n.sockets.push(ws);
    ws.on("message", (d) => {
      n.received.push(String(d));
      if (/"op":"(identify|resume)"/.test(String(d))) onIdentify(ws, n);
    });
  });
  await new Promise((r) => wss.on("listening", r));
  n.url = `ws://127.0.0.1:${wss.address().port}/gateway`;
  return n;
}

async function until(fn, ms, what) {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("the page hidden and shown: idle true, then false; a new connection starts with the page's state", async () => {
  const doc = new EventTarget();
  doc.hidden = true;
  globalThis.document = doc;
  try {
    const n = await node((ws) => ws.send(READY));
    const c = connect({ url: n.url, token: "tok", WebSocket: WebSocketImpl });
    await until(() => c.state === "connected", 5000, "ready");
    await until(() => n.received.includes('{"op":"idle","idle":true}'), 5000, "idle sent after ready (the page was hidden)");
    doc.hidden = false;
    doc.dispatchEvent(new Event("visibilitychange"));
    await until(() => n.received.includes('{"op":"idle","idle":false}'), 5000, "idle false when shown");
    c.close();
  } finally {
    delete globalThis.document;
  }
});

test("an agent consumer in a hidden page sends no idle (an op for persons: 4002) and stays connected", async () => {
  const doc = new EventTarget();
  doc.hidden = true;
  globalThis.document = doc;
  try {
    const n = await node((ws) => ws.send(JSON.stringify({ ...JSON.parse(READY), acked: 0 })));
    const c = connect({ url: n.url, token: "tok", WebSocket: WebSocketImpl });
    await until(() => c.state === "connected", 5000, "ready");
    assert.equal(c.kind, "agent");
    for (const hidden of [false, true]) {
      doc.hidden = hidden;
      doc.dispatchEvent(new Event("visibilitychange"));
    }
    /* a heartbeat sent after the visibility changes: everything before it has reached the node */
    assert.equal(c.setAgentState("busy"), true);
    await until(() => n.received.includes('{"op":"heartbeat","state":"busy"}'), 5000, "the heartbeat");
    assert.deepEqual(n.received.filter((m) => /"op":"idle"/.test(m)), []);
    assert.equal(c.state, "connected");
    c.close();
  } finally {
    delete globalThis.document;
  }
});

test("online ends the back-off wait at once", async () => {
  const win = new EventTarget();
  globalThis.addEventListener = win.addEventListener.bind(win);
  globalThis.removeEventListener = win.removeEventListener.bind(win);
  try {
    const n = await node((ws, nd) => { if (nd.connections === 1) ws.close(1011, "internal error"); else ws.send(READY); });
    const c = connect({ url: n.url, token: "tok", WebSocket: WebSocketImpl, backoff: { minMs: 60000, maxMs: 60000 } });
    let closes = 0;
    c.on("close", () => closes++);
    await until(() => closes === 1, 5000, "closed once, waiting out the back-off");
    const t0 = Date.now();
    win.dispatchEvent(new Event("online"));
    await until(() => c.state === "connected", 5000, "connected again after online");
    assert.ok(Date.now() - t0 < 5000, "long before the 60 s back-off");
    assert.equal(n.connections, 2);
    c.close();
  } finally {
    delete globalThis.addEventListener;
    delete globalThis.removeEventListener;
  }
});

/* A client ready on a fake node, and the states it enters from then on. */
async function readyClient() {
  const n = await node((ws) => ws.send(READY));
  const c = connect({ url: n.url, token: "tok", WebSocket: WebSocketImpl, backoff: { minMs: 50 } });
  await until(() => c.state === "connected", 5000, "ready");
  const states = [];
  c.on("state", (s) => states.push(`${s.state}:${s.reason}:${s.code}`));
  return { n, c, states };
}

test("a 1006 after the client stopped for seconds is the node's 4008: resumed, reason send_queue_full", async () => {
  const { n, c, states } = await readyClient();
  /* the node drops the connection without a close frame, while the client is stuck */
  n.sockets[0]._socket.destroy();
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3500);
  await until(() => states.length >= 2, 5000, "the close and the reconnect");
  assert.equal(states[0], "connecting:send_queue_full:1006");
  await until(() => c.state === "connected", 5000, "resumed");
  assert.match(n.received.at(-1), /"op":"resume","token":"r1"/);
  c.close();
});

test("a 1006 without a stall is the network", async () => {
  const { n, c, states } = await readyClient();
  await new Promise((r) => setTimeout(r, 1100));      /* a tick ran on time */
  n.sockets[0]._socket.destroy();
  await until(() => states.length >= 1, 5000, "the close");
  assert.equal(states[0], "connecting:network:1006");
  c.close();
});
