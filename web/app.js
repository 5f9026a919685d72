/*
 * app.js: the demo page.  Each pane is one person on one device, with its
 * own connection to a gateway node and its own REST calls, so what one pane
 * shows arrived through its node.  The protocol is @bothy/client's
 * (js/, docs/client.md), loaded as bothy-client.js (the global `bothy`,
 * demo/client-install); this file is the page around it.
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
const TOAST_MS = 8000;
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
    const who = bothy.readToken(token);
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
    this.client = null;
    this.node = null;
    this.leftPin = pane.via === "edge";
    this.stopped = false;
    this.typers = new Map();        /* principal -> expiry (ms) */
    this.runUpdates = 0;
    this.runAt = 0;
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

  /* The device's connection: the package identifies, resumes the session
   * on whichever node answers, heartbeats and reconnects as docs/client.md
   * says (4017 and a refused token stop it); it sends focus and idle again
   * after a reconnect, and idle from the page's visibility.  A pane starts
   * on its node's own path and comes back through the edge. */
  connect() {
    const pinned = !this.leftPin;
    this.client = bothy.connect({
      url: wsUrl(pinned ? "node/" + this.via + "/gateway" : "gateway"),
      reconnectUrl: wsUrl("gateway"),
      token: this.token,
      backoff: { minMs: 250, maxMs: 8000 },
    });
    this.showRoute(pinned);
    this.client.on("state", (s) => this.onState(s));
    this.client.on("ready", (r) => this.onReady(r));
    this.client.on("run", (d) => this.onRun(d));
    this.client.on("event", (e) => this.onEvent(e.type, e.data));
    this.client.on("error", (e) => {
      this.log("error", e.kind === "request" ? e.request + ": " + e.code : e.message);
      if (e.kind === "request" && this.client.state === "connecting")
        this.setState("reconnecting", "The node could not answer (" + e.code + "); trying again…");
    });
  }

  showRoute(pinned) {
    this.routeText = pinned ? "via its own path" : "via the edge";
    this.el.dataset.route = pinned ? "pinned" : "edge";
    this.renderRoute();
  }

  onState(s) {
    if (s.state === "connecting" && s.code !== 0) {
      this.log("closed", String(s.code));
      /* every reconnect goes through the edge (reconnectUrl) */
      this.leftPin = true;
      this.showRoute(false);
      this.setState("reconnecting", "Reconnecting…");
    } else if (s.state === "connecting" && s.reason === "protocol") {
      this.setState("reconnecting", "Reconnecting…");
    } else if (s.state === "disconnected") {
      this.log("closed", String(s.code));
      if (s.reason === "replaced") this.stop("Taken elsewhere: this device connected again somewhere else");
      else if (s.reason === "token_refused") this.stop("Token refused: open the link printed by make demo again");
      else this.stop("Stopped (" + s.reason + ")");
    }
  }

  onReady(r) {
    this.node = r.node;
    this.el.dataset.node = r.node;
    this.setState("ready", r.resumed ? "Connected (resumed)" : "Connected");
    this.log("ready", (r.resumed ? "resumed on " : "identified on ") + this.cluster.describe(r.node));
    this.renderRoute();
    this.loadAgent();
    this.pollPresence();
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
    this.client.typing(this.cfg.thread.id);      /* at most one a second per thread */
  }

  sendFocus() {
    this.client.focus(this.focused ? this.cfg.thread.id : null);
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
        return;                 /* the "run" event: newer versions only */
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

  async pollPresence() {
    if (this.stopped || this.presenceBusy) return;
    this.presenceBusy = true;
    const note = $(this.el, ".presence-note");
    try {
      const rows = await bothy.presence({ token: this.token }, this.cfg.thread.id, this.cfg.people.map((p) => p.id));
      this.renderPresence(Array.isArray(rows) ? rows : []);
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
      const agents = await bothy.agentsPresence({ token: this.token }, [this.cfg.agent.id]);
      const row = (agents || []).find((a) => a.agent === this.cfg.agent.id);
      this.renderAgent(row ? row.state : "offline");
    } catch (e) {
      this.log("agents.presence", e.status ? "HTTP " + e.status : "unavailable");
    }
  }
}

/* --- the page ------------------------------------------------------------- */

function main() {
  if (typeof bothy !== "object") {
    document.getElementById("intro").textContent = "bothy-client.js is missing: run make demo again (demo/client-install)";
    return;
  }
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
  /* the terminal pane: a shell on the demo host, as the first pane's person */
  const term = document.getElementById("terminal");
  term.hidden = false;      /* first: the pane measures its width */
  const shell = typeof Terminal === "function" && typeof TerminalPane === "function" ?
    new TerminalPane(term, cfg.panes[0].token, cluster) : null;
  if (!shell) $(term, ".term-text").textContent = "xterm.js is missing: run make demo again (demo/xterm-install)";
  window.bothyDemo = { panes, shell };
}

main();
