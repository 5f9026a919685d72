// ops.test.mjs: the client's ops against a fake node that records every
// message: an argument outside protocol.md's limits throws at the call and
// nothing is sent or kept (a kept focus would be sent again after every
// reconnect, and a node closes 4002 for it); good arguments go out as
// documented; client.runs keeps the maxRuns most recently updated runs.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { connect, attachTerminalSession, endTerminalSession } from "../../dist/index.js";
import { WebSocketImpl } from "../platform-ws.mjs";
import { READY, fakeNode, until } from "../fake-node.mjs";

const THREAD = "0b6c1d2e-3f4a-4b5c-8d6e-7f8a9b0c1d2e";
const AGENT = "5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b";
const AGENT_READY = JSON.stringify({ ...JSON.parse(READY), acked: 0 });

const nodes = [];
after(() => { for (const n of nodes) n.wss.close(); });

async function connected(ready = READY, opts = {}) {
  const node = await fakeNode((ws) => ws.send(ready));
  nodes.push(node);
  const c = connect({ url: node.url, token: "tok", WebSocket: WebSocketImpl, autoIdle: false, ...opts });
  await until(() => c.state === "connected", 5000, "ready");
  return { node, c };
}

const ops = (node) => node.received.map((m) => JSON.parse(m).op);

test("a person's ops with bad arguments throw, and nothing is sent or kept", async () => {
  const { node, c } = await connected();
  assert.throws(() => c.focus("not-a-uuid"), TypeError);
  assert.throws(() => c.focus(THREAD.toUpperCase()), TypeError);
  assert.throws(() => c.focus(undefined), TypeError);
  assert.throws(() => c.typing(THREAD + "0"), TypeError);
  assert.throws(() => c.idle("yes"), TypeError);
  assert.throws(() => c.autocomplete("agent-1", "q"), TypeError);
  assert.throws(() => c.autocomplete(AGENT, 7), TypeError);
  assert.throws(() => c.autocomplete(AGENT, "é".repeat(513)), RangeError);   // 1026 bytes
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(ops(node), ["identify"]);

  /* the same ops with good arguments go out, at the limits too */
  assert.equal(c.focus(THREAD), true);
  assert.equal(c.focus(null), true);
  assert.equal(c.idle(true), true);
  assert.equal(c.typing(THREAD), true);
  c.autocomplete(AGENT, "é".repeat(512));                                    // 1024 bytes
  await until(() => node.received.length === 6, 5000, "five ops");
  assert.deepEqual(ops(node), ["identify", "focus", "focus", "idle", "typing", "autocomplete"]);
  assert.equal(JSON.parse(node.received[5]).query.length, 512);
  c.close();
});

test("a bad focus is not kept: the next connection sends the last good one", async () => {
  const node = await fakeNode((ws) => ws.send(READY));
  nodes.push(node);
  const c = connect({ url: node.url, token: "tok", WebSocket: WebSocketImpl, autoIdle: false, backoff: { minMs: 10, maxMs: 20 } });
  await until(() => c.state === "connected", 5000, "ready");
  c.focus(THREAD);
  assert.throws(() => c.focus("0b6c1d2e"), TypeError);
  for (const ws of node.wss.clients) ws.close(1012);                         // the node restarts
  await until(() => node.connections === 2 && c.state === "connected", 5000, "the second ready");
  await until(() => node.received.filter((m) => m.includes('"focus"')).length === 2, 5000, "focus again");
  assert.deepEqual(JSON.parse(node.received.at(-1)), { op: "focus", thread: THREAD });
  c.close();
});

test("an agent's ops with bad arguments throw, and nothing is sent", async () => {
  const { node, c } = await connected(AGENT_READY);
  assert.equal(c.kind, "agent");
  assert.throws(() => c.setAgentState("offline"), TypeError);
  assert.throws(() => c.answerAutocomplete("r1", []), TypeError);
  assert.throws(() => c.answerAutocomplete(THREAD, {}), TypeError);
  assert.throws(() => c.answerAutocomplete(THREAD, [[]]), TypeError);
  assert.throws(() => c.answerAutocomplete(THREAD, [null]), TypeError);
  assert.throws(() => c.answerAutocomplete(THREAD, Array.from({ length: 51 }, () => ({}))), RangeError);
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(ops(node), ["identify"]);
  assert.equal(c.setAgentState("busy"), true);
  assert.equal(c.answerAutocomplete(THREAD, Array.from({ length: 50 }, (_, i) => ({ label: "x" + i }))), true);
  await until(() => node.received.length === 3, 5000, "two ops");
  assert.deepEqual(ops(node), ["identify", "heartbeat", "autocomplete_answer"]);
  c.close();
});

test("a session ID that is not a UUID rejects before any request", async () => {
  let requests = 0;
  const fetch = async () => { requests++; return new Response(null, { status: 204 }); };
  const o = { base: "http://127.0.0.1:9/", token: "tok", fetch };
  await assert.rejects(attachTerminalSession(o, "../v1/presence"), TypeError);
  await assert.rejects(endTerminalSession(o, "x"), TypeError);
  assert.equal(requests, 0);
});

test("client.runs keeps the maxRuns most recently updated runs", async () => {
  const run = (n, version) => JSON.stringify({ op: "event", type: "run.updated",
    data: { run: `00000000-0000-4000-8000-00000000000${n}`, thread: THREAD, agent: AGENT, version } });
  const node = await fakeNode((ws) => {
    ws.send(READY);
    for (const [n, v] of [[1, 1], [2, 1], [1, 2], [3, 1], [2, 0]]) ws.send(run(n, v));
  });
  nodes.push(node);
  const seen = [];
  assert.throws(() => connect({ url: node.url, token: "tok", maxRuns: 0 }), RangeError);
  const c = connect({ url: node.url, token: "tok", WebSocket: WebSocketImpl, autoIdle: false, maxRuns: 2 });
  c.on("run", (d) => seen.push(d.run.at(-1) + "@" + d.version));
  await until(() => seen.length === 5, 5000, "five run events");
  /* run 2 was the least recently updated when run 3 came: dropped, so its
   * older version is new to the client again */
  assert.deepEqual(seen, ["1@1", "2@1", "1@2", "3@1", "2@0"]);
  assert.deepEqual([...c.runs.keys()].map((k) => k.at(-1)), ["3", "2"]);
  c.close();
});
