// detach.test.mjs: a TerminalSession detached and attached again
// (docs/client.md, "A terminal pane"): detach() reports the state
// "detached" and keeps the session ID, stream and offset, so
// attach(session.session) resumes the same shell where the screen stopped;
// an attach of the session this object detached waits out the cluster's
// "not_detached" (the stream's close not yet seen), and end() after a
// detach still ends the session.  A fake relay (the ws package's server)
// and a fake fetch play the node.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { WebSocketServer } from "ws";
import { TerminalSession } from "../../dist/index.js";
import { WebSocketImpl } from "../platform-ws.mjs";
import { until } from "../fake-node.mjs";

const S1 = "0190a5d1-03aa-7c10-9e11-2b3c4d5e6f70";
const servers = [];
after(() => { for (const s of servers) s.close(); });

/* A relay: pairs every stream, records each resume frame, and answers it
 * with a begin of stream 7 at the offset asked for and two bytes of output. */
async function relay() {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0, handleProtocols: (p) => [...p][0] });
  servers.push(wss);
  await new Promise((r) => wss.on("listening", r));
  const r = { wss, resumes: [], closed: 0, base: `http://127.0.0.1:${wss.address().port}/` };
  wss.on("connection", (ws) => {
    ws.on("close", () => r.closed++);
    ws.once("message", () => {
      ws.send(JSON.stringify({ op: "paired" }));
      ws.once("message", (d) => {
        const v = new DataView(new Uint8Array(d).buffer);
        const offset = Number(v.getBigUint64(9));
        r.resumes.push([v.getBigUint64(1), offset]);
        const begin = Buffer.alloc(25); begin[0] = 0x62; begin.writeBigUInt64BE(7n, 1); begin.writeBigUInt64BE(BigInt(offset), 9);
        const out = Buffer.alloc(11); out[0] = 0x6f; out.writeBigUInt64BE(BigInt(offset), 1); out.write("hi", 9);
        ws.send(begin);
        ws.send(out);
      });
    });
  });
  return r;
}

const grant = () => new Response(JSON.stringify({ session: S1, stream: "/terminal/stream/" + S1, token: "t" }), { status: 201 });

test("detach(): state detached, the session kept; attach(session.session) resumes the same shell at its offset", async () => {
  const r = await relay();
  const calls = [];
  let attachCalls = 0;
  const fetch = async (url, init) => {
    calls.push(`${init.method} ${new URL(url).pathname}`);
    if (init.method === "DELETE") return new Response(null, { status: 204 });
    /* the cluster has not yet seen the stream's close at the first attach */
    if (/attach$/.test(url) && attachCalls++ === 0) return new Response('{"error":"not_detached"}', { status: 409 });
    return grant();
  };
  const t = new TerminalSession({ base: r.base, token: "tok", fetch, WebSocket: WebSocketImpl, backoff: { minMs: 50, maxMs: 100 } });
  const states = [];
  t.on("state", (s) => states.push(`${s.state}:${s.reason}`));
  let text = "";
  t.on("output", (o) => { text += Buffer.from(o.bytes).toString(); });
  await t.open("h");
  await until(() => text === "hi", 5000, "the first output");
  t.detach();
  assert.equal(t.state, "detached");
  assert.equal(t.session, S1, "the session ID is kept");
  assert.equal(t.stream, 7n);
  assert.equal(t.offset, 2);
  await until(() => r.closed === 1, 5000, "the stream closed");
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(t.state, "detached", "no attaching again by itself");
  assert.equal(await t.attach(t.session), t);
  await until(() => text === "hihi", 5000, "output of the same shell after the attach");
  assert.deepEqual(r.resumes, [[0n, 0], [7n, 2]], "the second stream resumed at the offset shown");
  assert.deepEqual(states, ["opening:open", "attached:paired", "detached:detached", "opening:attach", "attached:paired"]);
  assert.deepEqual(calls, ["POST /v1/terminal/sessions", `POST /v1/terminal/sessions/${S1}/attach`,
    `POST /v1/terminal/sessions/${S1}/attach`]);
  t.detach();
  await t.end();
  assert.equal(calls.at(-1), `DELETE /v1/terminal/sessions/${S1}`, "end() after a detach ends the session");
  assert.equal(t.state, "ended");
});

test("attach() of a session this object did not detach: a 409 not_detached rejects at once", async () => {
  let calls = 0;
  const fetch = async () => { calls++; return new Response('{"error":"not_detached"}', { status: 409 }); };
  const t = new TerminalSession({ base: "http://127.0.0.1:9/", token: "tok", fetch, WebSocket: WebSocketImpl });
  await assert.rejects(t.attach(S1), (e) => e.name === "RestError" && e.code === "not_detached");
  assert.equal(calls, 1);
});
