"""Fixtures of the gateway tests: one temporary PostgreSQL (multi mode, via
test/lib/pg-temp), one shared key store, real bothy-gateway processes from
the binary in BOTHY_GATEWAY, and real WebSocket clients (python3-websockets).

Every wait is bounded polling; a failed run leaves the gateways' logs and the
server's log under BOTHY_TEST_WORK.
"""
import asyncio
import base64
import ctypes
import ctypes.util
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

import pytest
import websockets

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BOTHY_ROOT", os.path.abspath(os.path.join(HERE, "..", "..")))
GATEWAY = os.environ.get("BOTHY_GATEWAY", os.path.join(ROOT, "src", "gateway", "bothy-gateway"))
WORK = os.environ.get("BOTHY_TEST_WORK") or tempfile.mkdtemp(prefix="bothy-gateway-")

# The process suite's Instance and poll_until, loaded under another name
# (both files are called conftest.py).
_spec = importlib.util.spec_from_file_location(
    "bothy_process_conftest", os.path.join(ROOT, "test", "process", "conftest.py"))
_process = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_process)
Instance = _process.Instance
poll_until = _process.poll_until
seal = _process.seal

READY_AND_LISTENING = "ready\nstarted: yes\nstopping: no\ndatabase: up\nlistener: up\n"
new_id = _process.new_id

# Short enough for the tests: a key rotation is seen within 1 s, a lost
# connection is retried every 200 ms.
PG_CONF = [
    "bothy.cluster_mode = 'multi'",
    "bothy.signing_key_cache_ttl = '1s'",
    "bothy.listen_reconnect_backoff_cap = '200ms'",
    "bothy.consumer_lease = '3s'",
]

# The options every test gateway runs with (docs/gateway.md).  The terminal
# device's window (--stream-window) is as small as the queue, not its
# production 512 KiB: the tests' few kilobytes then fill it, so every
# terminal test runs through holds and acknowledgements (relay/ack.c).
GATEWAY_OPTS = ["--db-timeout", "1000", "--identify-timeout", "1500", "--max-message", "2048",
                "--send-queue", "4096", "--stream-window", "4096", "--send-timeout", "1000",
                "--stop-timeout", "5000", "--start-timeout", "10000"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(coro):
    return asyncio.run(coro)


class KeyStore:
    def __init__(self):
        self.dir = os.path.join(tempfile.mkdtemp(prefix="keys-", dir=WORK), "keys")
        self.rotate()

    def cli(self, *args, check=True):
        return subprocess.run([GATEWAY, *args, "--keys", self.dir], check=check,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def rotate(self):
        return self.cli("keys", "rotate").stdout.strip()

    def person(self, person=None, device=None):
        return self.cli("token", "person", "--person", person or new_id(),
                        "--device", device or new_id()).stdout.strip()

    def agent(self, agent=None):
        return self.cli("token", "agent", "--agent", agent or new_id()).stdout.strip()

    def newest_key(self):
        names = sorted(n[:-4] for n in os.listdir(self.dir) if n.endswith(".key"))
        return names[-1]

    def forge(self, payload):
        """A token signed by the newest key of the store, with any payload
        (the test's own signer: the CLI refuses to mint an expired token).
        Ed25519 from the gateway's own libsodium, through ctypes."""
        kid = self.newest_key()
        with open(os.path.join(self.dir, kid + ".key")) as f:
            seed = b64d(f.read().split()[1])
        signed = "bothy1.%s.%s" % (kid, b64e(json.dumps(payload, separators=(",", ":")).encode()))
        return signed + "." + b64e(ed25519_sign(seed, signed.encode()))


def ed25519_sign(seed, message):
    sodium = ctypes.CDLL(ctypes.util.find_library("sodium") or "libsodium.so.23")
    assert sodium.sodium_init() >= 0
    pk, sk = ctypes.create_string_buffer(32), ctypes.create_string_buffer(64)
    assert sodium.crypto_sign_seed_keypair(pk, sk, seed) == 0
    sig = ctypes.create_string_buffer(64)
    assert sodium.crypto_sign_detached(sig, None, message, ctypes.c_ulonglong(len(message)), sk) == 0
    return sig.raw


def b64e(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def b64d(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# What a node's log must never carry (D-M2-47-11; docs/gateway.md, "Logs"): a
# person, device, session, host or node ID (any UUID), an address, or a
# token or signature (a long base64url run).
# IPv6 in either form: compressed ("::1", "fe80::1", "::ffff:10.0.0.1") or
# all eight groups; a timestamp's "02:36:44" is neither, nor is a SQL
# cast such as "::bigint" in a relayed error (the group must end there).
LOG_LEAKS = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
                       r"|\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}\b"
                       r"|[0-9a-fA-F]{0,4}::[0-9a-fA-F]{1,4}\b|\b[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4}){7}\b"
                       r"|[A-Za-z0-9_-]{40,}")


def assert_logs_clean(nodes):
    """No record in these nodes' logs holds an ID, address or token; the
    failure names every node that logged one, not only the first."""
    leaks = {}
    for node in nodes:
        if os.path.exists(node.logpath):
            found = [line for line in node.log.splitlines() if LOG_LEAKS.search(line)]
            if found:
                leaks[os.path.basename(node.logpath)] = found[:3]
    assert not leaks, "logged an ID, address or token: %s" % leaks


class Gateway:
    """One bothy-gateway serve process."""

    made = []       # every node of this pytest process, for the check of their logs

    def __init__(self, name, pg, keys, extra=()):
        Gateway.made.append(self)
        self.name = name
        self.port = free_port()
        self.url = "ws://127.0.0.1:%d/gateway" % self.port
        self.logpath = os.path.join(WORK, "%s-%d.log" % (name, self.port))
        self.conninfo = "host=%s port=%s dbname=bothy_test user=postgres" % (
            pg.dir, os.environ.get("BOTHY_TEST_PGPORT", "54329"))
        self.args = [GATEWAY, "serve", "--listen", "127.0.0.1:%d" % self.port,
                     "--database", self.conninfo, "--keys", keys.dir, *GATEWAY_OPTS, *extra]
        self.proc = None

    def start(self, wait=True):
        self.logfile = open(self.logpath, "a")
        self.proc = subprocess.Popen(self.args, stdout=self.logfile, stderr=self.logfile)
        if wait:
            # ready, and listening: /readyz does not wait for the LISTEN
            # (docs/gateway.md), but a cross-node test needs it
            poll_until(lambda: self.http("/readyz") == (200, READY_AND_LISTENING),
                       timeout=15, what=self.name + " ready and listening")
        return self

    @property
    def log(self):
        with open(self.logpath) as f:
            return f.read()

    def http(self, path):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.port, path), timeout=2) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except (urllib.error.URLError, ConnectionError, socket.timeout):
            if self.proc.poll() is not None:
                raise AssertionError("%s exited with %s" % (self.name, self.proc.returncode))
            return None, ""

    def metrics(self):
        status, text = self.http("/metrics")
        assert status == 200
        values = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                values[name] = float(value)
        return values

    def metric(self, name):
        return self.metrics().get(name, 0.0)

    def rss_kib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def stop(self, timeout=10):
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.logfile.close()


@pytest.fixture(scope="session")
def pg():
    inst = Instance("gateway-pg", PG_CONF)
    inst.start()
    yield inst
    inst.close()


@pytest.fixture(scope="session")
def keys():
    return KeyStore()


@pytest.fixture(autouse=True)
def logs_clean():
    """After every test, each node it made (a fixture's or its own, started
    or not) logged no ID, address or token (D-M2-47-11).  Autouse: set up
    first, so torn down last, once the fixtures have stopped their nodes."""
    first = len(Gateway.made)
    yield
    assert_logs_clean(Gateway.made[first:])


@pytest.fixture
def gateways(pg, keys):
    """gateways(n, extra=()) starts n nodes; all are stopped after the test."""
    started = []

    def make(n=1, extra=()):
        nodes = []
        for _ in range(n):
            node = Gateway("node%d" % len(started), pg, keys, extra)
            started.append(node)        # stopped at teardown even if a later one fails
            nodes.append(node.start())
        return nodes if n > 1 else nodes[0]
    yield make
    for node in started:
        node.stop()


@pytest.fixture
def node(gateways):
    return gateways(1)


async def identify(url, token, op="identify"):
    """Connects, sends identify (or resume) and returns (ws, ready)."""
    ws = await websockets.connect(url, max_size=None)
    await ws.send(json.dumps({"op": op, "token": token}))
    reply = json.loads(await asyncio.wait_for(ws.recv(), 5))
    return ws, reply


async def closed_with(ws, timeout=5):
    """The close code the server sent (every message before it is skipped)."""
    try:
        while True:
            await asyncio.wait_for(ws.recv(), timeout)
    except websockets.ConnectionClosed as e:
        return e.code


async def heartbeat(ws):
    """The answer to a heartbeat: heartbeat_ack, or whatever else that is not
    an event (events the node pushed meanwhile are skipped)."""
    await ws.send('{"op":"heartbeat"}')
    while True:
        reply = json.loads(await asyncio.wait_for(ws.recv(), 5))
        if reply.get("op") != "event":
            return reply


# --- the terminal (terminal/, cluster/, edge/) -------------------------------

# Short terminal settings: a control connection heartbeats every second and
# is gone after 3 s of silence, a probe waits 1 s (probation: 2 s), the log
# is polled twice a second.  The open timeout keeps the database's two rules
# (more than twice the probe timeout and the poll interval).
TERMINAL_CONF = [
    "bothy.terminal_host_heartbeat_interval = '1s'",
    "bothy.terminal_host_heartbeat_miss_limit = 3",
    "bothy.terminal_host_duplicate_probe_timeout = '1s'",
    "bothy.terminal_open_timeout = '8s'",
    "bothy.terminal_log_poll_interval = '500ms'",
]


def terminal_instance(name, mode="multi", extra=()):
    """A started instance of its own for a terminal module, in mode, with
    TERMINAL_CONF: a module overrides the pg fixture with it, as
    clients/test_single_mode.py does."""
    conf = [line for line in PG_CONF if not line.startswith("bothy.cluster_mode")]
    inst = Instance(name, conf + ["bothy.cluster_mode = '%s'" % mode] + TERMINAL_CONF + list(extra))
    inst.start()
    return inst


class TerminalWorld:
    """The application's side of the terminal (docs/sql-api.md, "The
    terminal: for applications") through the superuser connection, and
    what the tests read of the database."""

    def __init__(self, pg):
        self.pg = pg

    def register(self, owner=None, name="laptop", local_confirm=False):
        """A new host in pairing: (host, code, owner)."""
        owner = owner or new_id()
        host, code = self.pg.query(
            "SELECT host::text, pairing_code FROM bothy.terminal_host_register(%s, %s, %s)",
            owner, name, local_confirm)[0]
        return host, code, owner

    def confirm(self, host, fingerprint):
        return self.pg.query("SELECT bothy.terminal_host_confirm(%s, %s)", host, fingerprint)[0][0]

    def disable(self, *hosts):
        self.pg.query("SELECT count(bothy.terminal_host_disable(h)) FROM unnest(%s::uuid[]) h",
                      list(hosts))

    def repair(self, host):
        return self.pg.query("SELECT bothy.terminal_host_repair(%s)", host)[0][0]

    def host_state(self, host):
        return self.pg.query("SELECT state FROM bothy.terminal_host_states(ARRAY[%s::uuid])",
                             host)[0][0]

    def session(self, session):
        """(state, close_detail, grant) of a session."""
        return tuple(self.pg.query("SELECT state, close_detail, grant_id::text "
                                   "FROM bothy.terminal_sessions WHERE session = %s", session)[0])

    def log_head(self):
        return self.pg.query("SELECT bothy.terminal_log_head()")[0][0]


def terminal_rest(node, method, path, token=None, body=None, raw=None, headers=None, timeout=10.0):
    """(status, decoded JSON body or None) of a REST call on node: body is
    sent as JSON, raw as the bytes given."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (node.port, path), data=data,
                                     method=method)
    if token is not None:
        request.add_header("Authorization", "Bearer " + token)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            text = r.read().decode()
            return r.status, json.loads(text) if text else None
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        return e.code, json.loads(text) if text else None


def connected_on(node, keys, owner, host):
    """Whether node counts the host as connected (GET /v1/terminal/hosts)."""
    status, body = terminal_rest(node, "GET", "/v1/terminal/hosts", keys.person(owner))
    assert status == 200, body
    return any(h["host"] == host and h["connected"] for h in body["hosts"])


def terminal_call(*args, **kwargs):
    """terminal_rest in a thread, awaitable from a test's coroutine."""
    return asyncio.get_running_loop().run_in_executor(None, lambda: terminal_rest(*args, **kwargs))


@pytest.fixture
def tworld(pg):
    """The TerminalWorld of the module's instance (its own pg fixture)."""
    return TerminalWorld(pg)


def node_base(node):
    """The base URL of a node's WebSocket paths."""
    return "ws://127.0.0.1:%d" % node.port


async def active_host(world, node, key=None, owner=None, report=True, heartbeats=True):
    """A host registered, paired on node with key, confirmed by its owner
    (ready again with state active on the same connection), reported and
    heartbeating: (host, owner, ControlConnection)."""
    import fakehost
    key = key or fakehost.HostKey()
    host, code, owner = world.register(owner)
    conn = await fakehost.ControlConnection(node_base(node), key).connect()
    ready = await conn.pair(host, code)
    assert ready["state"] == "confirming", ready
    assert world.confirm(host, key.fingerprint) == "active"
    again = await conn.expect("ready")
    assert again == dict(ready, state="active"), (ready, again)
    conn.ready = again
    if report:
        await conn.report()
    if heartbeats:
        conn.start_heartbeats()
    return host, owner, conn
