// bench/peer_socketio_node/server.js: one node of the peer that
// bench/peer_socketio measures bothy against: a Socket.IO 4.8 server with
// @socket.io/postgres-adapter 0.5 on a PostgreSQL shared by every node,
// as that adapter's documentation sets it up (a pg.Pool, the attachments
// table for large payloads).
//
// Every socket joins the room of the one thread on connection: the room is
// the peer's audience, as the thread's members are bothy's.
// POST /publish?run=R&version=V on one node emits run.updated, a document
// of the same members as bothy's run document (run, agent, thread, sent_ns,
// version), to the room on every node through the adapter; sent_ns is the
// wall clock in ns at the emit.
//
//   node server.js PORT PGHOST PGPORT DATABASE THREAD AGENT
// Prints "listening PORT" once it accepts connections.
"use strict";
const http = require("http");
const { Server } = require("socket.io");
const { createAdapter } = require("@socket.io/postgres-adapter");
const { Pool } = require("pg");

const [port, pgHost, pgPort, database, thread, agent] = process.argv.slice(2);
if (!agent) {
    console.error("usage: server.js PORT PGHOST PGPORT DATABASE THREAD AGENT");
    process.exit(2);
}

// the wall clock in ns, as the client reads it (same function, same host)
function wallNs() {
    return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
}

const pool = new Pool({ host: pgHost, port: Number(pgPort), database, user: "postgres", max: 4 });
pool.on("error", (err) => console.error("pool error:", err.message));

const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://localhost");
    if (req.method === "POST" && url.pathname === "/publish") {
        const run = url.searchParams.get("run");
        const version = Number(url.searchParams.get("version"));
        // built by hand in bothy's member order, sent_ns as a JSON integer
        const doc = `{"run":"${run}","agent":"${agent}","thread":"${thread}","sent_ns":${wallNs()},"version":${version}}`;
        io.to(thread).emit("run.updated", JSON.parse(doc));
        res.writeHead(204).end();
        return;
    }
    if (url.pathname === "/readyz") {
        res.writeHead(200).end("ok\n");
        return;
    }
    // anything else that is not Socket.IO's
    if (!url.pathname.startsWith("/socket.io/")) res.writeHead(404).end();
});

const io = new Server(server, {
    transports: ["websocket"],
    serveClient: false,
    adapter: createAdapter(pool),
});
io.on("connection", (socket) => socket.join(thread));

server.listen(Number(port), "127.0.0.1", () => console.log("listening " + port));
function stop() {
    io.close();
    pool.end().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 3000).unref();
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
