"""The gateway and its database: the shared listener's loss and reconnect,
the signal route's counting, a PostgreSQL restart under live connections and
a database that is down."""
import asyncio
import contextlib
import json
import os
import re
import resource
import signal
import socket
import threading
import time

import websockets

from conftest import PG_CONF, READY_AND_LISTENING, Gateway, Instance, closed_with, heartbeat, identify, new_id, poll_until, run

FAILURES = "bothy_gateway_presence_write_failures_total"
FOREIGN_NODE = "01890a5d-ac96-774b-bcce-b302099a8057"


def publish_typing(pg, node_id):
    pg.query("SELECT bothy.publish('gateway.typing', jsonb_build_object("
             "'node', %s::text, 'thread', gen_random_uuid(), 'principal', gen_random_uuid()))", node_id)


def node_id_of(node, keys):
    async def go():
        ws, ready = await identify(node.url, keys.person())
        await ws.close()
        return ready["node"]
    return run(go())


def test_listener_loss_one_record_reconnect_and_signals(gateways, keys, pg):
    node = gateways(1)
    own = node_id_of(node, keys)
    typing = 'bothy_gateway_signals_received_total{kind="gateway.typing"}'
    poll_until(lambda: node.metric("bothy_gateway_listener_up") == 1, timeout=5, what="listening")
    # the identify's own gateway.device signal comes back, and is ignored
    poll_until(lambda: node.metric("bothy_gateway_signals_own_total") == 1, timeout=5,
               what="own device signal")

    killed = pg.query("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                      "WHERE application_name = 'bothy-ephemeral'")[0][0]
    assert killed >= 1
    poll_until(lambda: node.metric("bothy_gateway_listener_reconnects_total") == 1, timeout=5,
               what="listener reconnected")
    assert node.metric("bothy_gateway_listener_losses_total") == 1
    assert node.metric('bothy_gateway_route_reconciles_total{route="gateway"}') == 1
    assert node.log.count("listener connection lost") == 1
    assert node.log.count("listener connection restored") == 1
    assert node.http("/readyz")[0] == 200

    # a signal published after the reconnect is heard
    publish_typing(pg, FOREIGN_NODE)
    poll_until(lambda: node.metric(typing) == 1, timeout=5, what="signal received")
    # its own signal is ignored, and counted as such
    publish_typing(pg, own)
    poll_until(lambda: node.metric("bothy_gateway_signals_own_total") == 2, timeout=5, what="own signal")
    # a malformed payload is dropped with its reason; another producer's kind is ignored
    # (both signed with the channel key: an unsigned one never reaches the codec)
    pg.notify_signed('{"kind":"gateway.typing"}')
    pg.notify_signed('{"kind":"other.thing"}')
    poll_until(lambda: node.metric('bothy_gateway_signals_dropped_total{reason="missing_member"}') == 1,
               timeout=5, what="malformed signal dropped")
    poll_until(lambda: node.metric("bothy_gateway_signals_ignored_total") == 1, timeout=5,
               what="foreign kind ignored")
    assert node.metric(typing) == 1
    assert "signal dropped as malformed" in node.log


def test_postgres_restart_under_live_connections(gateways, keys, pg):
    a, b = gateways(2)

    async def phase():
        clients = []
        for n in (a, b):
            ws, ready = await identify(n.url, keys.person())
            assert ready["op"] == "ready"
            clients.append(ws)
        pg.stop()
        try:
            poll_until(lambda: a.http("/readyz")[0] == 503, timeout=10, what="A not ready")
            # the clients stay connected while the database is away
            for ws in clients:
                assert await heartbeat(ws) == {"op": "heartbeat_ack"}
        finally:
            pg.restart()
        for n in (a, b):
            poll_until(lambda: n.http("/readyz")[0] == 200, timeout=15, what="ready again")
            poll_until(lambda: n.metric("bothy_gateway_listener_reconnects_total") >= 1, timeout=10,
                       what="listener back")
        for ws in clients:
            assert await heartbeat(ws) == {"op": "heartbeat_ack"}
            await ws.close()
        # and the node serves new sessions
        for n in (a, b):
            ws, ready = await identify(n.url, keys.agent())
            assert ready["op"] == "ready"
            await ws.close()
    run(phase())
    for n in (a, b):
        assert n.metric('bothy_gateway_closes_total{code="1006"}') == 0
        assert n.log.count("listener connection lost") == 1
        assert n.log.count("database connection lost") == 1


def test_database_down_call_times_out_and_connection_stays(gateways, keys, pg):
    node = gateways(1, extra=["--identify-timeout", "60000"])   # --db-timeout 1000

    async def phase():
        agent, ready = await identify(node.url, keys.agent())
        assert ready["op"] == "ready"
        waiting = await websockets.connect(node.url)
        token = keys.person()
        pg.stop()
        try:
            poll_until(lambda: node.http("/readyz")[0] == 503, timeout=10, what="not ready")
            await waiting.send(json.dumps({"op": "identify", "token": token}))
            start = time.monotonic()
            error = json.loads(await asyncio.wait_for(waiting.recv(), 5))
            elapsed = time.monotonic() - start
            assert error == {"op": "error", "request": "identify", "code": "timeout"}
            assert 0.5 < elapsed < 3.0
            await agent.send('{"op":"ack","event":0}')
            error = json.loads(await asyncio.wait_for(agent.recv(), 5))
            assert error == {"op": "error", "request": "ack", "code": "timeout"}
            # both connections are still open
            assert await heartbeat(agent) == {"op": "heartbeat_ack"}
        finally:
            pg.restart()
        poll_until(lambda: node.http("/readyz")[0] == 200, timeout=15, what="ready again")
        # the connection that waited identifies now
        await waiting.send(json.dumps({"op": "identify", "token": token}))
        ready = json.loads(await asyncio.wait_for(waiting.recv(), 5))
        assert ready["op"] == "ready"
        await agent.send('{"op":"ack","event":0}')
        assert await heartbeat(agent) == {"op": "heartbeat_ack"}   # the ack needs no answer
        await waiting.close()
        await agent.close()
    run(phase())
    # the identify and the ack at least (the agent's heartbeat store and lease
    # renewal may time out too), each counted; logged at most once a second,
    # each line with the time-outs since the last (a flood is a line a second)
    timeouts = node.metric('bothy_gateway_db_calls_total{result="timeout"}')
    assert timeouts >= 2
    logged = [int(n) for n in re.findall(r'msg="database call timed out" count=(\d+)', node.log)]
    assert logged and logged[0] == 1 and sum(logged) <= timeouts
    # whether or not the lease lapsed while the database was away, no one took
    # over, so the consumer was never fenced
    assert node.metric('bothy_gateway_closes_total{code="4015"}') == 0


def test_ack_of_a_fenced_consumer_closes_4015(gateways, keys, pg):
    """The ack's own answer fences: the fan-out worker is paused from the
    takeover until the ack has been answered, so the gateway.consumer signal
    (the other route to 4015) cannot reach the first node before its ack."""
    a, b = gateways(2)
    agent = new_id()
    consumer_signals = 'bothy_gateway_signals_received_total{kind="gateway.consumer"}'
    fanout = pg.wait_fanout()
    b_before = b.metric(consumer_signals)

    async def go():
        first, ready = await identify(a.url, keys.agent(agent))
        assert ready["op"] == "ready"
        # the first take's own signal is sent (node b heard it, or more: a
        # lapsed hold of an earlier test is released the same way) and the worker
        # is back in its wait: stopped there, it holds no lock a commit needs
        poll_until(lambda: b.metric(consumer_signals) >= b_before + 1, timeout=5,
                   what="the first take's signal on node b")
        poll_until(lambda: pg.query("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s",
                                    fanout)[0][0] == "Extension",
                   timeout=5, what="the fan-out worker waiting")
        a_before = a.metric(consumer_signals)
        os.kill(fanout, signal.SIGSTOP)
        try:
            second, ready = await identify(b.url, keys.agent(agent))   # takes the stream over
            assert ready["op"] == "ready"
            await first.send('{"op":"ack","event":0}')
            code = await closed_with(first)
            signals_meanwhile = a.metric(consumer_signals) - a_before
        finally:
            os.kill(fanout, signal.SIGCONT)
        await second.send('{"op":"ack","event":0}')
        still = await heartbeat(second)
        await second.close()
        return code, signals_meanwhile, still
    code, signals_meanwhile, still = run(go())
    assert code == 4015
    assert signals_meanwhile == 0              # the ack fenced it, not the signal
    assert still == {"op": "heartbeat_ack"}


class TcpToUnix:
    """A TCP port on 127.0.0.1 in front of the instance's Unix socket: the
    node connects over TCP, as it does to a database on another machine
    (a container's, compose/), where connect() is still in progress when
    libpq returns and asks to write once more.  slow: what the node sends
    is read 512 bytes a millisecond through a receive buffer of about 2 KB
    and 88-byte segments, so the node's send buffer holds about 30 KB and
    a larger query leaves the node's writable callback with the buffer
    full again, more than once."""

    def __init__(self, pg, slow=False):
        self.path = os.path.join(pg.dir, ".s.PGSQL.%s" % os.environ.get("BOTHY_TEST_PGPORT", "54329"))
        self.slow = slow
        self.sockets = []
        self.listener = socket.socket()
        if slow:
            self.listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 88)
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                node, _ = self.listener.accept()
            except OSError:
                return              # closed
            db = socket.socket(socket.AF_UNIX)
            db.connect(self.path)
            self.sockets += [node, db]
            threading.Thread(target=self.copy, args=(node, db, self.slow), daemon=True).start()
            threading.Thread(target=self.copy, args=(db, node, False), daemon=True).start()

    @staticmethod
    def copy(src, dst, slow):
        try:
            while data := src.recv(512 if slow else 65536):
                dst.sendall(data)
                if slow:
                    time.sleep(0.001)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass                    # closed by the other direction or close()

    def close(self):
        self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        for s in self.sockets:
            s.close()


def test_a_database_reached_over_tcp(pg, keys):
    """Every connection the node makes (the pool, the listener) reaches a
    database over TCP.  It waited for its timeout before: libpq's second
    request to write, made inside the writable callback, was cleared by
    libwebsockets after it (core/pgconn.c), so only Unix sockets worked."""
    proxy = TcpToUnix(pg)
    node = Gateway("tcp-node", pg, keys)
    node.conninfo = "host=127.0.0.1 port=%d dbname=bothy_test user=postgres" % proxy.port
    node.args[node.args.index("--database") + 1] = node.conninfo
    try:
        node.start()
        assert node.http("/readyz") == (200, READY_AND_LISTENING)
        assert "database connection open" in node.log
        assert "database call timed out" not in node.log
    finally:
        node.stop()
        proxy.close()


# The presence writer's flush interval on the next test's instance: long
# enough that the identifies land in one or two flushes, each large
PRESENCE_INTERVAL = 5.0


def test_a_large_query_through_a_slow_tcp_path(keys):
    """A query larger than the node's send buffer goes out over several
    writable callbacks: PQflush returning 1 inside one asks for the next,
    and that request was cleared by libwebsockets after the callback, as
    the connect step's was (core/pgconn.c).  With 1,200 persons the
    identifies' bind batches (about 40 KB each) and the presence flush
    (about 145 KB of uuid[] literals) need several: they waited for the
    database call's timeout instead (identifies refused, rows not written;
    fails without the change)."""
    count = 1200
    pg = Instance("slow-tcp-pg", PG_CONF + ["bothy.presence_flush_interval = '5s'",
                                            "bothy.presence_ttl = '30s'"])
    tokens = [keys.person() for _ in range(count)]

    async def go():
        replies = await asyncio.gather(*(identify(node.url, token) for token in tokens))
        refused = [ready for _, ready in replies if ready["op"] != "ready"]
        assert not refused, "%d of %d identifies refused, e.g. %s" % (len(refused), count, refused[0])
        node_id = replies[0][1]["node"]
        rows = "SELECT count(*) FROM bothy.gateway_presence WHERE node = %s"
        await asyncio.to_thread(poll_until, lambda: pg.query(rows, node_id)[0][0] == count,
                                timeout=3 * PRESENCE_INTERVAL, what="every session's presence row")
        for ws, _ in replies:
            await ws.close()
    # each part is undone even when a later one fails to start
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.ExitStack() as undo:
        undo.callback(resource.setrlimit, resource.RLIMIT_NOFILE, (soft, hard))
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))   # the node inherits it
        undo.callback(pg.close)
        pg.start()
        proxy = TcpToUnix(pg, slow=True)
        undo.callback(proxy.close)
        node = Gateway("slow-tcp-node", pg, keys)
        node.conninfo = "host=127.0.0.1 port=%d dbname=bothy_test user=postgres" % proxy.port
        node.args[node.args.index("--database") + 1] = node.conninfo
        undo.callback(node.stop)
        node.start()
        run(go())
        assert node.metric(FAILURES) == 0
        assert "database call timed out" not in node.log
