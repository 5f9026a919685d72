/*
 * terminal.js: the demo page's terminal pane.  A shell on the demo host
 * (bothy-host, paired by demo/cluster) opened through the edge, with the
 * first pane's person token:
 *   - the REST calls of docs/protocol.md ("The terminal: REST calls"):
 *     GET /v1/terminal/hosts, POST /v1/terminal/sessions, its /attach,
 *     DELETE for "New shell" and when the page goes away;
 *   - the stream /terminal/stream/<session> through the edge ("Terminal
 *     streams"): identify with the session token, waiting, paired, then
 *     binary messages, each one frame of docs/host.md ("The stream's
 *     frames"): resume, begin, output, input, resize.
 * The pane keeps the stream ID and the offset after the last byte it
 * showed.  When the stream drops (its relaying node died) it attaches
 * again (a fresh grant: the token is single use) and resumes at that
 * offset, so the same shell goes on and no byte is shown twice.
 * xterm.js (@xterm/xterm, demo/xterm-install) draws the screen.  Loaded
 * before app.js, which makes the pane (main) and whose helpers ($, wsUrl)
 * it calls.
 */
"use strict";

const TERM_FONT_PX = 14;
const TERM_FRAME_MAX = 16384;           /* the bytes of one input frame */
const TERM_RETRY_MIN_MS = 500;
const TERM_RETRY_MAX_MS = 4000;
const TERM_ATTACH_FOR_MS = 120000;      /* then the pane gives up and says so */

const utf8 = new TextEncoder();

/* Offsets are below 2^53 (docs/host.md): a Number holds them exactly. */
function getOffset(v, at) { return v.getUint32(at) * 4294967296 + v.getUint32(at + 4); }
function setOffset(v, at, n) { v.setUint32(at, Math.floor(n / 4294967296)); v.setUint32(at + 4, n % 4294967296); }

class TerminalPane {
  constructor(root, token, cluster) {
    this.root = root;
    this.token = token;
    this.cluster = cluster;
    this.host = null;
    this.session = null;
    this.ws = null;
    this.stream = 0n;           /* the shell's stream ID: 64 random bits, a BigInt */
    this.offset = 0;            /* after the last byte shown */
    this.attaching = false;
    this.reattaches = 0;
    this.everPaired = false;    /* this session's stream paired once */
    this.closeCode = 0;         /* how the last stream closed */
    this.term = new Terminal({
      fontFamily: "ui-monospace, 'DejaVu Sans Mono', monospace",
      fontSize: TERM_FONT_PX,
      scrollback: 2000,
      cursorBlink: true,
    });
    this.term.open($(root, ".term-screen"));
    this.term.onData((d) => this.input(utf8.encode(d)));
    this.term.onBinary((d) => this.input(Uint8Array.from(d, (c) => c.charCodeAt(0) & 255)));
    this.term.onResize(() => this.sendResize());
    $(root, ".term-open").addEventListener("click", () => this.open());
    $(root, ".term-new").addEventListener("click", () => this.open());
    window.addEventListener("resize", () => this.fit());
    window.addEventListener("pagehide", () => this.end(true));
    cluster.onChange(() => this.renderNodes());
    this.fit();
    window.bothyTerminal = this;
  }

  /* --- what the pane shows -------------------------------------------- */

  setState(state, text) {
    this.root.dataset.state = state;
    $(this.root, ".term-text").textContent = text;
  }

  /* Which node relays the stream and which holds the host's control
   * connection, from the nodes' /status.json (Cluster.poll): the demo has
   * one host and this pane's one session, so the node with a paired relay
   * and the node with a control connection are these. */
  renderNodes() {
    const name = (pick) => {
      const n = this.cluster.nodes.find((x) => x.up && x.status && pick(x.status));
      return n ? n.name : "";
    };
    /* a relay only from a poll that began after this pairing */
    const relay = this.ws && this.root.dataset.state === "ready" && this.cluster.polledAt > this.pairedAt ?
      name((s) => s.terminal_relay && s.terminal_relay.paired > 0) : "";
    const control = name((s) => s.terminal_control_connections > 0);
    this.root.dataset.relay = relay;
    this.root.dataset.control = control;
    $(this.root, ".term-relay").textContent = relay ? "relayed by node " + relay.toUpperCase() : "not relayed now";
    $(this.root, ".term-control").textContent = control ?
      "the host's control connection on node " + control.toUpperCase() : "the host is not connected";
  }

  /* Columns and rows that fit the pane: the cell measured in the pane's
   * own font (xterm.js's fit addon is another package; this is its sum). */
  fit() {
    const box = $(this.root, ".term-screen");
    const probe = document.createElement("span");
    probe.className = "term-probe";
    probe.textContent = "W".repeat(50);
    box.append(probe);
    const cellW = probe.getBoundingClientRect().width / 50;
    const cellH = probe.getBoundingClientRect().height;
    probe.remove();
    if (!(cellW > 0 && cellH > 0)) return;
    /* the box's padding (16 px) and room for xterm's scroll bar (12 px) */
    const cols = Math.max(20, Math.min(250, Math.floor((box.clientWidth - 28) / cellW)));
    const rows = Math.max(8, Math.min(60, Math.floor(window.innerHeight * 0.45 / cellH)));
    if (cols !== this.term.cols || rows !== this.term.rows) this.term.resize(cols, rows);
  }

  /* --- REST --------------------------------------------------------------- */

  async rest(method, path, body) {
    const headers = { Authorization: "Bearer " + this.token };
    const init = { method, headers, cache: "no-store" };
    if (method === "POST") {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body || {});
    }
    const r = await fetch(path, init);
    let json = null;
    try { json = await r.json(); } catch (e) { /* 204, or not JSON */ }
    return { status: r.status, body: json };
  }

  async findHost() {
    const r = await this.rest("GET", "v1/terminal/hosts");
    if (r.status !== 200 || !r.body || !Array.isArray(r.body.hosts)) return null;
    const h = r.body.hosts.find((x) => x.state === "active" && x.connected);
    return h ? h.host : null;
  }

  /* A new session (ending the pane's current one first). */
  async open() {
    this.end(false);
    this.setState("connecting", "Opening a shell…");
    try {
      this.host = await this.findHost();
      if (!this.host) return this.setState("stopped", "The demo host is not connected (see .demo/logs/host.log)");
      const r = await this.rest("POST", "v1/terminal/sessions", { host: this.host });
      if (r.status !== 201) return this.setState("stopped", "The shell could not be opened (HTTP " + r.status + ")");
      this.session = r.body.session;
      this.stream = 0n;
      this.offset = 0;
      this.reattaches = 0;
      this.everPaired = false;
      this.term.reset();
      this.root.dataset.session = this.session;
      this.root.dataset.reattaches = "0";
      this.connect(r.body);
    } catch (e) {
      this.setState("stopped", "The shell could not be opened: the edge did not answer");
    }
  }

  /* DELETE the session: "New shell", and the page going away (keepalive). */
  end(leaving) {
    const session = this.session;
    this.session = null;
    if (this.ws) { const ws = this.ws; this.ws = null; ws.close(1000); }
    if (session) {
      fetch("v1/terminal/sessions/" + session, { method: "DELETE", keepalive: leaving,
        headers: { Authorization: "Bearer " + this.token } }).catch(() => {});
    }
  }

  /* The stream dropped without the session ending: a fresh grant, then a
   * stream that resumes at the offset shown.  409 not_detached while the
   * server has not yet seen the old pairing go, host_unavailable while the
   * host reconnects, 503 while a node starts: tried again, with back-off. */
  async reattach() {
    if (this.attaching || !this.session) return;
    this.attaching = true;
    const session = this.session;
    const until = Date.now() + TERM_ATTACH_FOR_MS;
    let delay = TERM_RETRY_MIN_MS;
    try {
      while (this.session === session && Date.now() < until) {
        this.setState("reconnecting", "Stream lost: attaching again at offset " + this.offset + "…");
        await new Promise((f) => setTimeout(f, delay));
        delay = Math.min(TERM_RETRY_MAX_MS, delay * 2);
        let r;
        try {
          r = await this.rest("POST", "v1/terminal/sessions/" + session + "/attach", {});
        } catch (e) {
          continue;         /* the edge or the node did not answer */
        }
        if (this.session !== session) return;
        if (r.status === 201) {
          this.reattaches += 1;
          this.root.dataset.reattaches = String(this.reattaches);
          this.connect(r.body);
          return;
        }
        if (r.status === 403 || r.status === 401) {
          this.session = null;
          return this.setState("stopped", "The session is over (HTTP " + r.status + ")");
        }
        if (r.status === 409 && this.closeCode === 4102 && !this.everPaired) {
          /* The stream waited alone for the whole open timeout and never
           * paired: the host did not come in time (docs/protocol.md, 4102).
           * Mostly the opening ended (open_timeout: not_detached), or the
           * host is gone (host_unavailable); rarely the host started just
           * then and the session will be detached.  Whichever: end it, so
           * no shell is left behind, and say so at once. */
          this.end(false);
          return this.setState("stopped", "The host did not start the shell in time; open a new shell");
        }
      }
      if (this.session === session) this.setState("stopped", "The session could not be attached again; open a new shell");
    } finally {
      this.attaching = false;
    }
  }

  /* --- the stream -------------------------------------------------------- */

  connect(grant) {
    const ws = new WebSocket(wsUrl(grant.stream.replace(/^\//, "")), "bothy-terminal-stream");
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    this.paired = false;
    this.pairedAt = Infinity;
    ws.onopen = () => ws.send(JSON.stringify({ op: "identify", side: "device", token: grant.token }));
    ws.onmessage = (e) => {
      if (ws !== this.ws) return;
      if (typeof e.data === "string") return this.control(e.data);
      this.frame(new DataView(e.data));
    };
    ws.onclose = (e) => {
      if (ws !== this.ws) return;
      this.ws = null;
      this.closeCode = e.code;
      this.renderNodes();
      if (e.code === 1000) {
        this.session = null;
        this.setState("ended", "The shell ended");
      } else {
        this.reattach();
      }
    };
  }

  control(text) {
    let m;
    try { m = JSON.parse(text); } catch (e) { return; }
    if (m.op === "waiting") {
      this.paired = false;
      this.setState("waiting", "Waiting for the host…");
    } else if (m.op === "paired") {
      this.paired = true;
      this.everPaired = true;
      this.pairedAt = Date.now();
      /* resume first, once per pairing: the stream and offset shown */
      const b = new DataView(new ArrayBuffer(17));
      b.setUint8(0, 0x72);
      b.setBigUint64(1, this.stream);
      setOffset(b, 9, this.offset);
      this.ws.send(b.buffer);
      this.sendResize();
      this.setState("ready", this.reattaches ? "Attached again (" + this.reattaches + ")" : "Connected");
      this.renderNodes();
      this.term.focus();
    }
  }

  frame(v) {
    const type = v.byteLength > 0 ? v.getUint8(0) : 0;
    if (type === 0x62 && v.byteLength === 25) {            /* begin */
      const stream = v.getBigUint64(1);
      const at = getOffset(v, 9);
      const skipped = getOffset(v, 17);
      if (stream !== this.stream) {
        if (this.stream !== 0n) this.term.reset();          /* another shell: a new screen */
        this.stream = stream;
      } else if (skipped > 0) {
        this.term.write("\r\n\x1b[7m[" + skipped + " bytes skipped]\x1b[0m\r\n");
      }
      this.offset = at;
      this.root.dataset.resumedAt = String(at);
    } else if (type === 0x6f && v.byteLength > 9) {         /* output */
      const at = getOffset(v, 1);
      if (at !== this.offset) return;                       /* never a byte twice */
      const bytes = new Uint8Array(v.buffer, v.byteOffset + 9, v.byteLength - 9);
      this.term.write(bytes.slice());
      this.offset += bytes.length;
      this.root.dataset.offset = String(this.offset);
    }
  }

  input(bytes) {
    if (!this.ws || !this.paired) return;
    for (let i = 0; i < bytes.length; i += TERM_FRAME_MAX) {
      const part = bytes.subarray(i, i + TERM_FRAME_MAX);
      const f = new Uint8Array(part.length + 1);
      f[0] = 0x69;
      f.set(part, 1);
      this.ws.send(f.buffer);
    }
  }

  sendResize() {
    this.root.dataset.size = this.term.rows + " " + this.term.cols;
    if (!this.ws || !this.paired) return;
    const b = new DataView(new ArrayBuffer(5));
    b.setUint8(0, 0x77);
    b.setUint16(1, this.term.rows);
    b.setUint16(3, this.term.cols);
    this.ws.send(b.buffer);
  }

  /* The screen's text, for the browser test: the rows of xterm's buffer. */
  screenText() {
    const buf = this.term.buffer.active;
    const lines = [];
    for (let i = 0; i < buf.length; i++) lines.push(buf.getLine(i).translateToString(true));
    return lines.join("\n");
  }
}
