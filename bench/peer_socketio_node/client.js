// bench/peer_socketio_node/client.js: the one client of bench/peer_socketio,
// the same code for bothy and for the peer: npm's `ws`, no per-message
// deflate, each wire protocol spoken by hand.
//
//   bothy  client protocol v1 (docs/protocol.md): ws://HOST:PORT/gateway,
//          {"op":"identify","token":...} with a person-device token signed
//          here from the key store (docs/tokens.md, "Minting tokens
//          elsewhere"), then {"op":"event","type":"run.updated",...}
//   floor  the same protocol against bench/fanout_floor_server.c, which
//          answers any identify with ready and writes each line of its
//          command FIFO to every connection: no gateway, no database
//   peer   Socket.IO 4 over Engine.IO 4's websocket transport:
//          ws://HOST:PORT/socket.io/?EIO=4&transport=websocket; "0{...}"
//          (open) answered by "40" (connect to /), "40{...}" back; "2"
//          (ping) answered by "3" (pong); events as 42["run.updated",{...}]
//
// Run as the coordinator, it forks WORKERS processes (child_process.fork)
// that hold the subscribers, persons 1..SUBS, person i on node i % 2 (half
// on each), publishes run updates (bothy: bothy.run_changed in one
// statement on the database, the document's sent_ns being that
// statement's clock_timestamp(); the peer: POST /publish on node 0, sent_ns
// taken at the emit; the floor: the event's line written to both servers'
// FIFOs, sent_ns taken here just before), and measures, from sent_ns to the
// receipts:
//
//   latency    UPDATES updates, each alone: its first and its last receipt
//   sustained  SECONDS of updates, WINDOW in flight (the next published as
//              one has reached every subscriber), distinct runs in turn so
//              that bothy's per-run coalescing never folds two: deliveries
//              per second, and the CPU the servers and every PostgreSQL
//              process spent (/proc/PID/stat; the postmaster's waited-for
//              children count too) per delivery
//
// One JSON line on stdout at the end.  Bounded waits everywhere: a
// connection phase of at most 300 s, an update of at most 10 s.
//
//   node client.js --system bothy|peer|floor --ports P0,P1 --subs N --workers W
//        --thread T --agent A --server-pids PID,PID [--pg-data DIR]
//        [--pg-host DIR --pg-port N --keys DIR] [--fifos F0,F1] [--updates 5]
//        [--seconds 10] [--window 4] [--clk-tck 100]
//   (--pg-data for bothy and the peer, --fifos for the floor)
"use strict";
const { fork } = require("child_process");
const crypto = require("crypto");
const fs = require("fs");
const path = require("path");

const CONNECT_TIMEOUT_MS = 300000;
const UPDATE_TIMEOUT_MS = 10000;
const INFLIGHT = 100;           // connections being opened at once, per worker
const PERSON_PREFIX = "00000000-0000-4000-8000-";

// the wall clock in ns (the servers stamp sent_ns with the same clock)
function wallNs() {
    return (performance.timeOrigin + performance.now()) * 1e6;
}

function person(i) {
    return PERSON_PREFIX + i.toString(16).padStart(12, "0");
}

// ---------------------------------------------------------------- worker --

function b64url(buf) {
    return Buffer.from(buf).toString("base64url");
}

// The newest key of the store signs (docs/tokens.md).
function signer(keysDir) {
    const names = fs.readdirSync(keysDir).filter((n) => /^\d{8}-\d{6}-\d{3}-[0-9a-f]{8}\.key$/.test(n)).sort();
    if (!names.length) throw new Error("no key in " + keysDir);
    const file = names[names.length - 1];
    const text = fs.readFileSync(path.join(keysDir, file), "ascii");
    const m = /^bothy-ed25519-v1 ([A-Za-z0-9_-]{43})\n$/.exec(text);
    if (!m) throw new Error("not a key file: " + file);
    const seed = Buffer.from(m[1], "base64url");
    const key = crypto.createPrivateKey({
        key: Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]),
        format: "der", type: "pkcs8",
    });
    const kid = file.slice(0, -4);
    const exp = Math.floor(Date.now() / 1000) + 86400;
    return (p) => {
        const payload = `{"kind":"person-device","person":"${p}","device":"${crypto.randomUUID()}","exp":${exp}}`;
        const signed = `bothy1.${kid}.${b64url(payload)}`;
        return signed + "." + b64url(crypto.sign(null, Buffer.from(signed), key));
    };
}

function worker() {
    const WebSocket = require("ws");
    process.on("disconnect", () => process.exit(0));     // the coordinator has gone
    let cfg, sign;
    const socks = [];
    const stats = new Map();    // "run:version" -> {n, min, max} (ns)
    let mine = 0;               // subscribers of this worker that are ready

    function record(run, version, sentNs) {
        const lat = wallNs() - sentNs;
        const key = run + ":" + version;
        let s = stats.get(key);
        if (!s) stats.set(key, (s = { n: 0, min: Infinity, max: -Infinity }));
        s.n++;
        if (lat < s.min) s.min = lat;
        if (lat > s.max) s.max = lat;
        if (s.n === mine) process.send({ done: key, n: s.n, min: s.min, max: s.max });
    }

    function open(i, done) {
        const port = cfg.ports[i % 2];
        const bothy = cfg.system !== "peer";  // the floor speaks bothy's protocol
        const url = bothy ? `ws://127.0.0.1:${port}/gateway`
            : `ws://127.0.0.1:${port}/socket.io/?EIO=4&transport=websocket`;
        const ws = new WebSocket(url, { perMessageDeflate: false, handshakeTimeout: 60000 });
        let ready = false;
        let finished = false;
        const finish = (ok, why) => {
            if (finished) return;
            finished = true;
            done(ok, why);
        };
        ws.on("open", () => {
            if (bothy) ws.send(JSON.stringify({ op: "identify", token: sign ? sign(person(i)) : "floor" }));
        });
        ws.on("message", (data) => {
            const text = data.toString();
            if (bothy) {
                const m = JSON.parse(text);
                if (!ready) {
                    if (m.op !== "ready") return finish(false, "not ready: " + text.slice(0, 80));
                    ready = true;
                    return finish(true);
                }
                if (m.op === "event" && m.type === "run.updated") record(m.data.run, m.data.version, m.data.sent_ns);
                return;
            }
            if (text === "2") return ws.send("3");
            if (text.startsWith("42")) {
                const [name, doc] = JSON.parse(text.slice(2));
                if (name === "run.updated") record(doc.run, doc.version, doc.sent_ns);
                return;
            }
            if (text[0] === "0") return ws.send("40");
            if (text.startsWith("40")) {
                ready = true;
                return finish(true);
            }
            if (text.startsWith("44")) return finish(false, "connect refused: " + text.slice(0, 80));
        });
        ws.on("close", (code) => {
            if (!ready) finish(false, "closed " + code);
            else if (!cfg.closing) process.send({ lost: 1, code });
        });
        ws.on("error", (err) => finish(false, err.message));
        socks.push(ws);
    }

    function connectAll() {
        const todo = [];
        for (let i = cfg.first; i < cfg.first + cfg.count; i++) todo.push(i);
        let running = 0, failed = 0;
        const reasons = [];
        const next = () => {
            while (running < INFLIGHT && todo.length) {
                const i = todo.shift();
                running++;
                open(i, (ok, why) => {
                    running--;
                    if (ok) mine++;
                    else {
                        failed++;
                        if (reasons.length < 3) reasons.push(why);
                    }
                    if (!todo.length && !running) process.send({ connected: mine, failed, reasons });
                    else next();
                });
            }
        };
        next();
    }

    process.on("message", (msg) => {
        if (msg.cmd === "connect") {
            cfg = msg;
            if (cfg.system === "bothy") sign = signer(cfg.keys);
            connectAll();
        } else if (msg.cmd === "stats") {
            const s = stats.get(msg.key) || { n: 0, min: Infinity, max: -Infinity };
            process.send({ stats: msg.key, n: s.n, min: s.min, max: s.max });
        } else if (msg.cmd === "close") {
            cfg.closing = true;
            for (const ws of socks) ws.terminate();
            process.exit(0);
        }
    });
}

// ----------------------------------------------------------- coordinator --

function args() {
    const a = { updates: 5, seconds: 10, window: 4, "clk-tck": 100 };
    const v = process.argv.slice(2);
    for (let i = 0; i < v.length; i += 2) {
        if (!v[i].startsWith("--") || i + 1 >= v.length) throw new Error("bad argument " + v[i]);
        a[v[i].slice(2)] = v[i + 1];
    }
    for (const k of ["system", "ports", "subs", "workers", "thread", "agent", "server-pids",
        a.system === "floor" ? "fifos" : "pg-data"])
        if (a[k] === undefined) throw new Error("--" + k + " is required");
    a.ports = a.ports.split(",").map(Number);
    a.subs = Number(a.subs);
    a.workers = Number(a.workers);
    a.serverPids = a["server-pids"].split(",").map(Number);
    for (const k of ["updates", "seconds", "window", "clk-tck"]) a[k] = Number(a[k]);
    return a;
}

// CPU ticks so far of the servers and of every PostgreSQL process (the
// postmaster with what its ended children used, and its live children;
// none for the floor).
function cpuTicks(a) {
    const fields = (pid) => {
        try {
            const s = fs.readFileSync(`/proc/${pid}/stat`, "ascii");
            return s.slice(s.lastIndexOf(")") + 2).split(" ");
        } catch {
            return null;            // ended meanwhile
        }
    };
    const ticks = (f, children) => (f ? Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0) : 0);
    let servers = 0;
    for (const pid of a.serverPids) servers += ticks(fields(pid), false);
    if (a["pg-data"] === undefined) return { servers, postgres: 0 };
    const master = Number(fs.readFileSync(path.join(a["pg-data"], "postmaster.pid"), "ascii").split("\n")[0]);
    let postgres = ticks(fields(master), true);
    for (const d of fs.readdirSync("/proc")) {
        if (!/^\d+$/.test(d)) continue;
        const f = fields(d);
        if (f && Number(f[1]) === master) postgres += ticks(f, false);
    }
    return { servers, postgres };
}

async function coordinator() {
    const a = args();
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    let publish, endPublisher;
    if (a.system === "bothy") {
        const { Client } = require("pg");
        const db = new Client({ host: a["pg-host"], port: Number(a["pg-port"]), database: "bothy_test", user: "postgres" });
        await db.connect();
        // one statement at a time on the one connection, as the peer's
        // publishes go one at a time over one HTTP connection
        let last = Promise.resolve();
        publish = (run, version) => {
            const next = last.then(() => db.query(
                "SELECT bothy.run_changed($1, $2, $3, $4, jsonb_build_object('sent_ns', " +
                "(extract(epoch FROM clock_timestamp()) * 1000000)::bigint * 1000))",
                [run, a.thread, a.agent, version]));
            last = next.catch(() => {});
            return next;
        };
        endPublisher = () => db.end();
    } else if (a.system === "floor") {
        // the floor servers keep their FIFOs open for reading: no wait here
        const fifos = a.fifos.split(",").map((f) => fs.openSync(f, "w"));
        publish = (run, version) => {
            const data = { run, thread: a.thread, agent: a.agent, version, sent_ns: Math.round(wallNs()) };
            const line = JSON.stringify({ op: "event", type: "run.updated", data }) + "\n";
            for (const fd of fifos) fs.writeSync(fd, line);
            return Promise.resolve();
        };
        endPublisher = () => { for (const fd of fifos) fs.closeSync(fd); };
    } else {
        const http = require("http");
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        publish = (run, version) => new Promise((resolve, reject) => {
            const req = http.request({ host: "127.0.0.1", port: a.ports[0], method: "POST", agent,
                path: `/publish?run=${run}&version=${version}` }, (res) => {
                res.resume();
                res.on("end", () => (res.statusCode === 204 ? resolve() : reject(new Error("publish " + res.statusCode))));
            });
            req.on("error", reject);
            req.end();
        });
        endPublisher = () => agent.destroy();
    }

    // the workers, persons 1..subs in contiguous shares
    const workers = [];
    const waiters = new Map();      // key -> {left, n, min, max, resolve}
    let lost = 0;
    const share = Math.ceil(a.subs / a.workers);
    for (let w = 0; w < a.workers; w++) {
        const first = 1 + w * share, count = Math.min(share, a.subs - w * share);
        if (count <= 0) break;
        const child = fork(__filename, [], { env: { ...process.env, BOTHY_PEER_WORKER: "1" }, stdio: ["ignore", "inherit", "inherit", "ipc"] });
        child.on("message", (m) => {
            if (m.lost) lost++;
            const key = m.done || m.stats;
            const wait = key && waiters.get(key);
            if (!wait) return;
            wait.n += m.n;
            wait.min = Math.min(wait.min, m.min);
            wait.max = Math.max(wait.max, m.max);
            if (--wait.left === 0) {
                waiters.delete(key);
                wait.resolve(wait);
            }
        });
        workers.push({ child, first, count });
    }
    const connected = await Promise.race([
        Promise.all(workers.map((w) => new Promise((resolve) => {
            const on = (m) => {
                if (m.connected === undefined) return;
                w.child.off("message", on);
                resolve(m);
            };
            w.child.on("message", on);
            w.child.send({ cmd: "connect", system: a.system, ports: a.ports, first: w.first, count: w.count, keys: a.keys });
        }))),
        sleep(CONNECT_TIMEOUT_MS).then(() => null),
    ]);
    if (!connected) throw new Error("the subscribers did not connect within " + CONNECT_TIMEOUT_MS / 1000 + " s");
    const ready = connected.reduce((s, m) => s + m.connected, 0);
    const failed = connected.reduce((s, m) => s + m.failed, 0);
    if (failed) throw new Error(failed + " subscribers did not connect: " + connected.flatMap((m) => m.reasons).join("; "));

    // one update: publish, then its receipts from every worker, within the timeout
    async function update(run, version) {
        const key = run + ":" + version;
        const done = new Promise((resolve) => waiters.set(key, { left: workers.length, n: 0, min: Infinity, max: -Infinity, resolve }));
        await publish(run, version);
        const got = await Promise.race([done, sleep(UPDATE_TIMEOUT_MS).then(() => null)]);
        if (got) return got;
        // late: what each worker has, asked once
        const wait = waiters.get(key);
        wait.left = workers.length; wait.n = 0; wait.min = Infinity; wait.max = -Infinity;
        for (const w of workers) w.child.send({ cmd: "stats", key });
        return (await Promise.race([done, sleep(UPDATE_TIMEOUT_MS).then(() => ({ n: 0, min: NaN, max: NaN }))]));
    }

    await sleep(1000);
    const latency = [];
    for (let k = 0; k < a.updates; k++) {
        const got = await update(crypto.randomUUID(), 1);
        latency.push({ first_ms: got.min / 1e6, last_ms: got.max / 1e6, receipts: got.n });
        await sleep(500);
    }

    // sustained: WINDOW updates in flight over SECONDS, distinct runs in turn
    const runs = Array.from({ length: 4 * a.window }, () => ({ run: crypto.randomUUID(), version: 0 }));
    let turn = 0, deliveries = 0, published = 0, incomplete = 0;
    const cpu0 = cpuTicks(a);
    const t0 = performance.now();
    const until = t0 + a.seconds * 1000;
    await Promise.all(Array.from({ length: a.window }, async () => {
        while (performance.now() < until) {
            const r = runs[turn++ % runs.length];
            r.version++;
            published++;
            const got = await update(r.run, r.version);
            deliveries += got.n;
            if (got.n < ready) incomplete++;
        }
    }));
    const elapsed = (performance.now() - t0) / 1000;
    const cpu1 = cpuTicks(a);
    const msPerTick = 1000 / a["clk-tck"];
    const serversMs = (cpu1.servers - cpu0.servers) * msPerTick;
    const postgresMs = (cpu1.postgres - cpu0.postgres) * msPerTick;

    for (const w of workers) w.child.send({ cmd: "close" });
    await endPublisher();
    const median = (xs) => { const s = [...xs].sort((x, y) => x - y); return s[Math.floor((s.length - 1) / 2)]; };
    console.log(JSON.stringify({
        system: a.system, subs: ready,
        latency,
        first_ms: median(latency.map((l) => l.first_ms)),
        last_ms: median(latency.map((l) => l.last_ms)),
        latency_complete: latency.filter((l) => l.receipts === ready).length,
        sustained: {
            seconds: elapsed, published, incomplete, deliveries,
            per_s: deliveries / elapsed,
            servers_cpu_ms: serversMs, postgres_cpu_ms: postgresMs,
            cpu_us_per_delivery: (serversMs + postgresMs) * 1000 / deliveries,
        },
        lost_connections: lost,
    }));
    process.exit(0);
}

if (process.env.BOTHY_PEER_WORKER) worker();
else coordinator().catch((err) => {
    console.error("client.js: " + err.message);
    process.exit(1);
});
