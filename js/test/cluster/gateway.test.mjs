// gateway.test.mjs: @bothy/client against the real cluster (demo/cluster:
// two nodes in multi mode behind the shipped nginx edge): a resume across
// a node killed with SIGKILL, through the edge or a reconnectUrl list of
// the nodes, a node stopped with SIGSTOP given up on time, a person's ack
// refused at the call (and 4002 final when one reaches the node), 4017 on
// a second device, 4015 on a second consumer, a lapsed resume token,
// typing across nodes, run updates as coalesced snapshots and an agent's
// stream with its acknowledgements.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connect, pollAgentEvents } from "../../dist/index.js";
import {
  agentToken, appSql, DIR, EDGE_WS, forgeToken, PORTS, IDS, killNode, next, nodeId, nodeUp, nodeWs, personToken,
  startNode, stopNode, exited, until, uuid, WebSocketImpl,
} from "./harness.mjs";

const clients = [];
after(() => { for (const c of clients) c.close(); });

function client(opts) {
  const c = connect({ WebSocket: WebSocketImpl, backoff: { minMs: 200, maxMs: 2000 }, ...opts });
  const states = [];
  c.on("state", (s) => states.push(`${s.state}:${s.reason}:${s.code}`));
  c.states = states;
  clients.push(c);
  return c;
}

/* A new agent, as the application registers one, and its token. */
function newAgent() {
  const agent = uuid();
  appSql(`SELECT bothy.agent_put('${agent}')`);
  return { agent, token: agentToken(agent) };
}

/* The client stays as it is (no reconnect) for longer than its back-off's first steps. */
async function staysDisconnected(c, ms = 1500) {
  const n = c.states.length;
  await new Promise((r) => setTimeout(r, ms));
  assert.equal(c.state, "disconnected");
  assert.deepEqual(c.states.slice(n), [], "no reconnect after a final close");
}

test("resume across a node killed with SIGKILL: the same session, on the other node, through the edge", async () => {
  const [idA, idB] = [await nodeId("a"), await nodeId("b")];
  const c = client({ url: nodeWs("a"), reconnectUrl: EDGE_WS, token: personToken(IDS.DEMO_ADA, uuid()) });
  const first = await next(c, "ready");
  assert.equal(first.node, idA);
  assert.equal(first.resumed, false);
  try {
    killNode("a");
    const again = await next(c, "ready", () => true, 30000);
    assert.equal(again.resumed, true);
    assert.equal(again.session, first.session, "the same gateway session");
    assert.notEqual(again.bind, first.bind);
    assert.equal(again.node, idB, "the edge sent it to the node left");
    assert.ok(c.states.includes("connecting:network:1006"), c.states.join(" "));
  } finally {
    startNode("a");
  }
  await until(() => nodeUp("a"), 30000, "node a back");
});

test("no edge: reconnectUrl lists the nodes; node a killed, the session resumed on node b", async () => {
  const idB = await nodeId("b");
  const c = client({ url: nodeWs("a"), reconnectUrl: [nodeWs("a"), nodeWs("b")], token: personToken(IDS.DEMO_GRACE, uuid()) });
  const first = await next(c, "ready");
  try {
    killNode("a");
    const again = await next(c, "ready", () => true, 30000);
    assert.equal(again.resumed, true);
    assert.equal(again.session, first.session, "the same gateway session");
    assert.equal(again.node, idB, "the URL after node a's in the list");
  } finally {
    startNode("a");
  }
  await until(() => nodeUp("a"), 30000, "node a back");
});

/* The WebSocket the client gets, noting when each message came (the test's
 * clock, not the client's: what the client heard and when). */
class Timed extends WebSocketImpl {
  set onmessage(fn) {
    super.onmessage = fn && ((ev) => { this.heardAt = Date.now(); fn(ev); });
  }
  get onmessage() { return super.onmessage; }
}

test("a node that stops answering (SIGSTOP) is given up 2 x heartbeat_ms to 2 x heartbeat_ms + 1 s after its last message", async () => {
  const c = client({ url: nodeWs("a"), reconnectUrl: EDGE_WS, token: personToken(IDS.DEMO_ADA, uuid()), WebSocket: Timed });
  let socket;
  const { heartbeat_ms: hb } = await next(c, "ready");
  socket = c.ws;
  const pid = Number(readFileSync(join(DIR, "run", "node-a.pid"), "utf8").trim());
  let gaveUp = 0;
  c.on("close", () => { if (!gaveUp) gaveUp = Date.now(); });
  try {
    process.kill(pid, "SIGSTOP");
    await until(() => gaveUp, 2 * hb + 10000, "given up");
    const silence = gaveUp - socket.heardAt;
    assert.ok(silence >= 2 * hb && silence <= 2 * hb + 1000 + 250, `given up ${silence} ms after the last message (heartbeat_ms ${hb})`);
    assert.equal(c.states.at(-1).replace(/:\d+$/, ""), "connecting:network");
  } finally {
    killNode("a");                                          /* stopped: SIGKILL ends it all the same */
    startNode("a");
  }
  await until(() => nodeUp("a"), 30000, "node a back");
});

test("1001 from a stopping node: resumed at once on the other node, through the edge", async () => {
  const idB = await nodeId("b");
  const c = client({ url: nodeWs("a"), reconnectUrl: EDGE_WS, token: personToken(IDS.DEMO_GRACE, uuid()),
    backoff: { minMs: 5000, maxMs: 10000 } });
  const first = await next(c, "ready");
  let pid = 0;
  try {
    pid = stopNode("a");
    /* within the 5 s floor of the back-off: only "at once" gets there */
    const again = await next(c, "ready", () => true, 4500);
    assert.equal(again.resumed, true);
    assert.equal(again.session, first.session);
    assert.equal(again.node, idB);
    assert.deepEqual(c.states.slice(0, 3), ["connecting:connect:0", "connected:ready:0", "connecting:node_stopping:1001"]);
  } finally {
    await until(() => exited(pid), 20000, "node a stopped");
    startNode("a");
  }
  await until(() => nodeUp("a"), 30000, "node a back");
});

test("a person's ack (an op for agents) is refused at the call; the node keeps the connection", async () => {
  const c = client({ url: EDGE_WS, token: personToken(IDS.DEMO_ADA, uuid()) });
  await next(c, "ready");
  assert.throws(() => c.ack(1), /ack is an op for agent consumers/);
  /* a typing after it reaches Grace: the node read the connection since, and kept it */
  const grace = client({ url: EDGE_WS, token: personToken(IDS.DEMO_GRACE, uuid()) });
  await next(grace, "ready");
  let seen = false;
  grace.on("typing", (t) => { if (t.principal === IDS.DEMO_ADA) seen = true; });
  await until(() => { c.typing(IDS.DEMO_THREAD); return seen; }, 20000, "Grace sees Ada typing after the refused ack");
  assert.equal(c.state, "connected");
  assert.deepEqual(c.states, ["connecting:connect:0", "connected:ready:0"]);
});

test("4002 (a person's ack sent anyway, as an older client did) is final: no reconnect loop", async () => {
  const c = client({ url: EDGE_WS, token: personToken(IDS.DEMO_ADA, uuid()) });
  await next(c, "ready");
  c.ws.send(JSON.stringify({ op: "ack", event: 1 }));        /* past the check: the client's socket itself */
  await until(() => c.state === "disconnected", 20000, "closed by the node");
  assert.equal(c.states.at(-1), "disconnected:protocol_error:4002");
  await staysDisconnected(c);
});

/* The same token connected again on the other node: the first connection
 * gets the final close and stays disconnected; the second stays. */
async function secondTakesOver(token, expected) {
  const first = client({ url: nodeWs("a"), token });
  const ready = await next(first, "ready");
  const second = client({ url: nodeWs("b"), token });
  await next(second, "ready");
  await until(() => first.state === "disconnected", 20000, "the first connection closed");
  assert.equal(first.states.at(-1), expected);
  await staysDisconnected(first);
  assert.equal(second.state, "connected");
  return { first, ready };
}

test("4017 on a second device: the first connection stops and never reconnects", async () => {
  const { first } = await secondTakesOver(personToken(IDS.DEMO_GRACE, uuid()), "disconnected:replaced:4017");
  assert.equal(first.kind, "person");
});

test("4015 on a second consumer: the first consumer is fenced and does not fight back", async () => {
  const { token } = newAgent();
  const { first, ready } = await secondTakesOver(token, "disconnected:fenced:4015");
  assert.equal(first.kind, "agent");
  assert.equal(ready.acked, 0);
});

test("a lapsed resume token: refused (4001), then identify with the device token, a new session", async () => {
  const device = uuid();
  const token = personToken(IDS.DEMO_ADA, device);
  const session = "01900000-0000-7000-8000-000000000001";
  const payload = (exp) => `{"kind":"resume","session":"${session}","person":"${IDS.DEMO_ADA}","device":"${device}","exp":${exp}}`;
  const now = Math.floor(Date.now() / 1000);
  /* the same forge with a live expiry resumes: what the lapsed one lacks is only time */
  const live = client({ url: EDGE_WS, token, resumeToken: forgeToken(payload(now + 300)) });
  const r1 = await next(live, "ready");
  assert.equal(r1.resumed, true);
  assert.equal(r1.session, session);
  live.close();
  const c = client({ url: EDGE_WS, token, resumeToken: forgeToken(payload(now - 1)) });
  const r2 = await next(c, "ready");
  assert.equal(r2.resumed, false);
  assert.notEqual(r2.session, session);
  assert.deepEqual(c.states.slice(0, 3), ["connecting:connect:0", "connecting:resume_lapsed:4001", "connected:ready:0"]);
  assert.equal(c.resume, r2.resume, "the new session's resume token is kept");
});

test("typing across nodes: Ada on node A, Grace on node B, throttled at the node's interval", async () => {
  const ada = client({ url: nodeWs("a"), token: personToken(IDS.DEMO_ADA, uuid()) });
  const grace = client({ url: nodeWs("b"), token: personToken(IDS.DEMO_GRACE, uuid()) });
  await Promise.all([next(ada, "ready"), next(grace, "ready")]);
  const seen = [];
  grace.on("typing", (t) => seen.push(t));
  /* the node's audience is asked per typing: repeat (once a second, the interval) until Grace sees it */
  await until(() => { ada.typing(IDS.DEMO_THREAD); return seen.length > 0; }, 20000, "Grace sees Ada typing");
  assert.equal(seen[0].thread, IDS.DEMO_THREAD);
  assert.equal(seen[0].principal, IDS.DEMO_ADA);
  assert.equal(seen[0].place, IDS.DEMO_PLACE);
  ada.typing(IDS.DEMO_THREAD);
  assert.equal(ada.typing(IDS.DEMO_THREAD), false, "a second typing within the interval is not sent");
});

test("run updates: coalesced snapshots, versions only rising", async () => {
  const c = client({ url: EDGE_WS, token: personToken(IDS.DEMO_GRACE, uuid()) });
  const versions = [];
  c.on("run", (d) => versions.push(d.version));
  await until(() => versions.length >= 3, 20000, "three run.updated of the driver");
  assert.ok(versions.every((v, i) => i === 0 || v > versions[i - 1]), versions.join(","));
  assert.equal(c.runs.get(IDS.DEMO_RUN).version, versions.at(-1));
});

test("an agent's stream: events in order, acknowledged, and a new consumer continues from the ack", async () => {
  const { agent, token } = newAgent();
  const c = client({ url: nodeWs("b"), token });
  await next(c, "ready");
  const got = [];
  c.on("agent_event", (e) => { got.push(e.id); c.ack(e.id); });
  const ids = [1, 2, 3].map((i) => Number(appSql(`SELECT bothy.agent_event_appended('${agent}', 'test.step', '{"n":${i}}')`)));
  await until(() => got.length === 3, 20000, "three agent.event");
  assert.deepEqual(got, ids);
  c.close();
  /* the ack's save is asynchronous: a takeover sees it once it landed */
  await until(async () => {
    const d = client({ url: nodeWs("a"), token });
    const r = await next(d, "ready");
    d.close();
    return r.acked === ids[2];
  }, 20000, "a new consumer's ready carrying the last ack");
});

test("autocomplete both ways: a person asks, the agent's consumer on the same node answers", async () => {
  const { agent, token } = newAgent();
  const consumer = client({ url: nodeWs("a"), token });
  const person = client({ url: nodeWs("a"), token: personToken(IDS.DEMO_ADA, uuid()) });
  await Promise.all([next(consumer, "ready"), next(person, "ready")]);
  const asked = [];
  consumer.on("autocomplete_request", (q) => {
    asked.push(q);
    consumer.answerAutocomplete(q.request, [{ label: "deploy", insert: "/deploy" }]);
  });
  const items = await person.autocomplete(agent, "dep");
  assert.deepEqual(items, [{ label: "deploy", insert: "/deploy" }]);
  assert.equal(asked.length, 1);
  assert.equal(asked[0].principal, IDS.DEMO_ADA);
  assert.equal(asked[0].query, "dep");
});

test("the REST poll of an agent's events returns them and fences its WebSocket consumer (4015, final)", async () => {
  const { agent, token } = newAgent();
  const ws = client({ url: nodeWs("b"), token });
  await next(ws, "ready");
  const id = Number(appSql(`SELECT bothy.agent_event_appended('${agent}', 'test.poll', '{"n":1}')`));
  await next(ws, "agent_event", (e) => e.id === id);
  const page = await pollAgentEvents({ base: `http://127.0.0.1:${PORTS.a}/`, token }, { after: 0, waitMs: 0 });
  assert.deepEqual(page.events.map((e) => [e.id, e.type]), [[id, "test.poll"]]);
  assert.equal(page.acked, 0);
  await until(() => ws.state === "disconnected", 20000, "the WebSocket consumer fenced");
  assert.equal(ws.states.at(-1), "disconnected:fenced:4015");
});
