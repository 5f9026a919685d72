"""test/demo: `make demo` itself (demo/run), as a newcomer runs it: on a
copy of the checkout (built already) inside a private directory (mode 0700,
as `mktemp -d` makes it: the user postgres cannot reach the checkout), with
free ports, it prints the page's link and serves it through the edge with
two ready nodes; `demo/cluster kill a .demo` and `start a .demo`, as the
page says; Ctrl-C (SIGINT to its process group, as a terminal sends it)
stops everything and leaves no process and, as root, no runtime directory
behind; a second run starts again from the same data (no second initdb,
the seeded rows once, the run's versions going on, the demo terminal host
and its key as the first run paired them).

Run by test/run-all as the user that runs `make test` (root in CI, where
demo/run runs the cluster as postgres from a runtime directory under
/var/tmp, as it does for `make demo`).  The extension must be installed
(run-all installs it): BOTHY_SKIP_INSTALL.
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


def as_root():
    return os.geteuid() == 0


def runtime_of(copy):
    """The runtime directory of a running make demo as root (demo/runtime):
    .demo/runtime names it."""
    with open(os.path.join(copy, ".demo", "runtime")) as f:
        return f.read().strip()


def cluster_dir(copy):
    """Where the running cluster's data is: the runtime directory's as root,
    .demo in the checkout otherwise."""
    return os.path.join(runtime_of(copy), "cluster") if as_root() else os.path.join(copy, ".demo")


@pytest.fixture(scope="module")
def checkout():
    """A copy of the built checkout, mtimes kept so that demo/run's make has
    nothing to do, in a directory of mode 0700 like a clone made in a
    `mktemp -d` folder or in /root: the user postgres cannot reach it."""
    base = tempfile.mkdtemp(prefix="bothy-demo-")
    assert os.stat(base).st_mode & 0o777 == 0o700
    copy = os.path.join(base, "bothy")
    os.mkdir(copy)
    excluded = ["./.git", "./.demo", "./artifacts", "./test/browser/node_modules"]
    pack = subprocess.Popen(["tar", "-C", ROOT, *("--exclude=" + e for e in excluded), "-cf", "-", "."],
                            stdout=subprocess.PIPE)
    subprocess.run(["tar", "-C", copy, "-xpf", "-"], stdin=pack.stdout, check=True)
    assert pack.wait() == 0
    # the clone's own mode, as git clone makes it; its parent stays 0700
    os.chmod(copy, 0o755)
    ports = {name: str(free_port()) for name in
             ("BOTHY_DEMO_PGPORT", "BOTHY_DEMO_EDGE_PORT", "BOTHY_DEMO_NODE_A_PORT", "BOTHY_DEMO_NODE_B_PORT")}
    yield copy, ports
    # whatever a failed test left running goes (as root, demo/cluster
    # reaches the runtime directory), then the runtime directory and the copy
    subprocess.run(["demo/cluster", "down", ".demo"], cwd=copy, env={**os.environ, **ports},
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if as_root() and os.path.exists(os.path.join(copy, ".demo", "runtime")):
        shutil.rmtree(runtime_of(copy), ignore_errors=True)
    shutil.rmtree(base, ignore_errors=True)


class Demo:
    """One `make demo`: demo/run in its own process group, its output read
    line by line."""

    def __init__(self, copy, ports, command=("demo/run",)):
        self.copy, self.ports = copy, ports
        self.lines = []
        env = {**os.environ, **ports, "BOTHY_SKIP_INSTALL": "1"}
        env.pop("BOTHY_GATEWAY", None)          # the copy's own, as make demo uses
        # SIGINT as a terminal's shell leaves it for a job it starts: its
        # default, even when this test runs with SIGINT ignored (a job
        # started in the background by a shell without job control)
        self.proc = subprocess.Popen(list(command), cwd=copy, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
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


def processes_of(*places):
    """PIDs whose command line names one of the places or whose working
    directory is inside one: the cluster's PostgreSQL, nodes, edge and
    driver."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink("/proc/%s/cwd" % pid)
        except OSError:
            continue                        # gone meanwhile, or not ours to read
        if any(place in cmdline or cwd == place or cwd.startswith(place + "/") for place in places):
            found.append("%s: %s" % (pid, cmdline.strip()))
    return found


def psql(copy, ports, sql):
    # root reaches the socket's 0700 directory as it is
    cmd = ["psql", "-h", os.path.join(cluster_dir(copy), "pg"), "-p", ports["BOTHY_DEMO_PGPORT"],
           "-d", "bothy_demo", "-U", "postgres", "-AtXqc", sql]
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
        # the demo terminal host: registered and paired once, its key kept
        "hosts": psql(copy, ports, "SELECT count(*) || ' ' || string_agg(state, ',') FROM bothy.terminal_hosts"),
        "pairings": psql(copy, ports, "SELECT count(*) FROM bothy.terminal_log WHERE transition = 'host_paired'"),
        "host_key": host_key(copy),
    }


def host_key(copy):
    with open(os.path.join(cluster_dir(copy), "host", "key")) as f:
        return f.read()


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


def postgres_reaches(path):
    return subprocess.run(["runuser", "-u", "postgres", "--", "test", "-r", path]).returncode == 0


def node_cluster(copy, ports, *args):
    """demo/cluster ARGS .demo from the copy, as the page tells the user."""
    r = subprocess.run(["demo/cluster", *args, ".demo"], cwd=copy, env={**os.environ, **ports}, timeout=60,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0, r.stdout


def node_down(ports, name):
    try:
        status, _ = http_get(ports["BOTHY_DEMO_EDGE_PORT"], "/node/%s/status.json" % name)
    except OSError:
        return True
    return status != 200


def assert_cleaned(copy, runtime):
    """Nothing left running; as root the runtime directory is gone and the
    data is back in the copy's .demo."""
    left = processes_of(copy, *([runtime] if runtime else []))
    assert left == [], "left behind after Ctrl-C: %s" % left
    if runtime:
        assert not os.path.exists(runtime), "the runtime directory %s is left" % runtime
        assert not os.path.exists(os.path.join(copy, ".demo", "runtime"))
    assert os.path.isfile(os.path.join(copy, ".demo", "pg", "data", "PG_VERSION"))


def test_make_demo_starts_stops_on_ctrl_c_and_starts_again_from_the_same_data(checkout):
    copy, ports = checkout
    if as_root():
        # the premise: the checkout is private, as a clone in /root is
        assert not postgres_reaches(os.path.join(copy, "demo", "cluster"))

    first = Demo(copy, ports)
    assert_serving(ports, first.wait_for_link())
    runtime = None
    if as_root():
        runtime = runtime_of(copy)
        assert runtime.startswith("/var/tmp/bothy-demo."), runtime
        assert runtime in first.output          # the page's psql line and the logs name it
    running = processes_of(copy, *([runtime] if runtime else []))
    # the scan below sees the cluster: PostgreSQL, both nodes, the edge, the driver
    assert all(any(what in p for p in running) for what in
               ("postgres", "bothy-gateway", "nginx", "driver.py", "bothy-host")), running
    assert run_version_moves(copy, ports, 0), "the driver stores no run version"
    before = data_facts(copy, ports)
    assert before["runs"] == "1" and before["members"] == "2", before
    assert before["hosts"] == "1 active" and before["pairings"] == "1", before

    assert first.ctrl_c() == 130, first.output
    assert "stopped; the data stays in" in first.output
    assert_cleaned(copy, runtime)

    second = Demo(copy, ports)
    try:
        assert_serving(ports, second.wait_for_link())
        runtime = runtime_of(copy) if as_root() else None
        after = data_facts(copy, ports)
        assert after["system_identifier"] == before["system_identifier"]    # no second initdb
        assert (after["runs"], after["members"]) == (before["runs"], before["members"])  # seeded once
        # the same host with the same key, not paired again
        assert (after["hosts"], after["pairings"], after["host_key"]) == \
            (before["hosts"], before["pairings"], before["host_key"])
        assert run_version_moves(copy, ports, before["run_version"])       # the run goes on
        # step 4 of the page: a node killed and started again, from the checkout
        assert "demo/cluster kill a .demo" in second.output
        node_cluster(copy, ports, "kill", "a")
        deadline = time.monotonic() + 10
        while not node_down(ports, "a"):
            assert time.monotonic() < deadline, "node a still answers after demo/cluster kill"
            time.sleep(0.2)
        node_cluster(copy, ports, "start", "a")
        assert_serving(ports, second.lines[second.lines.index("  Open this link in a browser:") + 2].strip())
    finally:
        code = second.ctrl_c()
    assert code == 130, second.output
    assert_cleaned(copy, runtime)


def test_ctrl_c_stops_everything_when_the_output_is_piped_to_tee(checkout):
    """make demo 2>&1 | tee demo.log, then Ctrl-C: tee gets the SIGINT too
    and is gone before demo/run writes its first stopping line, which got
    SIGPIPE and left the whole cluster running.  Now every process stops
    and the data comes back, whatever stdout is."""
    copy, ports = checkout
    demo = Demo(copy, ports, ("bash", "-c", "demo/run 2>&1 | tee demo.log"))
    runtime = None
    try:
        assert_serving(ports, demo.wait_for_link())
        runtime = runtime_of(copy) if as_root() else None
        running = processes_of(copy, *([runtime] if runtime else []))
        assert any("bothy-gateway" in p for p in running) and any("tee" in p for p in running), running
    finally:
        demo.ctrl_c()
    # bash waits for both ends of the pipe: demo/run has finished its stop
    assert_cleaned(copy, runtime)
