"""test/browser: the demo cluster of `make demo` in test mode (demo/cluster
with free ports under a temporary directory, short presence and typing
settings), the nodes' static files and /status.json over plain HTTP, and
the page itself in Debian's chromium driven by playwright-core
(scenario.mjs): two pages on different nodes see each other's typing and
presence, node A is killed and its page comes back through the edge on
node B; the terminal pane opens a shell on the cluster's bothy-host, reads
echo and stty size back and attaches again when its relaying node is killed
(terminal.mjs).  Screenshots go to BOTHY_BROWSER_ARTIFACTS (default
artifacts/browser under the checkout), printed at the end.

playwright-core comes from npm (`npm ci` here, pinned by package-lock.json),
xterm.js too (demo/xterm-install, as make demo installs it), and the
page's @bothy/client bundle (demo/client-install);
npm's cache and HOME are put under the work directory, so the suite runs as
any user (test/run-all runs it as postgres).
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("BOTHY_ROOT", os.path.abspath(os.path.join(HERE, "..", "..")))
GATEWAY = os.environ.get("BOTHY_GATEWAY", os.path.join(ROOT, "src", "gateway", "bothy-gateway"))


def _host_binary():
    """bothy-host as test/host finds it: BOTHY_HOST, else the work
    directory's bin/ (test/run-all copies it there), else the build's."""
    if os.environ.get("BOTHY_HOST"):
        return os.environ["BOTHY_HOST"]
    copied = os.path.join(ROOT, "bin", "bothy-host")
    return copied if os.path.exists(copied) else os.path.join(ROOT, "src", "host", "bothy-host")


HOST = _host_binary()
WORK = os.environ.get("BOTHY_TEST_WORK") or tempfile.mkdtemp(prefix="bothy-browser-")
ARTIFACTS = os.environ.get("BOTHY_BROWSER_ARTIFACTS", os.path.join(ROOT, "artifacts", "browser"))
NOTIFY_EVERY_S = 3

# The checks of scenario.mjs, in its order: each is one test here.
CHECKS = [
    "demo page: both panes connect",
    "demo page: the panes are on two nodes, A and B",
    "demo page: the run's progress moves (run.updated)",
    "two pages: Ada on node A, Grace on node B",
    "typing: Grace's page shows Ada typing",
    "typing: Ada's page shows Grace typing",
    "presence: each page sees the other person on the other node",
    "agent: the driver's agent shows online",
    "notifications: a hint arrives as a toast",
    "failover: node A is killed",
    "failover: Ada's page comes back on node B through the edge",
    "failover: the demo page's Ada pane also moves to node B",
    "failover: the cluster strip shows node A down",
    "failover: Grace's page sees Ada's device on node B",
    "failover: typing still reaches Ada's page",
    "status page: node B's ID, ready, its connections",
    "terminal: node A started again",
    "terminal: the pane opens a shell on the demo host through the edge",
    "terminal: echo bothy-$RANDOM comes back on the screen",
    "terminal: a resized window, and stty size says the pane's size",
    "terminal: the pane names the relaying node and the control connection's node",
    "terminal: the relaying node killed, the pane attaches again and the same shell answers",
    "terminal: a shell the host never starts: the pane stops at the open timeout (4102), without attaching",
    "no script errors in the pages",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def poll_until(fn, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError("%s not within %s s" % (what, timeout))


def get(port, path):
    """(status, headers, body) of a GET of path exactly as given."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def ids():
    values = {}
    with open(os.path.join(ROOT, "demo", "ids")) as f:
        for line in f:
            m = re.match(r"^(DEMO_\w+)=(\S+)$", line.strip())
            if m:
                values[m.group(1)] = m.group(2)
    return values


class Cluster:
    """demo/cluster up in a directory of the work directory, with free ports."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="cluster-", dir=WORK)
        self.ports = {name: free_port() for name in ("pg", "edge", "a", "b")}
        self.env = dict(os.environ, BOTHY_GATEWAY=GATEWAY, BOTHY_HOST=HOST, BOTHY_DEMO_FAST="1",
                        BOTHY_DEMO_NOTIFY_EVERY=str(NOTIFY_EVERY_S),
                        BOTHY_DEMO_PGPORT=str(self.ports["pg"]),
                        BOTHY_DEMO_EDGE_PORT=str(self.ports["edge"]),
                        BOTHY_DEMO_NODE_A_PORT=str(self.ports["a"]),
                        BOTHY_DEMO_NODE_B_PORT=str(self.ports["b"]))
        self.script = os.path.join(ROOT, "demo", "cluster")

    def cmd(self, *args, check=True):
        return subprocess.run([self.script, *args], env=self.env, check=check, timeout=120,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def up(self):
        r = self.cmd("up", self.dir, check=False)
        if r.returncode != 0:
            raise AssertionError("demo/cluster up failed:\n%s\n%s" % (r.stdout, self.logs()))
        with open(os.path.join(self.dir, "demo.env")) as f:
            self.demo = dict(re.findall(r"^(\w+)='([^']*)'$", f.read(), re.M))
        self.node_ids = {n: json.loads(get(self.ports[n], "/status.json")[2])["node"] for n in "ab"}

    def logs(self):
        out = []
        logs = os.path.join(self.dir, "logs")
        for name in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
            with open(os.path.join(logs, name), errors="replace") as f:
                out.append("--- %s\n%s" % (name, "".join(f.readlines()[-15:])))
        return "\n".join(out)

    def down(self):
        self.cmd("down", self.dir, check=False)

    def conninfo(self):
        return "host=%s/pg port=%d dbname=bothy_demo user=bothy_demo_gateway" % (self.dir, self.ports["pg"])

    def token(self, person, device):
        return subprocess.run([GATEWAY, "token", "person", "--person", person, "--device", device,
                               "--keys", os.path.join(self.dir, "keys")], check=True,
                              stdout=subprocess.PIPE, text=True).stdout.strip()


def npm_env():
    """npm's cache and HOME under the work directory: any user runs it."""
    home = os.path.join(WORK, "home")
    os.makedirs(home, exist_ok=True)
    return dict(os.environ, HOME=home, npm_config_cache=os.path.join(WORK, "npm-cache"),
                npm_config_update_notifier="false", npm_config_fund="false", npm_config_audit="false")


@pytest.fixture(scope="session")
def cluster():
    # xterm.js for the page's terminal pane, as make demo installs it
    r = subprocess.run([os.path.join(ROOT, "demo", "xterm-install")], env=npm_env(), timeout=300,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0, "demo/xterm-install failed:\n" + r.stdout[-3000:]
    # the page's client, @bothy/client (js/), as make demo builds it
    r = subprocess.run([os.path.join(ROOT, "demo", "client-install")], env=npm_env(), timeout=300,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0, "demo/client-install failed:\n" + r.stdout[-3000:]
    c = Cluster()
    c.up()
    yield c
    c.down()
    # no process of the cluster may be left behind
    left = subprocess.run(["pgrep", "-f", c.dir], stdout=subprocess.PIPE, text=True).stdout.split()
    assert not left, "processes left after demo/cluster down: %s" % left


def extra_node(cluster, web):
    """One more gateway node on the demo database, with --web web or none."""
    port = free_port()
    args = [GATEWAY, "serve", "--listen", "127.0.0.1:%d" % port, "--database", cluster.conninfo(),
            "--keys", os.path.join(cluster.dir, "keys")]
    if web is not None:
        args += ["--web", web]
    log = open(os.path.join(cluster.dir, "logs", "extra-%d.log" % port), "w")
    proc = subprocess.Popen(args, stdout=log, stderr=log)

    def ready():
        assert proc.poll() is None, "the extra node exited: %s" % proc.returncode
        try:
            return get(port, "/readyz")[0] == 200
        except OSError:
            return False
    poll_until(ready, 20, "the extra node ready")
    return port, proc, log


def stop_node(proc, log):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()


# --- static files and /status.json --------------------------------------------

def test_page_files_with_their_types(cluster):
    port = cluster.ports["a"]
    for path, name, mime, cache in [
            ("/", "index.html", "text/html; charset=utf-8", "no-store"),
            ("/status", "status.html", "text/html; charset=utf-8", "no-store"),
            ("/index.html", "index.html", "text/html; charset=utf-8", "no-store"),
            ("/app.js", "app.js", "text/javascript; charset=utf-8", "no-cache"),
            ("/status.js", "status.js", "text/javascript; charset=utf-8", "no-cache"),
            ("/style.css", "style.css", "text/css; charset=utf-8", "no-cache"),
            ("/favicon.svg", "favicon.svg", "image/svg+xml", "no-cache")]:
        status, headers, body = get(port, path)
        assert status == 200, path
        with open(os.path.join(ROOT, "web", name), "rb") as f:
            assert body == f.read(), path
        assert headers["content-type"] == mime, path
        assert headers["cache-control"] == cache, path
        assert headers["x-content-type-options"] == "nosniff", path
        if name.endswith(".html"):
            assert "script-src 'self'" in headers["content-security-policy"]
            assert headers["referrer-policy"] == "no-referrer"


@pytest.mark.parametrize("path", [
    "/../Makefile", "/..%2fMakefile", "/web/index.html", "/INDEX.html", "/index.htm",
    "/.index.html", "/index.html/", "/index.html.bak", "/x.json",
    "//etc/passwd", "/node_modules.js/x", "/" + "a" * 70 + ".js", "/missing.js"])
def test_only_files_of_the_pattern(cluster, path):
    status, _, body = get(cluster.ports["a"], path)
    assert status == 404 and body == b"not found\n", path


def test_nul_in_the_path_is_refused(cluster):
    # libwebsockets itself drops a request with an encoded NUL, before web.c
    try:
        status = get(cluster.ports["a"], "/status.html%00.js")[0]
    except (http.client.HTTPException, ConnectionError):
        status = None
    assert status in (None, 400, 403, 404)


def test_no_link_no_directory_no_large_file(cluster):
    web = tempfile.mkdtemp(prefix="web-", dir=WORK)
    with open(os.path.join(web, "index.html"), "w") as f:
        f.write("<!doctype html><title>t</title>\n")
    os.symlink(os.path.join(ROOT, "web", "app.js"), os.path.join(web, "link.js"))
    os.mkdir(os.path.join(web, "dir.css"))
    with open(os.path.join(web, "big.js"), "w") as f:
        f.write("x" * (1024 * 1024 + 1))
    port, proc, log = extra_node(cluster, web)
    try:
        assert get(port, "/")[0] == 200
        for path in ("/link.js", "/dir.css", "/big.js", "/app.js"):
            assert get(port, path)[0] == 404, path
    finally:
        stop_node(proc, log)


def test_without_web_no_page_but_status(cluster):
    port, proc, log = extra_node(cluster, None)
    try:
        for path in ("/", "/status", "/index.html", "/app.js"):
            assert get(port, path)[0] == 404, path
        status, headers, body = get(port, "/status.json")
        assert status == 200 and headers["content-type"] == "application/json"
        assert json.loads(body)["ready"] is True
    finally:
        stop_node(proc, log)


def test_web_must_be_a_directory():
    r = subprocess.run([GATEWAY, "serve", "--listen", "127.0.0.1:1", "--database", "x", "--keys", WORK,
                        "--web", os.path.join(WORK, "no-such-dir")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=10)
    assert r.returncode == 2
    assert "--web must name a directory" in r.stderr


def test_status_json(cluster):
    status, headers, body = get(cluster.ports["b"], "/status.json")
    assert status == 200 and headers["cache-control"] == "no-store"
    s = json.loads(body)
    assert s["node"] == cluster.node_ids["b"] and re.match(r"^[0-9a-f-]{36}$", s["node"])
    assert s["cluster_mode"] == "multi"
    assert s["ready"] is True and s["started"] is True and s["stopping"] is False
    assert s["database_up"] is True and s["listener_up"] is True
    assert isinstance(s["uptime_s"], int) and 0 <= s["uptime_s"] < 3600
    assert set(s["connections"]) == {"unidentified", "person", "agent"}
    assert all(isinstance(v, int) for v in s["connections"].values())
    assert "gateway.run" in s["signals_received"]
    assert not any(k.startswith("terminal.") for k in s["signals_received"])
    # the driver's run changes reach every node as gateway.run signals
    poll_until(lambda: json.loads(get(cluster.ports["b"], "/status.json")[2])
               ["signals_received"]["gateway.run"] > s["signals_received"]["gateway.run"],
               10, "a gateway.run signal counted")


# --- the page in chromium -------------------------------------------------------

@pytest.fixture(scope="session")
def scenario(cluster):
    env = npm_env()
    r = subprocess.run(["npm", "ci", "--no-progress"], cwd=HERE, env=env, timeout=300,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0, "npm ci failed:\n" + r.stdout[-3000:]

    v = ids()
    people = {}
    for name, key in (("ada", "DEMO_ADA"), ("grace", "DEMO_GRACE")):
        device = str(uuid.uuid4())
        people[name] = {"id": v[key], "device": device, "token": cluster.token(v[key], device)}
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    config = {
        "demo_url": cluster.demo["DEMO_URL"],
        "edge": cluster.demo["DEMO_EDGE"],
        "nodes": {n: {"url": "http://127.0.0.1:%d" % cluster.ports[n], "id": cluster.node_ids[n]}
                  for n in "ab"},
        "ada": people["ada"], "grace": people["grace"],
        "thread": v["DEMO_THREAD"], "agent": v["DEMO_AGENT"],
        "kill": [cluster.script, "kill", "a", cluster.dir],
        "cluster": [cluster.script, cluster.dir],
        "artifacts": ARTIFACTS,
        "notify_ms": NOTIFY_EVERY_S * 1000,
    }
    env["BOTHY_BROWSER_CONFIG"] = json.dumps(config)
    env.update(cluster.env)
    r = subprocess.run(["node", os.path.join(HERE, "scenario.mjs")], cwd=HERE, env=env, timeout=600,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout)
    print("browser test artifacts (screenshots, results.json): %s" % ARTIFACTS)
    results = {}
    path = os.path.join(ARTIFACTS, "results.json")
    if os.path.exists(path):
        with open(path) as f:
            results = {x["name"]: x for x in json.load(f)}
    return {"results": results, "output": r.stdout, "logs": cluster.logs}


@pytest.mark.parametrize("name", CHECKS)
def test_page(scenario, name):
    result = scenario["results"].get(name)
    assert result is not None, "the scenario did not reach this check:\n" + scenario["output"][-2000:]
    assert result["ok"], result.get("reason")
