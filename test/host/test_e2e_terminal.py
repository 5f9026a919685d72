"""End to end: the real bothy-host against two real gateway nodes behind the
real edge (the shipped deploy/nginx/bothy-edge.conf), one PostgreSQL in
multi mode: pair and confirm, then echo and stty size round trips, a
resize, a shell exit (closed_by_host), the host killed (presence ends within
its window, a new session gets 409) and started again (its detached session
comes back through session.open), a device dropped in the middle of a
10 MB output that attaches again and receives every byte after its offset
exactly once (issue 16), and the relay node of a session killed: the host's
data connection comes back through the edge on the other node, which
detaches the session, and the device attaches there and resumes exactly.

The module first checks that /terminal/host answers a challenge on a node
and through the edge, and fails (never skips) when it does not.
"""
import asyncio
import json
import os
import signal
import tempfile
import time

import pytest
import websockets

from conftest import SHELL, WORK, Host, gateway_module, poll_until
from fakeserver import Client, Device, rest_json

gw = gateway_module("conftest")
edge_mod = gateway_module("edge")
streams = gateway_module("terminal_streams")

# Short windows: a dead control connection stops counting within 3 s, the
# duplicate probation (twice the probe timeout) after a restart is 1 s.
PG_CONF = gw.PG_CONF + [
    "bothy.terminal_host_heartbeat_interval = '1s'",
    "bothy.terminal_host_heartbeat_miss_limit = 3",
    "bothy.terminal_host_duplicate_probe_timeout = '500ms'",
]

# The nodes' own message and queue bounds, not the gateway suite's small
# ones: bothy-host's frames are up to 16384 bytes, which a node passes only
# with --max-message at its default (docs/gateway.md, docs/host.md).
NODE_OPTS = ["--max-message", "16384", "--send-queue", "65536"]

async def _answers_challenge(url):
    try:
        async with websockets.connect(url, open_timeout=3, close_timeout=1) as ws:
            message = json.loads(await asyncio.wait_for(ws.recv(), 3))
            return message.get("op") == "challenge"
    except Exception:
        return False


def answers_challenge(url):
    return asyncio.run(_answers_challenge(url))


class Cluster:
    def __init__(self):
        self.pg = gw.Instance("host-e2e-pg", PG_CONF)
        self.pg.start()
        self.keys = gw.KeyStore()
        self.nodes = [gw.Gateway("node%d" % i, self.pg, self.keys, NODE_OPTS).start()
                      for i in range(2)]
        self.edge = edge_mod.Edge(self.nodes).start()
        self.url = self.edge.http_url
        self.ws = "ws://127.0.0.1:%d" % self.edge.port

    def stop(self):
        self.edge.stop()
        for node in self.nodes:
            node.stop()
        self.pg.close()
        gw.assert_logs_clean(self.nodes)

    def q(self, sql, *args):
        return self.pg.query(sql, *args)

    def rest(self, method, path, token, body=None):
        return rest_json(self.url, method, path, token, body)


@pytest.fixture(scope="module")
def cluster():
    c = Cluster()
    try:
        # the route and the edge are built: a node or an edge that stops
        # answering the challenge is a failure of these tests, not a skip
        assert answers_challenge(c.ws.replace(str(c.edge.port), str(c.nodes[0].port)) +
                                 "/terminal/host"), "a node does not serve /terminal/host"
        assert answers_challenge(c.ws + "/terminal/host"), \
            "the shipped edge does not route /terminal/host to the nodes"
        yield c
    finally:
        c.stop()


class Owner:
    """A person with a device token, and their host: registered, paired by
    bothy-host pair through the edge, confirmed with the fingerprint it
    printed."""

    def __init__(self, cluster):
        self.c = cluster
        self.person, self.device_id = gw.new_id(), gw.new_id()
        self.token = cluster.keys.person(self.person, self.device_id)
        (self.host, code), = cluster.q(
            "SELECT host::text, pairing_code FROM bothy.terminal_host_register(%s, 'e2e')",
            self.person)
        self.key = os.path.join(tempfile.mkdtemp(prefix="key-", dir=WORK), "host.key")
        h = Host("pair", "--server", cluster.url, "--host", self.host, "--code", code,
                 "--key", self.key).start()
        fingerprint = h.proc.stdout.read().decode().strip()
        assert h.wait(30) == 0, h.log
        assert cluster.q("SELECT bothy.terminal_host_confirm(%s, %s)", self.host,
                         fingerprint)[0][0] == "active"
        self.proc = None

    def run(self, *extra):
        self.proc = Host("run", "--server", self.c.url, "--key", self.key, "--shell", SHELL,
                         *extra).start()
        poll_until(self.connected, timeout=15, what="the host connected")
        return self.proc

    def connected(self):
        status, body = self.c.rest("GET", "/v1/terminal/hosts", self.token)
        assert status == 200, (status, body)
        return [h["connected"] for h in body["hosts"] if h["host"] == self.host] == [True]

    def open(self):
        status, body = self.c.rest("POST", "/v1/terminal/sessions", self.token, {"host": self.host})
        assert status == 201, (status, body)
        return body

    def attach(self, session):
        status, body = self.c.rest("POST", "/v1/terminal/sessions/%s/attach" % session, self.token)
        assert status == 201, (status, body)
        return body

    def device(self, opened, stream_id=0, offset=0):
        client = Client.open(self.c.ws + opened["stream"], opened["token"]).paired()
        return Device(client, stream_id, offset, announce=False)

    def session_row(self, session):
        return self.c.q("SELECT state, close_detail FROM bothy.terminal_sessions "
                        "WHERE session = %s", session)[0]

    def stop(self):
        if self.proc is not None:
            self.proc.stop()


@pytest.fixture
def owner(cluster):
    o = Owner(cluster)
    yield o
    o.stop()


def test_echo_resize_and_the_shells_exit(owner):
    owner.run()
    opened = owner.open()
    d = owner.device(opened)
    d.send(b"echo bothy-$((6*7))\n")
    d.read_until(b"bothy-42")
    d.resize(31, 97)
    d.send(b"stty size\n")
    d.read_until(b"31 97\r\n")
    assert owner.session_row(opened["session"])[0] == "active"
    d.send(b"exit\n")
    assert d.stream.wait_closed(10) == 1000
    poll_until(lambda: owner.session_row(opened["session"]) == ("closed", "closed_by_host"),
               timeout=10, what="the session closed by the host")


def hosts_waiting(cluster):
    """Host data connections waiting for a device, on all the nodes."""
    return sum(node.metric('bothy_terminal_relay_streams{state="waiting",side="host"}')
               for node in cluster.nodes)


def test_the_host_killed_and_started_again(owner):
    host = owner.run()
    opened = owner.open()
    d = owner.device(opened)
    d.send(b"echo o''ne\n")
    d.read_until(b"one\r\n")
    d.stream.close(1000)
    poll_until(lambda: owner.session_row(opened["session"])[0] == "detached", timeout=10,
               what="the session detached")
    host.proc.send_signal(signal.SIGKILL)
    host.proc.wait()
    # presence ends within heartbeat interval x miss limit (3 s here), on every node
    start = time.monotonic()
    poll_until(lambda: not owner.connected(), timeout=10, what="the host no longer connected")
    assert time.monotonic() - start < 6
    status, body = owner.c.rest("POST", "/v1/terminal/sessions", owner.token, {"host": owner.host})
    assert (status, body) == (409, {"error": "host_unavailable"})
    # the killed host's data connection went with it
    poll_until(lambda: hosts_waiting(owner.c) == 0, timeout=10, what="no host side waiting")

    # started again: it reconnects and the node sends session.open for the
    # detached session at its login (D-M2-47-12), before any attach: its data
    # connection for the session waits on the hash node; the shell died with
    # the old process, so the device that attaches sees a new stream (a new
    # shell) that answers
    owner.run()
    poll_until(lambda: hosts_waiting(owner.c) == 1, timeout=10,
               what="the data connection of the session.open at the login")
    assert owner.session_row(opened["session"])[0] == "detached"
    d2 = owner.device(owner.attach(opened["session"]), d.stream_id, d.offset)
    assert d2.stream_id != d.stream_id and d2.offset == 0
    d2.send(b"echo t''wo\n")
    d2.read_until(b"two\r\n")


def test_10_mb_with_the_device_dropped_in_the_middle(owner):
    owner.run("--ring-size", str(16 * 1024 * 1024))
    opened = owner.open()
    d = owner.device(opened)
    lines = 1111111
    d.send(b"seq -w 1 %d\n" % lines)
    while d.offset < 3000000:
        d.read_frame(timeout=10)
    shown = d.offset
    d.stream.drop()                     # the device's network is gone
    poll_until(lambda: owner.session_row(opened["session"])[0] == "detached", timeout=15,
               what="the session detached")
    d2 = owner.device(owner.attach(opened["session"]), d.stream_id, shown)
    assert (d2.stream_id, d2.offset, d2.skipped) == (d.stream_id, shown, 0)
    d2.read_until(b"%07d\r\n" % lines, timeout=120)
    whole = bytes(d.data[:shown]) + bytes(d2.data)
    start = whole.index(b"0000001\r\n")
    expected = b"".join(b"%07d\r\n" % i for i in range(1, lines + 1))
    assert whole[start:start + len(expected)] == expected


def test_the_relay_node_killed_and_the_session_coming_back(owner):
    """terminal.md, "How a pairing ends": a dead node writes no end, so the
    session stays active until bothy-host connects its data connection again
    (the same identify, host.md) and the edge sends it to the node its ring
    gives now, which detaches the session: the device attaches there."""
    owner.run()
    opened = owner.open()
    d = owner.device(opened)
    d.send(b"X=ke\"\"pt\n")
    d.send(b"echo o''ne $X\n")
    d.read_until(b"one kept\r\n")
    relay = poll_until(lambda: streams.paired_on(owner.c.nodes), what="the pairing's node")
    relay.proc.send_signal(signal.SIGKILL)
    relay.proc.wait()
    try:
        d.stream.wait_closed(10)
        poll_until(lambda: owner.session_row(opened["session"])[0] == "detached", timeout=20,
                   what="the session detached by the host's data connection on the other node")
        d2 = owner.device(owner.attach(opened["session"]), d.stream_id, d.offset)
        assert (d2.stream_id, d2.offset, d2.skipped) == (d.stream_id, d.offset, 0)
        d2.send(b"echo t''wo $X\n")
        d2.read_until(b"two kept\r\n")
        assert "data connection lost" in owner.proc.log
        other, = [n for n in owner.c.nodes if n is not relay]
        assert streams.paired_on([other]) is other
    finally:
        relay.logfile.close()
        relay.start()
