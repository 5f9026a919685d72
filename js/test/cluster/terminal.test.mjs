// terminal.test.mjs: the terminal through @bothy/client against the real
// cluster's bothy-host (demo/cluster: its shell is demo/host-shell, its
// ring the default 1 MiB), every REST call and stream through a TCP proxy
// in front of the edge, so a test can drop the network under the device;
// a session detached and attached again by its own TerminalSession.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { TerminalSession, terminalHosts } from "../../dist/index.js";
import { IDS, next, personToken, PORTS, proxy, until, uuid, WebSocketImpl } from "./harness.mjs";

let net, host;
const token = personToken(IDS.DEMO_ADA, uuid());
const sessions = [];

before(async () => {
  net = await proxy(PORTS.edge);
  /* connected as every node counts it: a node started again by an earlier
   * file learns of a control connection on the other node only from its
   * next terminal.host_present (D-M2-47-6) and answers 409 until then, and
   * the edge may send an opening to either node */
  const seen = [];
  for (const n of ["a", "b"]) {
    seen.push(await until(async () => {
      const hs = await terminalHosts({ base: `http://127.0.0.1:${PORTS[n]}/`, token });
      return hs.find((h) => h.state === "active" && h.connected);
    }, 60000, `the demo host connected, as node ${n} counts it`));
  }
  assert.equal(seen[0].host, seen[1].host, "one demo host");
  host = seen[0].host;
});
after(async () => {
  for (const s of sessions) await s.end().catch(() => {});
  net.close();
});

/* A session through the proxy whose output is collected as one text. */
async function shell() {
  const s = new TerminalSession({ base: `http://127.0.0.1:${net.port}/`, token, WebSocket: WebSocketImpl,
    backoff: { minMs: 200, maxMs: 1000 } });
  sessions.push(s);
  s.text = "";
  s.begins = [];
  s.skips = [];
  s.on("output", (o) => { s.text += Buffer.from(o.bytes).toString("latin1"); });
  s.on("begin", (b) => s.begins.push(b));
  s.on("skipped", (k) => s.skips.push(k));
  const paired = next(s, "paired", () => true, 30000);
  /* a refused opening fails here, not as paired's later timeout */
  await s.open(host).catch((e) => { paired.catch(() => {}); throw e; });
  await paired;
  await until(() => s.text.includes("demo$ "), 20000, "the prompt");
  return s;
}

const seqText = (n) => Array.from({ length: n }, (_, i) => `${i + 1}\r\n`).join("");

/* The processes of this machine whose command line is exactly argv. */
function running(argv) {
  const want = argv.join("\0") + "\0";
  return readdirSync("/proc").filter((p) => /^\d+$/.test(p)).some((p) => {
    try { return readFileSync(`/proc/${p}/cmdline`, "latin1") === want; } catch { return false; }
  });
}

test("a reattach after a dropped network: the same shell, every byte exactly once", async () => {
  const s = await shell();
  const n = 30011;
  s.input(`sleep 1; seq 1 ${n}; echo DO''NE\r`);
  /* the network drops while the output flows */
  await until(() => s.text.includes("\r\n200\r\n"), 20000, "the output under way");
  const stream = s.stream;
  net.cut();
  await until(() => s.attaches >= 1 && s.state === "attached", 30000, "attached again");
  await until(() => s.text.includes("DONE\r\n"), 30000, "the end of the output");
  assert.equal(s.stream, stream, "the same shell");
  assert.equal(s.begins.length, 2);
  assert.deepEqual(s.skips, []);
  assert.equal(s.begins[1].skipped, 0);
  const all = seqText(n);
  const at = s.text.indexOf(all);
  assert.ok(at > 0, "the whole output, in order, without a gap");
  assert.equal(s.text.indexOf(all, at + 1), -1);
  assert.equal(s.text.split("\r\n15000\r\n").length, 2, "no byte twice");
  assert.equal(s.offset, Buffer.byteLength(s.text, "latin1"), "the offset is every byte shown");
});

test("detach, then attach(session.session): state detached, the same shell, on from the offset shown", async () => {
  const s = await shell();
  const { session, stream } = s;
  const states = [];
  s.on("state", (x) => states.push(`${x.state}:${x.reason}`));
  s.detach();
  assert.equal(s.state, "detached");
  assert.equal(s.session, session, "the session ID kept");
  const shown = s.offset;
  /* at once: the attach waits out not_detached until the cluster saw the stream close */
  const paired = next(s, "paired", () => true, 30000);
  assert.equal(await s.attach(s.session), s);
  await paired;
  await until(() => s.begins.length === 2, 20000, "the host's begin on the new stream");
  assert.equal(s.stream, stream, "the same shell");
  assert.deepEqual([s.begins[1].offset, s.begins[1].skipped, s.begins[1].newStream], [shown, 0, false], "on from the offset shown");
  s.input("echo AGA''IN\r");
  await until(() => s.text.includes("AGAIN\r\n"), 20000, "the shell answers after the attach");
  /* waiting, when the host's data connection comes after the device's stream */
  assert.deepEqual(states.filter((x) => x !== "waiting:waiting"), ["detached:detached", "opening:attach", "attached:paired"]);
  assert.deepEqual(s.skips, []);
});

test("a reattach past the ring: a skipped event with the exact count, then the ring's bytes", async () => {
  const s = await shell();
  const n = 262147;                                   /* 1.8 MB of output: past the 1 MiB ring */
  const argv = ["seq", "1", String(n)];
  s.input(`sleep 1; seq 1 ${n}; echo DO''NE\r`);
  await until(() => s.text.includes("DO''NE"), 20000, "the command echoed");
  /* away before the output starts, and no way back until the shell wrote it all */
  net.setDown(true);
  net.cut();
  const before = s.offset;
  await until(() => running(argv), 20000, "seq started");
  await until(() => !running(argv), 60000, "seq done");
  net.setDown(false);
  await until(() => s.text.includes("DONE\r\n"), 60000, "attached again, the end of the output");
  assert.equal(s.skips.length, 1);
  const begin = s.begins.at(-1);
  assert.equal(begin.newStream, false);
  assert.equal(s.skips[0].count, begin.offset - before, "skipped: exactly the bytes between the two offsets");
  assert.ok(s.skips[0].count > 0);
  const shownBefore = Buffer.byteLength(s.text, "latin1") - (s.offset - begin.offset);
  assert.equal(shownBefore, before, "nothing shown between the drop and the begin");
  const afterText = Buffer.from(s.text, "latin1").subarray(before).toString("latin1");
  const seqPart = afterText.slice(0, afterText.indexOf("DONE\r\n"));
  assert.ok(seqPart.length > 500000, "the ring's bytes");
  assert.ok(seqText(n).endsWith(seqPart), "the bytes after the skip are the last ones the shell wrote, in order");
  assert.equal(s.offset, before + s.skips[0].count + Buffer.byteLength(afterText, "latin1"));
});
