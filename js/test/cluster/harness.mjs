// harness.mjs: what the cluster tests share: the cluster js/test/run
// started with demo/cluster (its ports, key store, IDs and database),
// tokens minted by bothy-gateway, a node killed with SIGKILL and started
// again, the application's calls through psql, a TCP proxy whose
// connections a test cuts (a dropped network), and bounded waits.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createPrivateKey, randomUUID, sign } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import { join } from "node:path";

export { WebSocketImpl } from "../platform-ws.mjs";

export const DIR = process.env.BOTHY_CLIENT_CLUSTER;
export const ROOT = process.env.BOTHY_CLIENT_ROOT;
if (!DIR || !ROOT) throw new Error("run through js/test/run cluster (BOTHY_CLIENT_CLUSTER, BOTHY_CLIENT_ROOT)");
const GATEWAY = process.env.BOTHY_GATEWAY;
const env = process.env;
export const PORTS = { edge: +env.BOTHY_DEMO_EDGE_PORT, a: +env.BOTHY_DEMO_NODE_A_PORT, b: +env.BOTHY_DEMO_NODE_B_PORT, pg: +env.BOTHY_DEMO_PGPORT };
export const EDGE_HTTP = `http://127.0.0.1:${PORTS.edge}/`;
export const EDGE_WS = `ws://127.0.0.1:${PORTS.edge}/gateway`;
export const nodeWs = (n) => `ws://127.0.0.1:${PORTS[n]}/gateway`;

export const IDS = Object.fromEntries(readFileSync(join(ROOT, "demo", "ids"), "utf8")
  .split("\n").map((l) => l.match(/^(DEMO_\w+)=(\S+)$/)).filter(Boolean).map((m) => [m[1], m[2]]));

export function personToken(person, device) {
  return execFileSync(GATEWAY, ["token", "person", "--person", person, "--device", device, "--keys", join(DIR, "keys")], { encoding: "utf8" }).trim();
}

export function agentToken(agent) {
  return execFileSync(GATEWAY, ["token", "agent", "--agent", agent, "--keys", join(DIR, "keys")], { encoding: "utf8" }).trim();
}

/* A token signed with the store's newest key, as docs/tokens.md ("Minting
 * tokens elsewhere") describes: the way to make a resume token that has
 * lapsed without waiting its 5 minutes. */
export function forgeToken(payload) {
  const keys = join(DIR, "keys");
  const newest = readdirSync(keys).filter((f) => f.endsWith(".key")).sort().pop();
  const seed = Buffer.from(readFileSync(join(keys, newest), "utf8").trim().split(" ")[1], "base64url");
  const key = createPrivateKey({ key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]), format: "der", type: "pkcs8" });
  const head = `bothy1.${newest.replace(/\.key$/, "")}.${Buffer.from(payload).toString("base64url")}`;
  return `${head}.${sign(null, Buffer.from(head), key).toString("base64url")}`;
}

/* A UUIDv7-shaped ID of now (the gateway's IDs are UUIDv7; any version is accepted) */
export function uuid() {
  return randomUUID();
}

/* The application's calls, as the demo's application login (bothy_demo_app). */
export function appSql(sql) {
  return execFileSync("psql", ["-h", join(DIR, "pg"), "-p", String(PORTS.pg), "-U", "bothy_demo_app", "-d", "bothy_demo",
    "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-c", sql], { encoding: "utf8" }).trim();
}

export function nodeId(n) {
  return fetch(`http://127.0.0.1:${PORTS[n]}/status.json`).then((r) => r.json()).then((j) => j.node);
}

export function killNode(n) {
  execFileSync(join(ROOT, "demo", "cluster"), ["kill", n, DIR], { stdio: "pipe" });
}

/* SIGTERM: the node stops in order, closing its clients with 1001; returns its pid */
export function stopNode(n) {
  const pid = Number(readFileSync(join(DIR, "run", `node-${n}.pid`), "utf8").trim());
  if (!(pid > 1)) throw new Error(`no pid of node ${n}`);
  process.kill(pid, "SIGTERM");
  return pid;
}

/* The process has exited (gone, or a zombie not yet reaped). */
export function exited(pid) {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").startsWith("Z");
  } catch {
    return true;
  }
}

export function startNode(n) {
  execFileSync(join(ROOT, "demo", "cluster"), ["start", n, DIR], { stdio: "pipe", timeout: 60000 });
}

export async function nodeUp(n) {
  try {
    return (await fetch(`http://127.0.0.1:${PORTS[n]}/readyz`)).status === 200;
  } catch {
    return false;
  }
}

/* Polls fn (sync or async) until it is truthy, at most ms. */
export async function until(fn, ms, what) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/* The next `name` event of an emitter that pred accepts, within ms. */
export function next(emitter, name, pred = () => true, ms = 20000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { off(); reject(new Error(`no ${name} event within ${ms} ms`)); }, ms);
    const off = emitter.on(name, (v) => {
      if (!pred(v)) return;
      clearTimeout(timer);
      off();
      resolve(v);
    });
  });
}

/* A TCP proxy to 127.0.0.1:port.  cut() ends every connection it carries
 * at once (a reset, as a dropped network looks to the client); while
 * down, it refuses new ones the same way. */
export async function proxy(port) {
  const live = new Set();
  let down = false;
  const server = net.createServer((c) => {
    if (down) return c.resetAndDestroy ? c.resetAndDestroy() : c.destroy();
    const u = net.connect(port, "127.0.0.1");
    live.add(c); live.add(u);
    c.pipe(u); u.pipe(c);
    const end = () => { live.delete(c); live.delete(u); c.destroy(); u.destroy(); };
    c.on("error", end); u.on("error", end); c.on("close", end); u.on("close", end);
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: server.address().port,
    cut() { for (const s of live) s.resetAndDestroy ? s.resetAndDestroy() : s.destroy(); live.clear(); },
    setDown(v) { down = v; },
    close() { this.cut(); server.close(); },
  };
}
