"""Fixtures of the process tests: real PostgreSQL instances of their own.

Each instance is made by test/lib/pg-temp (the same script the pgTAP suite
uses) in a directory under BOTHY_TEST_WORK, so a failed run leaves its
server.log behind to read.
"""
import collections
import hashlib
import hmac
import os
import select
import subprocess
import tempfile
import time
import uuid

import psycopg2
import psycopg2.extensions
import pytest

ROOT = os.environ.get("BOTHY_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
PG_TEMP = os.path.join(ROOT, "test", "lib", "pg-temp")
WORK = os.environ.get("BOTHY_TEST_WORK") or tempfile.mkdtemp(prefix="bothy-process-")

NODE_A = "01890a5d-ac96-774b-bcce-b302099a8057"
NODE_B = "01890a5d-ac96-7aaa-8bbb-000000000002"


def new_id():
    return str(uuid.uuid4())


# The envelope of every payload on ephemeral (docs/signals.md, "The
# envelope"): {"mac":"<32 hex>", then the payload after its "{"; the MAC is
# HMAC-SHA256 under the channel key over the payload, its first 16 bytes.
ENVELOPE_HEAD = '{"mac":"'


def seal(key, payload):
    """payload in its envelope, signed with key (as bothy's processes sign)."""
    assert payload.startswith("{")
    mac = hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()[:32]
    return ENVELOPE_HEAD + mac + '",' + payload[1:]


def unseal(key, wire):
    """The payload of a signed envelope; an AssertionError for anything else."""
    assert wire.startswith(ENVELOPE_HEAD) and wire[40:42] == '",', "not in an envelope: %r" % wire
    payload = "{" + wire[42:]
    assert hmac.compare_digest(seal(key, payload), wire), "MAC is not the channel key's: %r" % wire
    return payload


Notify = collections.namedtuple("Notify", "pid payload")


class Instance:
    """One temporary PostgreSQL instance with bothy preloaded."""

    def __init__(self, name, conf_lines=(), with_extension=True):
        self.dir = tempfile.mkdtemp(prefix=name + "-", dir=WORK)
        self.conf = os.path.join(self.dir, "extra.conf")
        with open(self.conf, "w") as f:
            f.write("".join(line + "\n" for line in conf_lines))
        self.with_extension = with_extension
        self.running = False

    @property
    def log(self):
        with open(os.path.join(self.dir, "server.log")) as f:
            return f.read()

    def _pg_temp(self, *args, check=True):
        env = dict(os.environ)
        if not self.with_extension:
            env["BOTHY_TEST_NO_EXTENSION"] = "1"
        return subprocess.run([PG_TEMP, *args], env=env, check=check,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def start(self, check=True):
        result = self._pg_temp("start", self.dir, self.conf, check=check)
        self.running = result.returncode == 0
        return result

    def stop(self):
        self._pg_temp("stop", self.dir)
        self.running = False

    def crash(self):
        self._pg_temp("crash", self.dir)
        self.running = False

    def restart(self):
        self._pg_temp("restart", self.dir)
        self.running = True

    def reload_with(self, *conf_lines):
        """Append "name = 'value'" lines to postgresql.conf, reload, and wait
        (bounded) until new sessions see every value."""
        with open(os.path.join(self.dir, "data", "postgresql.conf"), "a") as f:
            f.write("".join(line + "\n" for line in conf_lines))
        with self.connect() as conn:
            conn.cursor().execute("SELECT pg_reload_conf()")
        for line in conf_lines:
            name, value = (part.strip().strip("'") for part in line.split("=", 1))
            poll_until(lambda: self.query("SHOW " + name)[0][0] == value, timeout=10.0,
                       what="reload of " + name)

    def connect(self, autocommit=True, dbname="bothy_test"):
        conn = psycopg2.connect(host=self.dir, port=int(os.environ.get("BOTHY_TEST_PGPORT", "54329")),
                                user="postgres", dbname=dbname)
        conn.autocommit = autocommit
        return conn

    def query(self, sql, *args):
        conn = self.connect()
        try:
            cur = conn.cursor()
            cur.execute(sql, args)
            return cur.fetchall() if cur.description else None
        finally:
            conn.close()

    def channel_key(self):
        """The key that signs the channel this start (bothy.channel_key())."""
        return bytes(self.query("SELECT bothy.channel_key()")[0][0])

    def notify_signed(self, payload):
        """payload on ephemeral as bothy would send it: a superuser's NOTIFY of
        its signed envelope (only a superuser may NOTIFY there at all)."""
        self.query("SELECT pg_notify('ephemeral', %s)", seal(self.channel_key(), payload))

    def fanout_pid(self):
        """The fan-out worker's process, or None unless exactly one runs."""
        rows = self.query("SELECT pid FROM pg_stat_activity WHERE backend_type = 'bothy fan-out'")
        return rows[0][0] if len(rows) == 1 else None

    def wait_fanout(self, timeout=10):
        """The fan-out worker's process, once it runs: it starts a moment
        after the server, once bothy_test exists."""
        poll_until(lambda: self.fanout_pid() is not None, timeout=timeout, what="the fan-out worker")
        return self.fanout_pid()

    def close(self):
        if self.running:
            self.stop()


class Listener:
    """A libpq connection LISTENing on ephemeral, as a gateway's listener
    does: every payload must be signed with the channel key, and is handed
    on without its envelope."""

    def __init__(self, instance):
        self.conn = instance.connect()
        self.conn.cursor().execute("LISTEN ephemeral")
        self.key = instance.channel_key()

    def next(self, timeout=5.0, fences=False):
        """The next payload, or an AssertionError after timeout seconds (a
        bounded wait).  The fan-out worker's wal.fence before each batch
        (docs/signals.md, "The fence") is skipped unless fences is true."""
        return self.next_notify(timeout, fences).payload

    def next_notify(self, timeout=5.0, fences=True):
        """The next notification (payload and pid), as next."""
        deadline = time.monotonic() + timeout
        while True:
            while not self.conn.notifies:
                left = deadline - time.monotonic()
                assert left > 0, "no signal arrived within %.1f s" % timeout
                select.select([self.conn], [], [], left)
                self.conn.poll()
            raw = self.conn.notifies.pop(0)
            notify = Notify(raw.pid, unseal(self.key, raw.payload))
            if fences or not notify.payload.startswith('{"kind":"wal.fence"'):
                return notify

    def close(self):
        self.conn.close()


def poll_until(predicate, timeout, interval=0.05, what="condition"):
    """Bounded polling: returns the elapsed seconds once predicate() holds."""
    start = time.monotonic()
    while True:
        if predicate():
            return time.monotonic() - start
        assert time.monotonic() - start < timeout, "%s not reached within %.1f s" % (what, timeout)
        time.sleep(interval)


@pytest.fixture(scope="module")
def multi():
    inst = Instance("multi", ["bothy.cluster_mode = 'multi'"])
    inst.start()
    yield inst
    inst.close()


@pytest.fixture(scope="module")
def single():
    inst = Instance("single", ["bothy.cluster_mode = 'single'"])
    inst.start()
    yield inst
    inst.close()


@pytest.fixture
def listener_of():
    listeners = []

    def make(instance):
        listener = Listener(instance)
        listeners.append(listener)
        return listener
    yield make
    for listener in listeners:
        listener.close()
