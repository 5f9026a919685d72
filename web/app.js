/*
 * app.js: the demo page.  Each pane is one person on one device, with its
 * own WebSocket to a gateway node (client protocol v1, docs/protocol.md)
 * and its own REST calls, so what one pane shows arrived through its node.
 *
 * Everything the page needs comes from the URL fragment, which a browser
 * never sends to a server:
 *   #thread=UUID[:Name]&agent=UUID[:Name]
 *    &person=UUID:Name (repeated: the people whose presence is shown)
 *    &pane=VIA:TOKEN   (repeated: VIA a node's path "a", "b", ... or "edge")
 *    &nodes=a,b        (the edge's per-node paths; default a,b)
 * A pane starts on its node's own path (/node/VIA/gateway) so that two
 * panes show two nodes; after any drop it comes back through the edge
 * (/gateway), as a real client always would, on whichever node answers.
 */
"use strict";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PRESENCE_EVERY_MS = 2000;
const NODES_EVERY_MS = 2000;
const TYPING_EVERY_MS = 1000;   /* the node drops more than one a second anyway */
const TOAST_MS = 8000;
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 8000;
const EVENTS_KEPT = 60;

const HINTS = {
  mention: "You were mentioned",
  reply: "New reply",
  direct: "Direct message",
  run: "Run update",
  invite: "Invitation",
  system: "Notice",
};

/* --- small helpers ---------------------------------------------------- */

function $(root, sel) { return root.querySelector(sel); }

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function short(id) { return id ? "…" + id.slice(-4) : ""; }

function named(value) {
  if (!value) return null;
  const i = value.indexOf(":");
  const id = (i < 0 ? value : value.slice(0, i)).toLowerCase();
  if (!UUID.test(id)) return null;
  return { id, name: i < 0 ? null : value.slice(i + 1) };
}

/* The payload of a bothy1 token: {"kind":"person-device","person":..,"device":..}. */
function tokenPayload(token) {
  try {
    const part = token.split(".")[2].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(part + "=".repeat((4 - part.length % 4) % 4)));
  } catch (e) {
    return null;
  }
}

function parseFragment(hash) {
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  const thread = named(p.get("thread"));
  const agent = named(p.get("agent"));
  const people = p.getAll("person").map(named).filter(Boolean);
  const panes = [];
  for (const v of p.getAll("pane")) {
    const i = v.indexOf(":");
    const via = v.slice(0, i);
    const token = v.slice(i + 1);
    const who = tokenPayload(token);
    if (i > 0 && /^[a-z0-9]{1,16}$/.test(via) && who && UUID.test(who.person || ""))
      panes.push({ via, token, person: who.person, device: who.device });
  }
  const nodes = (p.get("nodes") || "a,b").split(",").filter((n) => /^[a-z0-9]{1,16}$/.test(n));
  if (!thread || panes.length === 0) return null;
  return { thread, agent, people, panes, nodes };
}

/* The WebSocket URL of a path of this page's origin (the edge, or a node). */
function wsUrl(path) {
  const u = new URL(path, location.href);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  u.hash = "";
  u.search = "";
  return u.href;
}

function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  return s < 2 ? "just now" : s < 60 ? s + " s ago" : Math.round(s / 60) + " min ago";
}

function clock(d) {
  return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/* --- the cluster: which node ID is which node ---------------------------- */

class Cluster {
  constructor(names, list, links) {
    this.nodes = names.map((name) => ({ name, id: null, up: null, status: null }));
    this.list = list;
    this.links = links;
    this.listeners = [];
    for (const n of this.nodes) {
      n.item = el("li", "cluster-node");
      n.item.dataset.node = n.name;
      n.dot = el("span", "dot");
      n.dot.setAttribute("aria-hidden", "true");
      const a = el("a", "", "Node " + n.name.toUpperCase());
      a.href = "node/" + n.name + "/status";
      a.target = "_blank";
      a.rel = "noopener";
      n.label = el("span", "mono muted", "");
      n.item.append(n.dot, a, n.label);
      list.append(n.item);
      const link = el("a", "", "node " + n.name.toUpperCase());
      link.href = "node/" + n.name + "/status";
      link.target = "_blank";
      link.rel = "noopener";
      links.append(link);
    }
  }

  nameOf(id) {
    const n = this.nodes.find((x) => x.id === id);
    return n ? n.name.toUpperCase() : null;
  }

  describe(id) {
    if (!id) return "no node yet";
    const name = this.nameOf(id);
    return (name ? "node " + name + " " : "node ") + short(id);
  }

  /* "Node A …540b", for the start of a line */
  title(id) {
    const d = this.describe(id);
    return d.charAt(0).toUpperCase() + d.slice(1);
  }

  onChange(f) { this.listeners.push(f); }

  async poll() {
    const started = Date.now();
    await Promise.all(this.nodes.map(async (n) => {
      let up = false;
      let status = null;
      try {
        const r = await fetch("node/" + n.name + "/status.json", { cache: "no-store" });
        if (r.ok) {
          status = await r.json();
          n.id = status.node;
          up = status.ready === true;
        }
      } catch (e) { /* down: shown below */ }
      n.up = up;
      n.status = status;      /* the terminal pane reads its terminal members */
      n.item.dataset.up = String(up);
      n.dot.style.background = up ? "var(--ok)" : "var(--bad)";
      n.label.textContent = n.id ? short(n.id) + (up ? "" : " · down") : up ? "" : "down";
      n.item.title = up ? "ready" : "not answering";
    }));
    this.polledAt = started;        /* what the nodes said is no older than this */
    for (const f of this.listeners) f();
  }

  start() {
    this.poll();
    setInterval(() => this.poll(), NODES_EVERY_MS);
  }
}

/* --- one pane: one person's device ----------------------------------------- */

class Pane {
  constructor(index, cfg, pane, cluster) {
    this.cfg = cfg;
    this.cluster = cluster;
    this.via = pane.via;
    this.token = pane.token;
    this.person = pane.person;
    this.device = pane.device;
    this.name = this.nameOf(pane.person) || "Person " + (index + 1);
    this.ws = null;
    this.resume = null;
    this.node = null;
    this.leftPin = pane.via === "edge";
    this.attempts = 0;
    this.stopped = false;
    this.typers = new Map();        /* principal -> expiry (ms) */
    this.runs = new Map();          /* run -> highest version seen */
    this.runUpdates = 0;
    this.runAt = 0;
    this.lastTyping = 0;
    this.focused = false;
    this.events = 0;

    const root = document.getElementById("pane-template").content.firstElementChild.cloneNode(true);
    this.el = root;
    root.setAttribute("aria-label", this.name + "'s device");
    root.dataset.person = this.person;
    $(root, ".avatar").textContent = this.name.slice(0, 1).toUpperCase();
    $(root, ".pane-name").textContent = this.name;
    const box = $(root, ".compose-box");
    box.id = "compose-" + index;
    $(root, ".compose-label").htmlFor = box.id;
    box.placeholder = "Write as " + this.name + "…";
    $(root, ".agent-name").textContent = cfg.agent ? cfg.agent.name || "Agent " + short(cfg.agent.id) : "No agent";
    box.addEventListener("input", () => this.typed());
    box.addEventListener("focus", () => { this.focused = true; this.sendFocus(); });
    box.addEventListener("blur", () => { this.focused = false; this.sendFocus(); });
    cluster.onChange(() => this.renderRoute());
    this.renderRoute();
  }

  nameOf(id) {
    const p = this.cfg.people.find((x) => x.id === id);
    return p ? p.name : null;
  }

  /* --- the connection ----------------------------------------------------- */

  start() {
    this.connect();
    this.pollPresence();
    setInterval(() => this.pollPresence(), PRESENCE_EVERY_MS);
    setInterval(() => this.renderTyping(), 250);
    setInterval(() => this.renderRunAge(), 1000);
  }

  connect() {
    const pinned = !this.leftPin;
    const ws = new WebSocket(wsUrl(pinned ? "node/" + this.via + "/gateway" : "gateway"));
    this.ws = ws;
    this.op = this.resume ? "resume" : "identify";
    this.routeText = pinned ? "via its own path" : "via the edge";
    this.el.dataset.route = pinned ? "pinned" : "edge";
    this.renderRoute();
    ws.onopen = () => {
      ws.send(JSON.stringify({ op: this.op, token: this.op === "resume" ? this.resume : this.token }));
    };
    ws.onmessage = (e) => {
      if (ws !== this.ws) return;
      this.lastHeard = Date.now();
      let m;
      try { m = JSON.parse(e.data); } catch (x) { return; }
      this.message(m);
    };
    ws.onclose = (e) => {
      if (ws !== this.ws) return;
      this.dropped(e.code);
    };
  }

  send(obj) {
    if (this.ws && this.ready) this.ws.send(JSON.stringify(obj));
  }

  message(m) {
    if (m.op === "ready") return this.onReady(m);
    if (m.op === "heartbeat_ack") return;
    if (m.op === "event") return this.onEvent(m.type, m.data || {});
    if (m.op === "error") {
      this.log("error", (m.request || "?") + ": " + (m.code || "?"));
      if (!this.ready) this.setState("reconnecting", "The node could not answer (" + m.code + "); trying again…");
    }
  }

  onReady(m) {
    this.ready = true;
    this.resume = m.resume;
    this.node = m.node;
    this.attempts = 0;
    this.el.dataset.node = m.node;
    this.setState("ready", this.op === "resume" ? "Connected (resumed)" : "Connected");
    this.log("ready", (this.op === "resume" ? "resumed on " : "identified on ") + this.cluster.describe(m.node));
    this.renderRoute();
    /* what this device is doing, again: a new connection starts without it */
    this.sendFocus();
    if (document.hidden) this.send({ op: "idle", idle: true });
    const beat = Math.max(1000, Math.floor(m.heartbeat_ms / 2));
    const limit = m.heartbeat_ms;
    this.lastHeard = Date.now();
    clearInterval(this.beatTimer);
    this.beatTimer = setInterval(() => {
      /* a connection the node stopped answering is given up on */
      if (Date.now() - this.lastHeard > limit + beat) return this.abandon();
      this.send({ op: "heartbeat" });
    }, beat);
    this.loadAgent();
    this.pollPresence();
  }

  abandon() {
    const ws = this.ws;
    this.ws = null;
    try { ws.close(4000, "no answer"); } catch (e) { /* closed already */ }
    this.dropped(1006);
  }

  dropped(code) {
    this.ws = null;
    this.ready = false;
    clearInterval(this.beatTimer);
    this.leftPin = true;
    this.log("closed", String(code));
    if (code === 4017) return this.stop("Taken elsewhere: this device connected again somewhere else");
    if (code === 4001) {
      if (this.op === "resume") {
        /* the resume token lapsed (5 min): a fresh session with the device token */
        this.resume = null;
        return this.retry(0);
      }
      return this.stop("Token refused: open the link printed by make demo again");
    }
    this.retry();
  }

  retry(delay) {
    if (delay === undefined) {
      const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** this.attempts);
      delay = Math.round(base * (0.8 + Math.random() * 0.4));
    }
    this.attempts += 1;
    this.setState("reconnecting", delay < 1000 ? "Reconnecting…" : "Reconnecting in " + Math.round(delay / 1000) + " s");
    setTimeout(() => this.connect(), delay);
  }

  stop(text) {
    this.stopped = true;
    this.setState("stopped", text);
  }

  setState(state, text) {
    this.el.dataset.state = state;
    $(this.el, ".conn-text").textContent = text;
  }

  /* --- what the person does ----------------------------------------------- */

  typed() {
    const now = Date.now();
    if (now - this.lastTyping < TYPING_EVERY_MS) return;
    this.lastTyping = now;
    this.send({ op: "typing", thread: this.cfg.thread.id });
  }

  sendFocus() {
    this.send({ op: "focus", thread: this.focused ? this.cfg.thread.id : null });
  }

  visibility(hidden) {
    this.send({ op: "idle", idle: hidden });
  }

  /* --- events ------------------------------------------------------------- */

  onEvent(type, d) {
    switch (type) {
      case "typing.started":
        if (d.thread !== this.cfg.thread.id) break;
        /* the node's clock says until when; never longer than 15 s here */
        this.typers.set(d.principal, Math.min(Date.parse(d.expires_at) || 0, Date.now() + 15000));
        this.renderTyping();
        this.log(type, (this.nameOf(d.principal) || "someone") + " is typing");
        return;
      case "run.updated":
        this.onRun(d);
        return;
      case "agent.presence_changed":
        if (this.cfg.agent && d.agent === this.cfg.agent.id) this.renderAgent(d.state);
        this.log(type, d.state);
        return;
      case "notification.created":
        this.toast(d);
        this.log(type, d.hint_kind + (d.quiet ? " (quiet)" : ""));
        return;
      default:
        break;
    }
    this.log(type, "");
  }

  onRun(d) {
    if (d.thread && d.thread !== this.cfg.thread.id) return;
    const seen = this.runs.get(d.run);
    if (seen !== undefined && d.version <= seen) return;
    this.runs.set(d.run, d.version);
    this.runUpdates += 1;
    this.runAt = Date.now();
    const card = $(this.el, ".run");
    const status = typeof d.status === "string" ? d.status : "running";
    const progress = Math.max(0, Math.min(1, Number(d.progress) || 0));
    const pct = Math.round(progress * 100);
    card.dataset.status = status;
    card.dataset.version = String(d.version);
    $(card, ".run-status").textContent = status;
    $(card, ".run-title").textContent = typeof d.title === "string" ? d.title : "Run " + short(d.run);
    const bar = $(card, ".bar");
    bar.setAttribute("aria-valuenow", String(pct));
    bar.setAttribute("aria-valuetext", pct + " %");
    const fill = $(card, ".bar-fill");
    /* a new task starts at 0: jump back, glide only forward */
    fill.style.transition = pct < (this.runPct || 0) ? "none" : "";
    fill.style.width = pct + "%";
    this.runPct = pct;
    $(card, ".run-step").textContent = (typeof d.step === "string" ? d.step : "") + " · " + pct + " %";
    this.renderRunAge();
    if (this.runUpdates % 10 === 1) this.log("run.updated", pct + " %");
  }

  renderRunAge() {
    if (!this.runAt) return;
    $(this.el, ".run-version").textContent =
      this.runUpdates + (this.runUpdates === 1 ? " update · " : " updates · ") + ago(this.runAt);
  }

  renderTyping() {
    const now = Date.now();
    const names = [];
    for (const [who, until] of this.typers) {
      if (until <= now) this.typers.delete(who);
      else names.push(who === this.person ? this.name + " (another device)" : this.nameOf(who) || "Someone");
    }
    const t = $(this.el, ".typing");
    const text = names.length === 0 ? "" :
      names.length === 1 ? names[0] + " is typing…" :
      names.slice(0, -1).join(", ") + " and " + names[names.length - 1] + " are typing…";
    if (t.textContent !== text) t.textContent = text;
  }

  renderAgent(state) {
    const card = $(this.el, ".agent");
    const known = ["online", "busy", "offline"].includes(state);
    card.dataset.state = known ? state : "unknown";
    $(card, ".agent-state").textContent = known ? state : "not seen yet";
  }

  toast(d) {
    const box = $(this.el, ".toasts");
    const t = el("div", "toast");
    t.dataset.hint = d.hint_kind || "";
    const body = el("div", "toast-body");
    body.append(el("p", "toast-title", HINTS[d.hint_kind] || "Notification"));
    const detail = [];
    if (typeof d.count === "number") detail.push(d.count + " unread");
    if (d.thread === this.cfg.thread.id) detail.push("in this thread");
    if (d.quiet) detail.push("quiet");
    body.append(el("p", "toast-text", "For " + this.name + (detail.length ? " · " + detail.join(" · ") : "")));
    const close = el("button", "", "×");
    close.type = "button";
    close.setAttribute("aria-label", "Dismiss");
    close.addEventListener("click", () => t.remove());
    t.append(body, close);
    box.prepend(t);
    while (box.children.length > 3) box.lastElementChild.remove();
    setTimeout(() => t.remove(), TOAST_MS);
  }

  log(type, text) {
    this.events += 1;
    const list = $(this.el, ".event-list");
    const li = el("li");
    li.dataset.type = type;
    li.append(el("time", "", clock(new Date())), el("span", "", type + (text ? " · " + text : "")));
    list.prepend(li);
    while (list.children.length > EVENTS_KEPT) list.lastElementChild.remove();
    $(this.el, ".event-count").textContent = String(this.events);
  }

  renderRoute() {
    $(this.el, ".route-via").textContent = this.routeText || "";
    $(this.el, ".route-node").textContent = this.node ? this.cluster.title(this.node) : "No node yet";
  }

  /* --- REST: presence and the agent --------------------------------------- */

  async get(path) {
    const r = await fetch(path, { headers: { Authorization: "Bearer " + this.token }, cache: "no-store" });
    if (!r.ok) {
      const e = new Error("HTTP " + r.status);
      e.status = r.status;
      throw e;
    }
    return r.json();
  }

  async pollPresence() {
    if (this.stopped || this.presenceBusy) return;
    this.presenceBusy = true;
    const q = new URLSearchParams({ thread: this.cfg.thread.id });
    for (const p of this.cfg.people) q.append("person", p.id);
    const note = $(this.el, ".presence-note");
    try {
      const r = await this.get("v1/presence?" + q);
      this.renderPresence(Array.isArray(r.presence) ? r.presence : []);
      note.textContent = "";
    } catch (e) {
      note.textContent = e.status === 404 ? "This node does not answer /v1/presence yet."
        : e.status === 403 ? "Not allowed to see this thread."
        : e.status === 401 ? "Token refused by /v1/presence."
        : "Presence is not available right now.";
    } finally {
      this.presenceBusy = false;
    }
  }

  renderPresence(rows) {
    const list = $(this.el, ".presence");
    const items = [];
    for (const p of this.cfg.people) {
      const mine = rows.filter((r) => r.person === p.id);
      if (mine.length === 0) {
        const li = el("li");
        li.dataset.person = p.id;
        li.dataset.present = "false";
        const dot = el("span", "dot");
        dot.setAttribute("aria-hidden", "true");
        li.append(dot, el("span", "who", p.name || short(p.id)), el("span", "tag", "away"));
        items.push(li);
        continue;
      }
      for (const r of mine) {
        const li = el("li");
        li.dataset.person = r.person;
        li.dataset.device = r.device;
        li.dataset.node = r.node;
        li.dataset.idle = String(!!r.idle);
        li.dataset.present = "true";
        const dot = el("span", "dot");
        dot.setAttribute("aria-hidden", "true");
        const device = r.device === this.device ? "this device" : "device " + short(r.device);
        const where = [this.cluster.describe(r.node),
          r.focus === this.cfg.thread.id ? "looking at this thread" : r.focus ? "in another thread" : "not in a thread",
          r.idle ? "idle" : "active"];
        li.append(dot, el("span", "who", p.name || short(p.id)), el("span", "tag", device),
          el("span", "where", where.join(" · ")));
        items.push(li);
      }
    }
    list.replaceChildren(...items);
  }

  async loadAgent() {
    if (!this.cfg.agent) return;
    try {
      const r = await this.get("v1/agents/presence?agent=" + this.cfg.agent.id);
      const row = (r.agents || []).find((a) => a.agent === this.cfg.agent.id);
      this.renderAgent(row ? row.state : "offline");
    } catch (e) {
      this.log("agents.presence", e.status ? "HTTP " + e.status : "unavailable");
    }
  }
}

/* --- the page ------------------------------------------------------------- */

function main() {
  const cfg = parseFragment(location.hash);
  const cluster = new Cluster(cfg ? cfg.nodes : ["a", "b"], document.getElementById("cluster-nodes"),
    document.getElementById("status-links"));
  cluster.start();
  if (!cfg) {
    document.getElementById("intro").hidden = true;
    document.getElementById("empty").hidden = false;
    return;
  }
  const holder = document.getElementById("panes");
  const panes = cfg.panes.map((p, i) => new Pane(i, cfg, p, cluster));
  for (const p of panes) holder.append(p.el);
  for (const p of panes) p.start();
  document.addEventListener("visibilitychange", () => {
    for (const p of panes) p.visibility(document.hidden);
  });
  /* the terminal pane: a shell on the demo host, as the first pane's person */
  const term = document.getElementById("terminal");
  term.hidden = false;      /* first: the pane measures its width */
  const shell = typeof Terminal === "function" && typeof TerminalPane === "function" ?
    new TerminalPane(term, cfg.panes[0].token, cluster) : null;
  if (!shell) $(term, ".term-text").textContent = "xterm.js is missing: run make demo again (demo/xterm-install)";
  window.bothyDemo = { panes, shell };
}

main();
