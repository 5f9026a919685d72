"""test/demo: `make demo` itself (demo/run), as a newcomer runs it: on a
copy of the checkout (built already), with free ports, it prints the page's
link and serves it through the edge with two ready nodes; Ctrl-C (SIGINT to
its process group, as a terminal sends it) stops everything and leaves no
process behind; a second run starts again from the same data (no second
initdb, the seeded rows once, the run's versions going on).

Run by test/run-all as the user that runs `make test` (root in CI, where
demo/run runs the cluster as postgres, as it does for `make demo`).  The
extension must be installed (run-all installs it): BOTHY_SKIP_INSTALL.
"""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest

ROOT = os.environ.get("BOTHY_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
with open(os.path.join(ROOT, "demo", "ids")) as ids:
    RUN_ID = next(line.split("=", 1)[1].strip() for line in ids if line.startswith("DEMO_RUN="))
START_TIMEOUT_S = 180       # the packages are there and the build is current: the cluster's start
STOP_TIMEOUT_S = 90


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def checkout():
    """A copy of the built checkout under /tmp, where the user postgres can
    read it (a checkout under /root could not be), mtimes kept so that
    demo/run's make has nothing to do."""
    base = tempfile.mkdtemp(prefix="bothy-demo-")
    os.chmod(base, 0o755)
    copy = os.path.join(base, "bothy")
    os.mkdir(copy)
    excluded = ["./.git", "./.demo", "./artifacts", "./test/browser/node_modules"]
    pack = subprocess.Popen(["tar", "-C", ROOT, *("--exclude=" + e for e in excluded), "-cf", "-", "."],
                            stdout=subprocess.PIPE)
    subprocess.run(["tar", "-C", copy, "-xpf", "-"], stdin=pack.stdout, check=True)
    assert pack.wait() == 0
    # tar gave the copy the checkout's own mode, 0700 in a mktemp clone
    os.chmod(copy, 0o755)
    ports = {name: str(free_port()) for name in
             ("BOTHY_DEMO_PGPORT", "BOTHY_DEMO_EDGE_PORT", "BOTHY_DEMO_NODE_A_PORT", "BOTHY_DEMO_NODE_B_PORT")}
    yield copy, ports
    # whatever a failed test left running goes, then the copy
    subprocess.run(["bash", "-c", 'if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi',
                    "_", "demo/cluster", "down", os.path.join(copy, ".demo")],
                   cwd=copy, env={**os.environ, **ports}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(base, ignore_errors=True)


class Demo:
    """One `make demo`: demo/run in its own process group, its output read
    line by line."""

    def __init__(self, copy, ports):
        self.copy, self.ports = copy, ports
        self.lines = []
        env = {**os.environ, **ports, "BOTHY_SKIP_INSTALL": "1"}
        env.pop("BOTHY_GATEWAY", None)          # the copy's own, as make demo uses
        self.proc = subprocess.Popen(["demo/run"], cwd=copy, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def output(self):
        return "\n".join(self.lines)

    def wait_for_link(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        while not any("Ctrl-C stops everything" in line for line in self.lines):
            assert self.proc.poll() is None, "demo/run exited with %s:\n%s" % (self.proc.returncode, self.output)
            assert time.monotonic() < deadline, "no link within %d s:\n%s" % (START_TIMEOUT_S, self.output)
            time.sleep(0.2)
        link = self.lines[self.lines.index("  Open this link in a browser:") + 2].strip()
        return link

    def ctrl_c(self):
        os.killpg(self.proc.pid, signal.SIGINT)
        try:
            self.proc.wait(STOP_TIMEOUT_S)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.reader.join(10)
        return self.proc.returncode


def http_get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", int(port), timeout=5)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def processes_of(copy):
    """PIDs whose command line names the copy or whose working directory is
    inside it: the cluster's PostgreSQL, nodes, edge and driver."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink("/proc/%s/cwd" % pid)
        except OSError:
            continue                        # gone meanwhile, or not ours to read
        if copy in cmdline or cwd == copy or cwd.startswith(copy + "/"):
            found.append("%s: %s" % (pid, cmdline.strip()))
    return found


def psql(copy, ports, sql):
    cmd = ["psql", "-h", os.path.join(copy, ".demo", "pg"), "-p", ports["BOTHY_DEMO_PGPORT"],
           "-d", "bothy_demo", "-U", "postgres", "-AtXqc", sql]
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--"] + cmd
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout.strip()


def run_version(copy, ports):
    return int(psql(copy, ports, "SELECT version FROM bothy.runs WHERE run = '%s'" % RUN_ID))


def data_facts(copy, ports):
    """What a second start must find as the first left it."""
    return {
        "system_identifier": psql(copy, ports, "SELECT system_identifier FROM pg_control_system()"),
        "runs": psql(copy, ports, "SELECT count(*) FROM bothy.runs"),
        "members": psql(copy, ports, "SELECT count(*) FROM bothy.memberships"),
        "run_version": run_version(copy, ports),
    }


def assert_serving(ports, link):
    edge = ports["BOTHY_DEMO_EDGE_PORT"]
    assert link.startswith("http://127.0.0.1:%s/#" % edge), link
    status, page = http_get(edge, "/")
    assert status == 200 and "<html" in page.lower()
    nodes = []
    for name in ("a", "b"):
        status, body = http_get(edge, "/node/%s/status.json" % name)
        assert status == 200, (name, status, body)
        nodes.append(json.loads(body))
    assert all(n["ready"] for n in nodes), nodes
    assert nodes[0]["node"] != nodes[1]["node"]


def run_version_moves(copy, ports, above):
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:      # the driver stores a version every second
        if run_version(copy, ports) > above:
            return True
        time.sleep(0.5)
    return False


def test_make_demo_starts_stops_on_ctrl_c_and_starts_again_from_the_same_data(checkout):
    copy, ports = checkout

    first = Demo(copy, ports)
    assert_serving(ports, first.wait_for_link())
    running = processes_of(copy)
    # the scan below sees the cluster: PostgreSQL, both nodes, the edge, the driver
    assert all(any(what in p for p in running) for what in
               ("postgres", "bothy-gateway", "nginx", "driver.py")), running
    assert run_version_moves(copy, ports, 0), "the driver stores no run version"
    before = data_facts(copy, ports)
    assert before["runs"] == "1" and before["members"] == "2", before

    assert first.ctrl_c() == 130, first.output
    assert "stopped; the data stays in" in first.output
    left = processes_of(copy)
    assert left == [], "left behind after Ctrl-C: %s" % left

    second = Demo(copy, ports)
    try:
        assert_serving(ports, second.wait_for_link())
        after = data_facts(copy, ports)
        assert after["system_identifier"] == before["system_identifier"]    # no second initdb
        assert (after["runs"], after["members"]) == (before["runs"], before["members"])  # seeded once
        assert run_version_moves(copy, ports, before["run_version"])       # the run goes on
    finally:
        code = second.ctrl_c()
    assert code == 130, second.output
    left = processes_of(copy)
    assert left == [], "left behind after the second Ctrl-C: %s" % left
