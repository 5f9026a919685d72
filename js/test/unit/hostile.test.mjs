// hostile.test.mjs: a node that sends what no node should (not JSON, an
// unknown op, a ready without its members, a terminal frame of the wrong
// length), played by a WebSocket server of the `ws` package on 127.0.0.1.
// Each ends in an "error" event, never an exception into the application,
// and never in a tight reconnect loop.  The client runs on the platform's
// WebSocket where Node has one (test/platform-ws.mjs) and, in one case,
// always on the `ws` package, the optional peer for Node before 22.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { WebSocketServer, WebSocket as WsWebSocket } from "ws";
import { connect, TerminalSession } from "../../dist/index.js";
import { WebSocketImpl } from "../platform-ws.mjs";
import { READY, fakeNode, until } from "../fake-node.mjs";

const nodes = [];
after(() => { for (const n of nodes) n.wss.close(); });

/* Uncaught exceptions fail node:test on their own; this also catches any rejection. */
const thrown = [];
process.on("unhandledRejection", (e) => thrown.push(e));

test("not JSON after identify: an error event and a reconnect after the back-off, never a loop", async () => {
  const node = await fakeNode((ws) => ws.send("this is not JSON"));
  nodes.push(node);
  const errors = [];
  const c = connect({ url: node.url, token: "tok", WebSocket: WebSocketImpl, backoff: { minMs: 300, maxMs: 5000 } });
  c.on("error", (e) => errors.push(e));
  await until(() => errors.length >= 1, 5000, "the first error event");
  assert.equal(errors[0].kind, "protocol");
  assert.match(errors[0].message, /not JSON/);
  const start = Date.now();
  await new Promise((r) => setTimeout(r, 1500));
  c.close();
  /* with a 300 ms floor doubling: at most 1 + 1500/300 connections however the jitter falls */
  assert.ok(node.connections >= 2, "it reconnected");
  assert.ok(node.connections <= 6, `${node.connections} connections in ${Date.now() - start} ms`);
  assert.equal(c.state, "closed");
  assert.deepEqual(thrown, []);
});

test("an unknown op and a bad event: error events, the connection stays", async () => {
  const node = await fakeNode((ws) => {
    ws.send(READY);
    ws.send(JSON.stringify({ op: "surprise", x: 1 }));
    ws.send(JSON.stringify({ op: "event", type: "run.updated", data: { run: "r", version: "seven" } }));
    ws.send(JSON.stringify({ op: "event", type: "run.updated", data: { run: "r", thread: "t", agent: "a", version: 7 } }));
  });
  nodes.push(node);
  const errors = [], runs = [];
  const c = connect({ url: node.url, token: "tok", WebSocket: WebSocketImpl });
  c.on("error", (e) => errors.push(e.message));
  c.on("run", (d) => runs.push(d.version));
  await until(() => runs.length === 1, 5000, "the good run.updated");
  assert.deepEqual(errors, ['unknown op "surprise"', "run.updated without run and version"]);
  assert.equal(c.state, "connected");
  assert.equal(node.connections, 1);
  c.close();
});

test("a ready without its members, on the ws package: an error event, then a bounded retry", async () => {
  const node = await fakeNode((ws) => ws.send(JSON.stringify({ op: "ready", session: "s" })));
  nodes.push(node);
  const errors = [];
  const states = [];
  const c = connect({ url: node.url, token: "tok", WebSocket: WsWebSocket, backoff: { minMs: 400 } });
  c.on("error", (e) => errors.push(e.message));
  c.on("state", (s) => states.push(s.state + ":" + s.reason));
  await until(() => errors.length >= 2, 5000, "two error events");
  assert.match(errors[0], /heartbeat_ms/);
  assert.ok(states.includes("connecting:protocol"));
  assert.ok(!states.some((s) => s.startsWith("connected")));
  c.close();
  assert.ok(node.connections <= 4);
});

test("a listener that throws does not break the client", async () => {
  const node = await fakeNode((ws) => {
    ws.send(READY);
    ws.send(JSON.stringify({ op: "event", type: "typing.started", data: { thread: "t", place: null, principal: "p", expires_at: "x" } }));
  });
  nodes.push(node);
  const reported = [];
  const saved = globalThis.reportError;
  globalThis.reportError = (e) => reported.push(e);
  try {
    const c = connect({ url: node.url, token: "tok", WebSocket: WebSocketImpl });
    let second = 0;
    c.on("typing", () => { throw new Error("the application's bug"); });
    c.on("typing", () => second++);
    await until(() => second === 1, 5000, "the second listener");
    assert.equal(reported[0].message, "the application's bug");
    assert.equal(c.state, "connected");
    c.close();
  } finally {
    globalThis.reportError = saved;
  }
});

test("identify answered with error: sent again on the same connection after the back-off", async () => {
  const node = await fakeNode((ws, i) => {
    ws.n = (ws.n || 0) + 1;
    ws.send(ws.n === 1 ? JSON.stringify({ op: "error", request: "identify", code: "timeout" }) : READY);
  });
  nodes.push(node);
  const errors = [];
  const c = connect({ url: node.url, token: "tok", WebSocket: WebSocketImpl, backoff: { minMs: 50 } });
  c.on("error", (e) => errors.push(e));
  await until(() => c.state === "connected", 5000, "ready on the second identify");
  assert.equal(node.connections, 1);
  assert.deepEqual(errors.map((e) => [e.kind, e.request, e.code]), [["request", "identify", "timeout"]]);
  c.close();
});

test("identify answered with two errors at once: sent again once, not twice (a second identify is 4002)", async () => {
  const node = await fakeNode((ws) => {
    ws.n = (ws.n || 0) + 1;
    if (ws.n === 1) for (let i = 0; i < 2; i++) ws.send(JSON.stringify({ op: "error", request: "identify", code: "unavailable" }));
    else setTimeout(() => ws.send(READY), 400);     /* the bind takes a while: a second retry would come meanwhile */
  });
  nodes.push(node);
  const errors = [];
  const c = connect({ url: node.url, token: "tok", WebSocket: WebSocketImpl, backoff: { minMs: 50, maxMs: 100 } });
  c.on("error", (e) => errors.push(e.kind + ":" + (e.code ?? e.message)));
  await until(() => c.state === "connected", 5000, "ready on the second identify");
  assert.equal(node.received.filter((m) => /"op":"identify"/.test(m)).length, 2);
  assert.deepEqual(errors, ["request:unavailable", "request:unavailable"]);
  assert.equal(node.connections, 1);
  c.close();
});

const S1 = "0190a5d1-03aa-7c10-9e11-2b3c4d5e6f70";

test("a terminal stream's frame of the wrong length: an error event, the bytes after it still in order", async () => {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, handleProtocols: (p) => [...p][0] });
  nodes.push({ wss });
  await new Promise((r) => wss.on("listening", r));
  wss.on("connection", (ws) => {
    ws.once("message", () => {
      ws.send(JSON.stringify({ op: "paired" }));
      ws.once("message", () => {
        const begin = Buffer.alloc(25); begin[0] = 0x62; begin.writeBigUInt64BE(7n, 1);
        ws.send(Buffer.from([0x62, 1, 2, 3]));                   /* a begin of 4 bytes */
        ws.send(begin);
        ws.send(Buffer.from([0x6f, 0, 0, 0, 0, 0, 0, 0, 0, 0x68, 0x69]));
        ws.send(Buffer.from([0x6f, 0, 0, 0, 0, 0, 0, 0, 0, 0x68]));     /* a repeat: dropped */
        ws.send(Buffer.from([0x7a]));                                     /* an unknown type */
        ws.send("not json");
      });
    });
  });
  const base = `http://127.0.0.1:${wss.address().port}/`;
  const fakeFetch = async () => new Response(JSON.stringify({ session: S1, stream: "/terminal/stream/" + S1, token: "t", expires_at: "x" }), { status: 201 });
  const t = new TerminalSession({ base, token: "tok", fetch: fakeFetch, WebSocket: WebSocketImpl });
  const errors = [], out = [];
  t.on("error", (e) => errors.push(e.message));
  t.on("output", (o) => out.push(Buffer.from(o.bytes).toString()));
  await t.open("h");
  await until(() => errors.length === 3, 5000, "three error events");
  assert.deepEqual(out, ["hi"]);
  assert.equal(t.offset, 2);
  assert.equal(t.stream, 7n);
  assert.match(errors[0], /begin frame of 4 bytes/);
  assert.match(errors[1], /unknown frame type 0x7a/);
  assert.match(errors[2], /not JSON/);
  t.detach();
});

test("an attach the node refuses: the RestError with its code, the session failed, no stream opened", async () => {
  let opened = 0;
  class NoSocket { constructor() { opened++; } }
  const fakeFetch = async () => new Response('{"error":"not_detached"}', { status: 409 });
  const t = new TerminalSession({ base: "http://127.0.0.1:9/", token: "tok", fetch: fakeFetch, WebSocket: NoSocket });
  const states = [];
  t.on("state", (s) => states.push(`${s.state}:${s.reason}`));
  await assert.rejects(t.attach("0190a5d1-03aa-7c10-9e11-2b3c4d5e6f70"), (e) => e.name === "RestError" && e.status === 409 && e.code === "not_detached");
  assert.deepEqual(states, ["opening:attach", "failed:not_detached"]);
  assert.equal(opened, 0);
});

test("a grant that is not one (open, then an attach again): a RestError bad_grant, never a TypeError or a rejection nobody holds", async () => {
  const bad = [null, {}, { session: "../../v1/x", stream: "/terminal/stream/../../v1/x", token: "t" },
    { session: S1, stream: "//elsewhere.example/x", token: "t" }, { session: S1, stream: "/terminal/stream/" + S1, token: "a b" }];
  for (const body of bad) {
    let opened = 0;
    class NoSocket { constructor() { opened++; } }
    const fakeFetch = async () => new Response(JSON.stringify(body), { status: 201 });
    const t = new TerminalSession({ base: "http://127.0.0.1:9/", token: "tok", fetch: fakeFetch, WebSocket: NoSocket });
    await assert.rejects(t.open("h"), (e) => e.name === "RestError" && e.code === "bad_grant", JSON.stringify(body));
    assert.equal(t.state, "failed");
    assert.equal(opened, 0);
  }
  /* a stream that paired and dropped (4008), then every attach answers a bad grant: tried with the back-off, then failed */
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, handleProtocols: (p) => [...p][0] });
  nodes.push({ wss });
  await new Promise((r) => wss.on("listening", r));
  let streams = 0;
  wss.on("connection", (ws) => {
    streams++;
    ws.once("message", () => { ws.send(JSON.stringify({ op: "paired" })); ws.once("message", () => ws.close(4008, "send queue full")); });
  });
  const calls = [];
  const fakeFetch = async (url) => {
    calls.push(url);
    const body = calls.length === 1 ? { session: S1, stream: "/terminal/stream/" + S1, token: "t" } : { session: "../x" };
    return new Response(JSON.stringify(body), { status: 201 });
  };
  const t = new TerminalSession({ base: `http://127.0.0.1:${wss.address().port}/`, token: "tok", fetch: fakeFetch,
    WebSocket: WebSocketImpl, backoff: { minMs: 100, maxMs: 200 }, attachForMs: 1500 });
  const states = [];
  t.on("state", (s) => states.push(`${s.state}:${s.reason}`));
  await t.open("h");
  await until(() => t.state === "failed", 5000, "failed after attachForMs");
  assert.deepEqual(states, ["opening:open", "attached:paired", "reattaching:stream_lost", "failed:attach_timeout"]);
  assert.equal(streams, 1, "no stream opened with a bad grant");
  assert.ok(calls.length >= 3 && calls.length <= 16, `${calls.length} REST calls in 1.5 s`);
  assert.ok(calls.slice(1).every((u) => u.endsWith(`/v1/terminal/sessions/${S1}/attach`)));
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(thrown, []);
});

test("open again on a TerminalSession: the held stream is closed, and the new session's never-paired 4102 ends it (no earlier pairing counts)", async () => {
  const S2 = "0190a5d1-03aa-7c10-9e11-2b3c4d5e6f71";
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, handleProtocols: (p) => [...p][0] });
  nodes.push({ wss });
  await new Promise((r) => wss.on("listening", r));
  const closed = [];
  wss.on("connection", (ws, req) => {
    ws.on("close", () => closed.push(req.url));
    ws.once("message", () => {
      if (req.url.endsWith(S1)) ws.send(JSON.stringify({ op: "paired" }));
      else ws.close(4102, "no counterpart in time");        /* the host never came for the second session */
    });
  });
  const calls = [];
  let opens = 0;
  const fakeFetch = async (url, init) => {
    calls.push(`${init.method} ${new URL(url).pathname}`);
    if (init.method === "DELETE") return new Response(null, { status: 204 });
    if (/attach$/.test(url)) return new Response('{"error":"not_detached"}', { status: 409 });
    const s = ++opens === 1 ? S1 : S2;
    return new Response(JSON.stringify({ session: s, stream: "/terminal/stream/" + s, token: "t" }), { status: 201 });
  };
  const t = new TerminalSession({ base: `http://127.0.0.1:${wss.address().port}/`, token: "tok", fetch: fakeFetch,
    WebSocket: WebSocketImpl, backoff: { minMs: 50, maxMs: 100 } });
  const states = [];
  t.on("state", (s) => states.push(`${s.state}:${s.reason}`));
  await t.open("h");
  await until(() => t.state === "attached", 5000, "the first session paired");
  await t.open("h");
  await until(() => closed.includes("/terminal/stream/" + S1), 5000, "the first session's stream closed");
  await until(() => t.state === "failed", 5000, "the second session given up");
  assert.deepEqual(states.slice(-3), ["opening:open", "reattaching:stream_lost", "failed:host_timeout"]);
  assert.deepEqual(calls, ["POST /v1/terminal/sessions", "POST /v1/terminal/sessions",
    `POST /v1/terminal/sessions/${S2}/attach`, `DELETE /v1/terminal/sessions/${S2}`]);
  assert.equal(t.stream, 0n, "the new session's stream starts unknown");
});
