/*
 * test/browser/scenario.mjs: the demo page in Debian's chromium (headless,
 * driven by playwright-core) against a running demo cluster.  Started by
 * test_browser.py, which starts the cluster (demo/cluster) and passes
 * everything in BOTHY_BROWSER_CONFIG (JSON):
 *   demo_url    the two-pane link of demo/cluster (DIR/demo.env)
 *   edge        the edge's base URL
 *   nodes       {"a": {"url", "id"}, "b": {...}}
 *   ada, grace  {"id", "token"}: a device each of their own for this test
 *   thread, agent  IDs
 *   kill        the command that SIGKILLs node a (an argv array)
 *   cluster     demo/cluster and the cluster's DIR: [script, DIR] (the
 *               terminal's checks kill and start a node with it)
 *   artifacts   the directory for the screenshots and results.json
 *   notify_ms   the driver's notification interval
 *
 * Every check is bounded polling in the page (waitForFunction); a check
 * that fails is recorded and the scenario goes on where it can.  Output:
 * one "ok N - name" or "not ok N - name: reason" line per check, and
 * results.json with the same.
 */
import { chromium } from "playwright-core";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { terminalChecks } from "./terminal.mjs";

const cfg = JSON.parse(process.env.BOTHY_BROWSER_CONFIG);
const results = [];
const T = 15000;    /* the longest a single check polls */

function shot(page, name) {
  return page.screenshot({ path: path.join(cfg.artifacts, name + ".png"), fullPage: true });
}

async function check(name, fn) {
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`ok ${results.length} - ${name}`);
  } catch (e) {
    const reason = String(e && e.message ? e.message : e).split("\n")[0].slice(0, 300);
    results.push({ name, ok: false, reason });
    console.log(`not ok ${results.length} - ${name}: ${reason}`);
  }
}

/* the link of one page with one pane: a person's own device, pinned to a node */
function paneUrl(via, who) {
  const f = new URLSearchParams();
  f.set("thread", cfg.thread);
  f.set("agent", cfg.agent + ":Scribe");
  f.append("person", cfg.ada.id + ":Ada");
  f.append("person", cfg.grace.id + ":Grace");
  f.append("pane", via + ":" + who.token);
  return cfg.edge + "/#" + f.toString().replace(/%3A/g, ":");
}

/* polls fn(arg) in the page until it is truthy */
function until(page, fn, arg, what, timeout = T) {
  return page.waitForFunction(fn, arg, { timeout, polling: 200 }).catch(() => {
    throw new Error(what + " not seen within " + timeout / 1000 + " s");
  });
}

async function main() {
  fs.mkdirSync(cfg.artifacts, { recursive: true });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "bothy-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1360, height: 1000 },
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const errors = [];
  context.on("page", (p) => p.on("pageerror", (e) => errors.push(e.message)));
  const A = cfg.nodes.a.id, B = cfg.nodes.b.id;

  /* --- the demo's own two-pane link -------------------------------------- */
  const demo = await context.newPage();
  demo.on("pageerror", (e) => errors.push(e.message));
  await demo.goto(cfg.demo_url);
  await check("demo page: both panes connect", () =>
    until(demo, () => [...document.querySelectorAll(".pane")].filter((p) => p.dataset.state === "ready").length === 2,
      null, "two ready panes"));
  await check("demo page: the panes are on two nodes, A and B", async () => {
    const nodes = await demo.$$eval(".pane", (ps) => ps.map((p) => p.dataset.node));
    if (nodes[0] !== A || nodes[1] !== B)
      throw new Error("pane nodes " + JSON.stringify(nodes) + ", want node a then node b");
    await until(demo, () => document.querySelector(".pane .route-node").textContent.startsWith("Node A"),
      null, "the pane naming node A");
  });
  await check("demo page: the run's progress moves (run.updated)", async () => {
    await until(demo, () => {
      const c = document.querySelector(".pane .run");
      return c.dataset.version && Number(c.dataset.version) > 0;
    }, null, "a run.updated snapshot");
    const first = await demo.$eval(".pane .run", (c) => [Number(c.dataset.version), c.querySelector(".bar").getAttribute("aria-valuenow")]);
    await until(demo, (f) => {
      const c = document.querySelector(".pane .run");
      return Number(c.dataset.version) > f[0] && c.querySelector(".bar").getAttribute("aria-valuenow") !== f[1];
    }, first, "a newer version with other progress");
  });
  await shot(demo, "demo-two-panes");

  /* --- two pages, one person each, on different nodes --------------------- */
  const ada = await context.newPage();
  const grace = await context.newPage();
  await ada.goto(paneUrl("a", cfg.ada));
  await grace.goto(paneUrl("b", cfg.grace));
  await check("two pages: Ada on node A, Grace on node B", async () => {
    await until(ada, (n) => document.querySelector(".pane").dataset.node === n, A, "Ada ready on node A");
    await until(grace, (n) => document.querySelector(".pane").dataset.node === n, B, "Grace ready on node B");
  });
  await check("typing: Grace's page shows Ada typing", async () => {
    await ada.locator(".compose-box").pressSequentially("Hello Grace", { delay: 60 });
    await until(grace, () => /Ada is typing/.test(document.querySelector(".typing").textContent), null,
      "\"Ada is typing…\" on Grace's page");
  });
  await check("typing: Ada's page shows Grace typing", async () => {
    await grace.locator(".compose-box").pressSequentially("Hi Ada", { delay: 60 });
    await until(ada, () => /Grace is typing/.test(document.querySelector(".typing").textContent), null,
      "\"Grace is typing…\" on Ada's page");
  });
  await check("presence: each page sees the other person on the other node", async () => {
    await until(ada, (a) => !!document.querySelector(`.presence li[data-person="${a.p}"][data-node="${a.n}"][data-device="${a.d}"]`),
      { p: cfg.grace.id, n: B, d: cfg.grace.device }, "Grace's device on node B in Ada's page");
    await until(grace, (a) => !!document.querySelector(`.presence li[data-person="${a.p}"][data-node="${a.n}"][data-device="${a.d}"]`),
      { p: cfg.ada.id, n: A, d: cfg.ada.device }, "Ada's device on node A in Grace's page");
  });
  await check("agent: the driver's agent shows online", async () => {
    await until(ada, () => document.querySelector(".agent").dataset.state === "online", null, "agent online on Ada's page");
    await until(grace, () => document.querySelector(".agent").dataset.state === "online", null, "agent online on Grace's page");
  });
  await check("notifications: a hint arrives as a toast", () =>
    until(demo, () => document.querySelectorAll(".toast").length > 0, null, "a toast on the demo page",
      2 * cfg.notify_ms + T));
  await shot(ada, "ada-node-a");
  await shot(grace, "grace-node-b");

  /* --- node A crashes: Ada comes back through the edge on node B ----------- */
  await check("failover: node A is killed", () => {
    const r = spawnSync(cfg.kill[0], cfg.kill.slice(1), { encoding: "utf8" });
    if (r.status !== 0) throw new Error("kill failed: " + (r.stderr || r.status));
  });
  await check("failover: Ada's page comes back on node B through the edge", async () => {
    await until(ada, (n) => {
      const p = document.querySelector(".pane");
      return p.dataset.state === "ready" && p.dataset.node === n && p.dataset.route === "edge";
    }, B, "Ada ready again on node B via the edge", 30000);
    const text = await ada.$eval(".pane .route-node", (e) => e.textContent);
    if (!text.startsWith("Node B")) throw new Error("the pane names " + JSON.stringify(text));
    const resumed = await ada.$eval(".pane .conn-text", (e) => e.textContent);
    if (!/resumed/.test(resumed)) throw new Error("the session was not resumed: " + JSON.stringify(resumed));
  });
  await check("failover: the demo page's Ada pane also moves to node B", () =>
    until(demo, (n) => {
      const p = document.querySelector(".pane");
      return p.dataset.state === "ready" && p.dataset.node === n;
    }, B, "the demo's Ada pane ready on node B", 30000));
  await check("failover: the cluster strip shows node A down", () =>
    until(demo, () => document.querySelector('.cluster-node[data-node="a"]').dataset.up === "false", null, "node A down"));
  await check("failover: Grace's page sees Ada's device on node B", () =>
    until(grace, (a) => !!document.querySelector(`.presence li[data-person="${a.p}"][data-node="${a.n}"][data-device="${a.d}"]`),
      { p: cfg.ada.id, n: B, d: cfg.ada.device }, "Ada's device on node B in Grace's page", 30000));
  await check("failover: typing still reaches Ada's page", async () => {
    await until(ada, () => document.querySelector(".typing").textContent === "", null,
      "the earlier typing indicator expiring", 20000);
    await grace.locator(".compose-box").pressSequentially("Still there?", { delay: 60 });
    await until(ada, () => /Grace is typing/.test(document.querySelector(".typing").textContent), null,
      "\"Grace is typing…\" on Ada's page after the failover");
  });
  await shot(ada, "ada-after-failover");
  await shot(demo, "demo-after-failover");

  /* --- the per-node status page ------------------------------------------- */
  const status = await context.newPage();
  await status.goto(cfg.edge + "/node/b/status");
  await check("status page: node B's ID, ready, its connections", async () => {
    await until(status, (n) => document.getElementById("node-id").textContent === n, B, "node B's ID");
    await until(status, () => document.getElementById("ready").textContent === "Ready", null, "Ready");
    await until(status, () => Number(document.getElementById("conn-person").textContent) === 4, null,
      "4 person connections (this test's Ada and Grace, the demo page's two panes)");
  });
  await shot(status, "status-node-b");

  /* --- the terminal pane, with both nodes up again (terminal.mjs) -------- */
  await check("terminal: node A started again", async () => {
    const r = spawnSync(cfg.cluster[0], ["start", "a", cfg.cluster[1]], { encoding: "utf8" });
    if (r.status !== 0) throw new Error("start failed: " + (r.stdout || "") + (r.stderr || r.status));
  });
  await terminalChecks({ cfg, context, check, until, shot, T });

  await check("no script errors in the pages", () => {
    if (errors.length) throw new Error(errors.join(" | "));
  });
  await context.close();
  fs.rmSync(profile, { recursive: true, force: true });
}

try {
  await main();
} catch (e) {
  results.push({ name: "scenario ran to the end", ok: false, reason: String(e.message || e).split("\n")[0] });
  console.log("not ok - scenario: " + e.message);
}
fs.writeFileSync(path.join(cfg.artifacts, "results.json"), JSON.stringify(results, null, 1));
const failed = results.filter((r) => !r.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
console.log("screenshots: " + cfg.artifacts);
process.exit(failed ? 1 : 0);
