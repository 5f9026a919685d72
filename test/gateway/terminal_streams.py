"""Helpers of the terminal relay's tests (terminal/, cluster/, edge/): the
database half driven as the application and the gateways would (hosts
registered, paired and confirmed, sessions opened and attached, through
the bothy.terminal_* functions of docs/terminal.md), device tokens minted
exactly as docs/tokens.md says, the host's data identify signed with the
host's own Ed25519 key as docs/protocol.md says, and both stream sides as real
WebSocket clients.

Each test module runs on a PostgreSQL instance of its own (fixture `tpg`)
with short terminal settings, so that a lone side's 4102 comes within
seconds, and starts its gateways on it (fixture `tnodes`); the shared
instance of conftest.py keeps the defaults other modules rely on.
"""
import asyncio
import base64
import ctypes
import ctypes.util
import hashlib
import json
import os
import time

import psycopg2
import pytest
import websockets

from conftest import PG_CONF, Gateway, Instance, b64e, ed25519_sign, new_id, poll_until

# terminal.open_timeout of these instances (ms); the two rules across the
# settings need the probe timeout and the poll interval under half of it.
OPEN_TIMEOUT_MS = 3000
TERMINAL_CONF = PG_CONF + [
    "bothy.terminal_open_timeout = '%dms'" % OPEN_TIMEOUT_MS,
    "bothy.terminal_host_duplicate_probe_timeout = '500ms'",
    "bothy.terminal_log_poll_interval = '500ms'",
]
OPEN_S = OPEN_TIMEOUT_MS / 1000.0
STREAM = "/terminal/stream/"
SUBPROTOCOL = "bothy-terminal-stream"    # read in 4 KiB pieces (protocol.md)


# --- the database half ----------------------------------------------------------

class HostKey:
    """A host service's Ed25519 key: its 32-byte seed and public key."""

    def __init__(self):
        self.seed = os.urandom(32)
        sodium = ctypes.CDLL(ctypes.util.find_library("sodium") or "libsodium.so.23")
        assert sodium.sodium_init() >= 0
        pk, sk = ctypes.create_string_buffer(32), ctypes.create_string_buffer(64)
        assert sodium.crypto_sign_seed_keypair(pk, sk, self.seed) == 0
        self.public = pk.raw

    @property
    def fingerprint(self):
        """docs/terminal.md, "Hosts": SHA256: and the standard base64, unpadded, of SHA-256 of the raw key."""
        return "SHA256:" + base64.b64encode(hashlib.sha256(self.public).digest()).decode().rstrip("=")

    def data_sig(self, session, grant):
        """The data connection's identify signature (docs/protocol.md, "Identify")."""
        return b64e(ed25519_sign(self.seed, ("bothy-host-data-v1\n%s\n%s" % (session, grant)).encode()))


class Terminal:
    """The terminal's rows, as the application (hosts) and a gateway
    (sessions) would write them, on one instance."""

    def __init__(self, pg, keys):
        self.pg = pg
        self.keys = keys
        self.host_keys = {}     # host: its HostKey

    def q(self, sql, *args):
        return self.pg.query(sql, *args)

    def host(self, owner=None, local_confirm=False):
        """A registered, paired and confirmed host: (host, owner, key)."""
        owner = owner or new_id()
        key = HostKey()
        host, code = self.q("SELECT * FROM bothy.terminal_host_register(%s, 'desk', %s)",
                            owner, local_confirm)[0]
        assert self.q("SELECT bothy.terminal_host_pair(%s, %s, %s)", host, code,
                      psycopg2.Binary(key.public)) == [(True,)]
        assert self.q("SELECT bothy.terminal_host_confirm(%s, %s)", host, key.fingerprint) == [("active",)]
        self.host_keys[str(host)] = key
        return str(host), owner, key

    def open(self, host, person, device=None):
        """bothy.terminal_session_open as the REST node would: a Session."""
        device = device or new_id()
        outcome, session, grant, expires = self.q(
            "SELECT outcome, session::text, grant_id::text, extract(epoch FROM grant_expires_at)::bigint "
            "FROM bothy.terminal_session_open(%s, %s, %s)", person, device, host)[0]
        assert outcome == "opened", outcome
        return Session(self, host, person, device, session, grant, expires, self.host_keys.get(host))

    def attach(self, session, device=None):
        """bothy.terminal_session_attach: the Session of the fresh grant."""
        device = device or new_id()
        outcome, host, grant, expires = self.q(
            "SELECT outcome, host::text, grant_id::text, extract(epoch FROM grant_expires_at)::bigint "
            "FROM bothy.terminal_session_attach(%s, %s, %s)", session.person, device, session.id)[0]
        assert outcome == "attached", outcome
        return Session(self, host, session.person, device, session.id, grant, expires, session.key)

    def state(self, session_id):
        """(state, close_detail) of a session, read as the superuser."""
        rows = self.q("SELECT state, close_detail FROM bothy.terminal_sessions WHERE session = %s",
                      session_id)
        return tuple(rows[0]) if rows else None

    def log(self, session_id):
        """The transitions of a session's log rows, in order."""
        return [r[0] for r in self.q("SELECT transition FROM bothy.terminal_log "
                                     "WHERE session = %s ORDER BY seq", session_id)]


class Session:
    """One grant of a session: what the REST answer and session.open carry."""

    def __init__(self, terminal, host, person, device, session, grant, expires, key=None):
        self.t = terminal
        self.host, self.person, self.device = host, person, device
        self.id, self.grant, self.expires = session, grant, expires
        self.key = key

    def token(self, **change):
        """The terminal session token of this grant (docs/tokens.md), signed
        by the key store like a node's bothy_token_mint_terminal."""
        payload = {"kind": "terminal", "session": self.id, "grant": self.grant,
                   "person": self.person, "device": self.device, "exp": self.expires}
        payload.update(change)
        return self.t.keys.forge(payload)

    def device_identify(self, **change):
        return {"op": "identify", "side": "device", "token": self.token(**change)}

    def host_identify(self, key=None, **change):
        msg = {"op": "identify", "side": "host", "host": self.host, "session": self.id,
               "grant": self.grant, "sig": (key or self.key).data_sig(self.id, self.grant)}
        msg.update(change)
        return msg

    def started(self):
        """The host's session.started committed, as its control node does:
        the session is active, and no open_timeout ends it (the nodes' log
        tail tells their relay)."""
        assert self.t.q("SELECT bothy.terminal_session_started(%s, %s)", self.id, self.grant) == [(True,)]


# --- stream clients --------------------------------------------------------------

class Side:
    """One stream connection (a device or a host data connection)."""

    def __init__(self, ws):
        self.ws = ws

    @classmethod
    async def open(cls, base, session_id, identify=None, subprotocol=True, **kw):
        """Connects (naming the stream's subprotocol unless told not to) and
        sends identify."""
        if subprotocol:
            kw["subprotocols"] = [SUBPROTOCOL]
        ws = await websockets.connect(base + STREAM + session_id, max_size=None, **kw)
        side = cls(ws)
        if identify is not None:
            await side.send_json(identify)
        return side

    async def send_json(self, msg):
        await self.ws.send(json.dumps(msg))

    async def op(self, timeout=5.0):
        """The next text message's op."""
        msg = await asyncio.wait_for(self.ws.recv(), timeout)
        assert isinstance(msg, str), msg
        return json.loads(msg)["op"]

    async def bytes(self, n, timeout=10.0):
        """Exactly n bytes of binary messages."""
        got = b""
        deadline = time.monotonic() + timeout
        while len(got) < n:
            msg = await asyncio.wait_for(self.ws.recv(), deadline - time.monotonic())
            assert isinstance(msg, bytes), msg
            got += msg
        return got

    async def closed(self, timeout=5.0):
        """The close code (binary and text messages before it are skipped)."""
        try:
            while True:
                await asyncio.wait_for(self.ws.recv(), timeout)
        except websockets.ConnectionClosed as e:
            return e.code

    async def close(self, code=1000):
        """1000 from a host's side ends its session, paired or not (protocol.md)."""
        await self.ws.close(code=code)


async def pair(base_device, base_host, session, host_first=False):
    """Both sides of a session: (device, host), each told paired."""
    if host_first:
        host = await Side.open(base_host, session.id, session.host_identify())
        assert await host.op() == "waiting"
        device = await Side.open(base_device, session.id, session.device_identify())
    else:
        device = await Side.open(base_device, session.id, session.device_identify())
        assert await device.op() == "waiting"
        host = await Side.open(base_host, session.id, session.host_identify())
    assert await device.op() == "paired"
    assert await host.op() == "paired"
    return device, host


def ws_base(node):
    return "ws://127.0.0.1:%d" % node.port


def one_session(tnodes, terminal):
    """One node and one session opened on a new host: (node, its ws base, session)."""
    node, = tnodes(1)
    host, owner, _ = terminal.host()
    return node, ws_base(node), terminal.open(host, owner)


# --- fixtures ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def tpg():
    inst = Instance("terminal-pg", TERMINAL_CONF)
    inst.start()
    yield inst
    inst.close()


@pytest.fixture(scope="module")
def tpg_single():
    """The same settings in single mode (no signal is staged by a node)."""
    inst = Instance("terminal-single", [l for l in TERMINAL_CONF if "cluster_mode" not in l] +
                    ["bothy.cluster_mode = 'single'"])
    inst.start()
    yield inst
    inst.close()


@pytest.fixture
def tnodes(tpg, keys):
    """tnodes(n, extra=()) starts n gateways on the module's instance; all
    are stopped after the test."""
    started = []

    def make(n=1, extra=()):
        nodes = []
        for _ in range(n):
            node = Gateway("tnode%d" % len(started), tpg, keys, extra)
            started.append(node)
            nodes.append(node.start())
        return nodes
    yield make
    for node in started:
        node.stop()


@pytest.fixture
def terminal(tpg, keys):
    return Terminal(tpg, keys)


def paired_on(nodes):
    """The node whose /status.json shows a pairing, or None."""
    for node in nodes:
        status, body = node.http("/status.json")
        if status == 200 and json.loads(body)["terminal_relay"]["paired"] > 0:
            return node
    return None


def wait_state(terminal, session_id, want, timeout=10.0):
    poll_until(lambda: terminal.state(session_id) == want, timeout=timeout,
               what="session %s" % (want,))


def run(coro):
    return asyncio.run(coro)
