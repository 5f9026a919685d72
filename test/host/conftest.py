"""Fixtures of the host service's process tests: the real bothy-host binary
against the fake terminal route of fakeserver.py (a control connection and
data connections that check every signature with python3-cryptography).

The binary is BOTHY_HOST, else bin/bothy-host of the work directory
test/run-all made (BOTHY_ROOT), else src/host/bothy-host of the checkout.
bothy-host refuses to run as root: run as root (pytest by hand), the tests
give it --allow-root, except the test of that refusal.

Every wait is bounded polling; a failed run leaves the hosts' logs under
BOTHY_TEST_WORK.
"""
import base64
import importlib.util
import os
import signal
import sys
import subprocess
import tempfile
import time

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from fakeserver import FakeServer, uuid7

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BOTHY_ROOT", os.path.abspath(os.path.join(HERE, "..", "..")))
WORK = os.environ.get("BOTHY_TEST_WORK") or tempfile.mkdtemp(prefix="bothy-host-")


def _binary():
    if os.environ.get("BOTHY_HOST"):
        return os.environ["BOTHY_HOST"]
    copied = os.path.join(ROOT, "bin", "bothy-host")
    return copied if os.path.exists(copied) else os.path.join(ROOT, "src", "host", "bothy-host")


HOST = _binary()


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_gateway_modules = {}


def gateway_module(name):
    """A module of the gateway suite (test/gateway/<name>.py), loaded under a
    name of its own: conftest (its fixtures' classes: Instance, KeyStore,
    Gateway), edge, docs_lib.  Those import their names from "conftest",
    which while they load is the gateway suite's, not this one."""
    if name not in _gateway_modules:
        path = os.path.join(ROOT, "test", "gateway", name + ".py")
        if name == "conftest":
            _gateway_modules[name] = _load("bothy_gateway_conftest_for_host", path)
        else:
            mine = sys.modules.get("conftest")
            sys.modules["conftest"] = gateway_module("conftest")
            try:
                _gateway_modules[name] = _load("bothy_gateway_%s_for_host" % name, path)
            finally:
                sys.modules["conftest"] = mine
    return _gateway_modules[name]
AS_ROOT = os.geteuid() == 0
ROOT_ARGS = ["--allow-root"] if AS_ROOT else []
SHELL = "/bin/sh"
# A pairing code in the form the database draws them (docs/terminal.md).
CODE = "0123456789abcdef"


def poll_until(check, timeout=10.0, interval=0.02, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1f s waiting for %s" % (timeout, what))
        time.sleep(interval)


def key_seed(path):
    """The 32-byte seed of a key file (docs/host.md, "The key file")."""
    with open(path) as f:
        prefix, host, seed = f.read().split(" ")
    return base64.urlsafe_b64decode(seed.strip() + "=")


def public_key(path):
    """The raw 32-byte public key of a key file, derived by python3-cryptography."""
    return Ed25519PrivateKey.from_private_bytes(key_seed(path)).public_key().public_bytes(
        Encoding.Raw, PublicFormat.Raw)


class Host:
    """One bothy-host process, its stderr in a log file of WORK."""

    def __init__(self, *args, allow_root=True, env=None):
        fd, self.logpath = tempfile.mkstemp(prefix="host-", suffix=".log", dir=WORK)
        os.close(fd)
        self.args = [HOST, *args] + (ROOT_ARGS if allow_root else [])
        self.env = dict(os.environ, **(env or {}))
        self.proc = None

    def start(self, prefix=()):
        self.logfile = open(self.logpath, "a")
        self.proc = subprocess.Popen([*prefix, *self.args], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=self.logfile, env=self.env)
        return self

    @property
    def log(self):
        with open(self.logpath) as f:
            return f.read()

    def wait(self, timeout=10.0):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError("bothy-host did not exit within %.1f s; its log:\n%s"
                                 % (timeout, self.log)) from None

    def stop(self, timeout=10.0):
        """SIGTERM, then SIGKILL if it has not exited by timeout: its status."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait() if self.proc is not None else None

    def children(self):
        """PIDs of the processes whose parent is this host (its shells)."""
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open("/proc/%s/stat" % entry) as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[1]) == self.proc.pid:
                    pids.append(int(entry))
        return pids


def run_host(*args, timeout=20.0, allow_root=True, prefix=(), env=None):
    """Runs bothy-host to its end: (exit status, stdout, log)."""
    h = Host(*args, allow_root=allow_root, env=env).start(prefix)
    out = h.proc.stdout.read().decode()
    return h.wait(timeout), out, h.log


@pytest.fixture
def fake():
    """A started fake terminal route; stopped after the test."""
    server = FakeServer().start()
    yield server
    server.stop()


@pytest.fixture
def hosts():
    """hosts(*args) starts bothy-host; every one is stopped after the test."""
    started = []

    def make(*args, **kw):
        h = Host(*args, **kw)
        started.append(h)
        return h.start()
    yield make
    for h in started:
        h.stop()


def pair(fake, path=None, host=None):
    """Pairs a new host with the fake through bothy-host pair: (host, key path)."""
    host = host or uuid7()
    path = path or os.path.join(tempfile.mkdtemp(prefix="key-", dir=WORK), "host.key")
    fake.pairing[host] = CODE
    status, out, log = run_host("pair", "--server", fake.url, "--host", host, "--code", CODE,
                                "--key", path)
    assert status == 0, "pair failed (%s): %s" % (status, log)
    fake.control()          # the pairing's own connection
    return host, path


@pytest.fixture
def paired(fake):
    return pair(fake)


@pytest.fixture
def running(fake, paired, hosts):
    """A paired host running with /bin/sh against the fake; (host, control)."""
    def make(*extra):
        h = hosts("run", "--server", fake.url, "--key", paired[1], "--shell", SHELL, *extra)
        return h, fake.control()
    return make


def open_session(fake, ctl):
    """session.open, its session.started and its data connection: (session, grant, stream)."""
    session, grant = ctl.open_session()
    started = ctl.next_op("session.started")
    assert started == {"op": "session.started", "session": session, "grant": grant}
    stream = fake.stream()
    assert stream.session == session and stream.identify["grant"] == grant
    return session, grant, stream


def reconnected(fake, stream, timeout=10.0):
    """The data connection the host connects again after `stream` was lost
    without 1000 (protocol.md): the same identify, signature and all."""
    again = fake.stream(timeout)
    assert again.identify == stream.identify, (again.identify, stream.identify)
    return again


def attach(fake, ctl, session):
    """session.open with a new grant for a session the host runs: the new data connection."""
    grant = uuid7()
    ctl.send({"op": "session.open", "session": session, "grant": grant, "device": uuid7()})
    assert ctl.next_op("session.started")["grant"] == grant
    stream = fake.stream()
    assert stream.identify["grant"] == grant
    return stream
