/*
 * test/browser/terminal.mjs: the demo page's terminal pane (web/terminal.js)
 * against the demo cluster's real bothy-host, through the real edge, in
 * chromium: a shell opened, `echo bothy-$RANDOM` read back from the screen,
 * the window resized and `stty size` read back, the relaying node killed
 * and the pane attached again with the same shell answering.  Called by
 * scenario.mjs with both nodes up; `check`, `until` and `shot` are its.
 *
 * The node killed relays the session, wherever the host's control
 * connection is (the edge hashes the session ID): if it held the control
 * connection too, the host logs in again on the other node and gets
 * session.open; if not, the host connects the session's data connection
 * again through the edge by itself (docs/host.md).  Either way the session
 * is detached on the surviving node and the pane's attach succeeds
 * (test/host/test_e2e_terminal.py kills a relay node without the control
 * connection every time).
 *
 * Last, the host service stopped (SIGSTOP: its control connection stays,
 * so the session opens, but no shell starts): the pane's stream waits
 * alone for the open timeout, gets 4102 and the opening ends; the pane
 * says so at once instead of trying to attach for two minutes.  The host
 * goes on (SIGCONT) and a new shell opens.
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";

const LONG = 60000;
/* bothy.terminal_open_timeout in the demo cluster (its default) */
const OPEN_TIMEOUT_MS = 30000;

function cluster(cfg, ...args) {
  const r = spawnSync(cfg.cluster[0], [...cfg.cluster.slice(1, -1), ...args, cfg.cluster.at(-1)],
    { encoding: "utf8", env: process.env });
  if (r.status !== 0) throw new Error("demo/cluster " + args.join(" ") + " failed: " + (r.stdout || "") + (r.stderr || r.status));
}

/* types a line into the terminal and waits for a screen line matching re */
async function run(page, until, line, re, what) {
  await page.locator("#terminal .term-screen").click();
  await page.keyboard.type(line, { delay: 15 });
  await page.keyboard.press("Enter");
  await until(page, (src) => new RegExp(src, "m").test(window.bothyDemo.shell.screenText()), re.source, what);
  return page.evaluate((src) => window.bothyDemo.shell.screenText().match(new RegExp(src, "m")), re.source);
}

/* Both nodes list Ada's demo host as connected (GET /v1/terminal/hosts, each
 * node's own view: docs/protocol.md). */
async function hostCountedEverywhere(cfg) {
  const deadline = Date.now() + LONG;
  for (;;) {
    let counted = 0;
    for (const n of ["a", "b"]) {
      try {
        const r = await fetch(cfg.nodes[n].url + "/v1/terminal/hosts",
          { headers: { Authorization: "Bearer " + cfg.ada.token } });
        const body = await r.json();
        if (r.status === 200 && body.hosts.some((h) => h.state === "active" && h.connected)) counted++;
      } catch (e) { /* a node starting */ }
    }
    if (counted === 2) return;
    if (Date.now() > deadline) throw new Error("the host not counted as connected by both nodes within " + LONG / 1000 + " s");
    await new Promise((f) => setTimeout(f, 200));
  }
}

function pane(page) {
  return page.$eval("#terminal", (t) => ({ ...t.dataset }));
}

export async function terminalChecks(ctx) {
  const { cfg, context, check, until, shot, T } = ctx;
  const page = await context.newPage();
  await page.goto(cfg.demo_url);
  let tag = "";
  let kept = "";

  await check("terminal: the pane opens a shell on the demo host through the edge", async () => {
    await until(page, () => document.querySelector("#terminal").dataset.control !== "", null,
      "the host's control connection on a node", LONG);
    await page.click("#terminal .term-open");
    await until(page, () => document.querySelector("#terminal").dataset.state === "ready" &&
      /demo\$ /.test(window.bothyDemo.shell.screenText()), null, "a prompt in the pane");
  });

  await check("terminal: echo bothy-$RANDOM comes back on the screen", async () => {
    const m = await run(page, until, "echo bothy-$RANDOM", /^bothy-(\d+)\s*$/, "bothy-<number> on its own line");
    tag = m[1];
    const text = await page.evaluate(() => window.bothyDemo.shell.screenText());
    if (!/demo\$ echo bothy-\$RANDOM/.test(text)) throw new Error("the command line is not on the screen");
  });
  await shot(page, "terminal-echo");

  await check("terminal: a resized window, and stty size says the pane's size", async () => {
    const before = (await pane(page)).size;
    await page.setViewportSize({ width: 900, height: 760 });
    await until(page, (b) => document.querySelector("#terminal").dataset.size !== b, before, "a new size");
    const size = (await pane(page)).size;
    const m = await run(page, until, "stty size", new RegExp("^(" + size + ")\\s*$"), "stty size " + size);
    if (m[1] !== size) throw new Error("stty size " + m[1] + ", the pane " + size);
  });
  await shot(page, "terminal-resized");

  await check("terminal: the pane names the relaying node and the control connection's node", async () => {
    await until(page, () => {
      const t = document.querySelector("#terminal").dataset;
      return t.state === "ready" && t.relay !== "" && t.control !== "";
    }, null, "the relay and control nodes named");
    const p = await pane(page);
    const text = await page.$eval("#terminal .terminal-route", (e) => e.textContent);
    const want = "relayed by node " + p.relay.toUpperCase() + " · the host's control connection on node " + p.control.toUpperCase();
    if (text !== want) throw new Error("the pane says " + JSON.stringify(text));
    /* what the pane says is what the nodes say */
    for (const n of ["a", "b"]) {
      const s = await (await fetch(cfg.nodes[n].url + "/status.json")).json();
      if ((s.terminal_relay.paired > 0) !== (n === p.relay)) throw new Error("node " + n + " relays " + s.terminal_relay.paired);
      if ((s.terminal_control_connections > 0) !== (n === p.control)) throw new Error("node " + n + " control " + s.terminal_control_connections);
    }
  });

  await check("terminal: the relaying node killed, the pane attaches again and the same shell answers", async () => {
    kept = "kept-" + tag + "-" + Date.now() % 100000;
    await run(page, until, "X=" + kept + "; echo set-$X", new RegExp("^set-" + kept + "\\s*$"), "the variable set");
    const p = await pane(page);
    const offset = p.offset;
    cluster(cfg, "kill", p.relay);
    try {
      await until(page, () => {
        const t = document.querySelector("#terminal").dataset;
        return t.state === "ready" && Number(t.reattaches) >= 1;
      }, null, "the pane attached again", LONG);
      const after = await pane(page);
      if (after.resumedAt !== offset) throw new Error("resumed at " + after.resumedAt + ", the pane showed " + offset);
      await until(page, (killed) => {
        const relay = document.querySelector("#terminal").dataset.relay;
        return relay !== "" && relay !== killed;
      }, p.relay, "the pane naming the other node as its relay");
      await run(page, until, "echo again-$X", new RegExp("^again-" + kept + "\\s*$"), "the same shell's variable");
    } finally {
      await shot(page, "terminal-reattached");
      cluster(cfg, "start", p.relay);
    }
  });

  await check("terminal: a shell the host never starts: the pane stops at the open timeout (4102), without attaching", async () => {
    const pid = Number(readFileSync(cfg.cluster.at(-1) + "/run/host.pid", "utf8").trim());
    if (!(pid > 1)) throw new Error("no pid of the demo host");
    /* a node counts the host from its control connection or another
     * node's announcement, which a node started again (the check before)
     * hears at the host's next heartbeat: open only once both count it */
    await hostCountedEverywhere(cfg);
    process.kill(pid, "SIGSTOP");
    try {
      const opened = Date.now();
      await page.click("#terminal .term-new");
      await until(page, () => document.querySelector("#terminal").dataset.state === "waiting", null,
        "the pane waiting for the host");
      await until(page, () => document.querySelector("#terminal").dataset.state === "stopped", null,
        "the pane stopped", OPEN_TIMEOUT_MS + 15000);
      const took = Date.now() - opened;
      const p = await pane(page);
      const text = await page.$eval("#terminal .term-text", (e) => e.textContent);
      if (!/did not start the shell in time/.test(text)) throw new Error("the pane says " + JSON.stringify(text));
      if (p.reattaches !== "0") throw new Error("attached " + p.reattaches + " times");
      if (took < OPEN_TIMEOUT_MS) throw new Error("stopped after " + took + " ms, before the open timeout");
    } finally {
      process.kill(pid, "SIGCONT");
    }
    await shot(page, "terminal-open-timeout");
    /* the host goes on: a new shell answers */
    await hostCountedEverywhere(cfg);
    await page.click("#terminal .term-new");
    await until(page, () => document.querySelector("#terminal").dataset.state === "ready" &&
      /demo\$ /.test(window.bothyDemo.shell.screenText()), null, "a prompt in the pane again", LONG).catch(async (e) => {
      /* what each node's relay holds: which node each side reached */
      const file = cfg.artifacts + "/terminal-metrics.txt";
      for (const n of ["a", "b"]) {
        const t = await (await fetch(cfg.nodes[n].url + "/metrics")).text();
        appendFileSync(file, "node " + n + ":\n" + t.split("\n").filter((l) =>
          /^bothy_terminal_relay/.test(l) && !/ 0$/.test(l)).join("\n") + "\n");
      }
      throw new Error(e.message + " (the nodes' relay metrics: " + file + ")");
    });
  });
  await page.close();
}
