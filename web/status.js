/*
 * status.js: the /status page of one gateway node.  Polls status.json
 * (relative, so /node/a/status asks node a through the edge) once a second
 * and shows it; says so when the node stops answering.
 */
"use strict";

const EVERY_MS = 1000;
let lastOk = 0;

function set(id, text, good) {
  const e = document.getElementById(id);
  e.textContent = text;
  e.classList.toggle("good", good === true);
  e.classList.toggle("bad", good === false);
}

function duration(s) {
  const d = Math.floor(s / 86400), h = Math.floor(s / 3600) % 24, m = Math.floor(s / 60) % 60;
  if (d > 0) return d + " d " + h + " h";
  if (h > 0) return h + " h " + m + " min";
  if (m > 0) return m + " min " + (s % 60) + " s";
  return s + " s";
}

function render(s) {
  set("ready", s.ready ? "Ready" : s.stopping ? "Stopping" : "Not ready", s.ready === true);
  set("uptime", duration(s.uptime_s));
  set("mode", s.cluster_mode || "not read yet");
  set("database", s.database_up ? "Up" : "Down", s.database_up === true);
  set("listener", s.listener_up ? "Up" : "Down", s.listener_up === true);
  const c = s.connections || {};
  set("conn-person", String(c.person ?? 0));
  set("conn-agent", String(c.agent ?? 0));
  set("conn-unidentified", String(c.unidentified ?? 0));
  document.getElementById("node-id").textContent = s.node;
  const rows = typeof s.presence_rows === "number";
  document.getElementById("presence-tile").hidden = !rows;
  if (rows) set("presence-rows", String(s.presence_rows));
  document.getElementById("presence-note").textContent = rows ? "" :
    "This node does not report its presence rows yet.";

  const body = document.getElementById("signals");
  const items = Object.entries(s.signals_received || {}).map(([kind, n]) => {
    const tr = document.createElement("tr");
    const k = document.createElement("td");
    k.textContent = kind;
    k.className = "mono";
    const v = document.createElement("td");
    v.textContent = String(n);
    v.className = "num";
    tr.append(k, v);
    return tr;
  });
  body.replaceChildren(...items);
  document.getElementById("signals-note").textContent =
    "Its own signals heard back: " + (s.signals_own ?? 0) + " · dropped as malformed: " + (s.signals_dropped ?? 0);
}

async function poll() {
  const banner = document.getElementById("banner");
  try {
    const r = await fetch("status.json", { cache: "no-store" });
    if (!r.ok) throw new Error("HTTP " + r.status);
    render(await r.json());
    lastOk = Date.now();
    banner.hidden = true;
    document.getElementById("updated").textContent = "Updated " +
      new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  } catch (e) {
    banner.hidden = false;
    banner.textContent = lastOk
      ? "This node is not answering (last answer " + Math.round((Date.now() - lastOk) / 1000) + " s ago)."
      : "This node is not answering.";
  }
}

const m = location.pathname.match(/\/node\/([a-z0-9]+)\/status$/);
if (m) {
  document.getElementById("title").textContent = "Node " + m[1].toUpperCase();
  document.title = "bothy · node " + m[1].toUpperCase();
}
poll();
setInterval(poll, EVERY_MS);
