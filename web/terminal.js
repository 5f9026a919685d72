/*
 * terminal.js: the demo page's terminal pane.  A shell on the demo host
 * (bothy-host, paired by demo/cluster) opened through the edge, with the
 * first pane's person token.  The protocol is @bothy/client's
 * TerminalSession (docs/client.md, "A terminal pane": the REST calls, the
 * stream, its frames, the exact reattach by stream ID and offset, the 4102
 * rules) joined to xterm.js by its adapter (attachXterm); xterm.js
 * (@xterm/xterm, demo/xterm-install) draws the screen.  This file is the
 * pane around them: its buttons, its status line, which node relays, and
 * the data attributes the browser test reads.  Loaded after
 * bothy-client.js and before app.js, which makes the pane (main) and whose
 * helpers ($) it calls.
 */
"use strict";

const TERM_FONT_PX = 14;

class TerminalPane {
  constructor(root, token, cluster) {
    this.root = root;
    this.token = token;
    this.cluster = cluster;
    this.shell = null;          /* the TerminalSession of the shell shown */
    this.unbind = null;         /* undoes attachXterm */
    this.pairedAt = Infinity;
    this.term = new Terminal({
      fontFamily: "ui-monospace, 'DejaVu Sans Mono', monospace",
      fontSize: TERM_FONT_PX,
      scrollback: 2000,
      cursorBlink: true,
    });
    this.term.open($(root, ".term-screen"));
    this.term.onResize(() => { this.root.dataset.size = this.term.rows + " " + this.term.cols; });
    $(root, ".term-open").addEventListener("click", () => this.open());
    $(root, ".term-new").addEventListener("click", () => this.open());
    window.addEventListener("resize", () => this.fit());
    window.addEventListener("pagehide", () => this.end(true));
    cluster.onChange(() => this.renderNodes());
    this.fit();
    this.root.dataset.size = this.term.rows + " " + this.term.cols;
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
    const relay = this.shell && this.shell.state === "attached" && this.cluster.polledAt > this.pairedAt ?
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

  /* --- the session ------------------------------------------------------ */

  /* A new shell (ending the pane's current one first). */
  async open() {
    this.end(false);
    this.setState("connecting", "Opening a shell…");
    const rest = { token: this.token };
    let host;
    try {
      const hosts = await bothy.terminalHosts(rest);
      host = hosts.find((x) => x.state === "active" && x.connected);
    } catch (e) {
      return this.setState("stopped", "The shell could not be opened: the edge did not answer");
    }
    if (!host) return this.setState("stopped", "The demo host is not connected (see .demo/logs/host.log)");
    const shell = new bothy.TerminalSession(rest);
    this.shell = shell;
    this.term.reset();
    this.unbind = bothy.attachXterm(this.term, shell);
    this.root.dataset.reattaches = "0";
    shell.on("state", (s) => { if (shell === this.shell) this.shellState(s); });
    shell.on("begin", (b) => { if (shell === this.shell) this.root.dataset.resumedAt = String(b.offset); });
    shell.on("output", () => { if (shell === this.shell) this.root.dataset.offset = String(shell.offset); });
    try {
      await shell.open(host.host);
    } catch (e) {
      if (shell !== this.shell) return;
      return this.setState("stopped", e.status ? "The shell could not be opened (HTTP " + e.status + ")" :
        "The shell could not be opened: the edge did not answer");
    }
    this.root.dataset.session = shell.session;
  }

  shellState(s) {
    const shell = this.shell;
    this.root.dataset.reattaches = String(shell.attaches);
    switch (s.state) {
      case "waiting":
        return this.setState("waiting", "Waiting for the host…");
      case "attached":
        this.pairedAt = Date.now();
        this.setState("ready", shell.attaches ? "Attached again (" + shell.attaches + ")" : "Connected");
        this.renderNodes();
        return this.term.focus();
      case "reattaching":
        this.renderNodes();
        return this.setState("reconnecting", "Stream lost: attaching again at offset " + shell.offset + "…");
      case "ended":
        this.renderNodes();
        if (s.reason === "session_ended") return this.setState("ended", "The shell ended");
        if (s.reason === "forbidden") return this.setState("stopped", "The session is over");
        return;
      case "failed":
        this.renderNodes();
        if (s.reason === "host_timeout")
          return this.setState("stopped", "The host did not start the shell in time; open a new shell");
        return this.setState("stopped", "The session could not be attached again; open a new shell");
      default:
        return;
    }
  }

  /* DELETE the session: "New shell", and the page going away (keepalive). */
  end(leaving) {
    const shell = this.shell;
    this.shell = null;
    if (this.unbind) this.unbind();
    this.unbind = null;
    if (shell) shell.end(leaving).catch(() => {});
  }

  /* The screen's text, for the browser test: the rows of xterm's buffer. */
  screenText() {
    const buf = this.term.buffer.active;
    const lines = [];
    for (let i = 0; i < buf.length; i++) lines.push(buf.getLine(i).translateToString(true));
    return lines.join("\n");
  }
}
