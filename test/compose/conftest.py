"""test/compose: the Debian packages, the images built from them and the
Compose overlay, run on this machine's docker (dockerd started when none
runs).  The fixture `stack` makes the packages (make deb), the base and
the images (images/build, each skipped when its content has not changed),
and brings compose/compose.yaml with compose/compose.multi-node.yaml up
under the profile direct in a project of its own, published on a free
port of 127.0.0.1; at the end `down -v` and a check that nothing of the
project is left."""
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

import pytest

ROOT = os.environ.get("BOTHY_ROOT", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
sys.path.insert(0, os.path.join(ROOT, "test", "host"))
VERSION = subprocess.run(["sed", "-n", "s/^default_version = '\\(.*\\)'/\\1/p", os.path.join(ROOT, "bothy.control")],
                         capture_output=True, text=True, check=True).stdout.strip()
NGINX_TAG = "bookworm-debian"       # the local edge image (images/edge) under the ruling's name
UP_TIMEOUT_S = 300                  # a first start: initdb, the extension, two nodes, on a loaded machine


# what the run prints at its end (pytest's summary shows it without -s):
# the images' sizes and the times
REPORT = []


def pytest_terminal_summary(terminalreporter):
    for line in REPORT:
        terminalreporter.write_line(line)


def run(*args, timeout=900, check=True, **kw):
    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    if check and r.returncode != 0:
        raise AssertionError("%s exited %d:\n%s\n%s" % (" ".join(args), r.returncode, r.stdout[-3000:], r.stderr[-3000:]))
    return r


def poll_until(fn, timeout, what, interval=0.5):
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        assert time.monotonic() < deadline, "%s: not within %d s" % (what, timeout)
        time.sleep(interval)


def new_id():
    return str(uuid.uuid4())


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ensure_dockerd():
    if subprocess.run(["docker", "info"], capture_output=True).returncode == 0:
        return
    log = open(os.path.join(tempfile.gettempdir(), "bothy-dockerd.log"), "ab")
    subprocess.Popen(["dockerd"], stdout=log, stderr=log, start_new_session=True)
    poll_until(lambda: subprocess.run(["docker", "info"], capture_output=True).returncode == 0,
               60, "dockerd answering")


def shell_through_the_edge(target, token, host):
    """Once the host is connected, a session opened by REST through the
    edge and a device stream: a command runs in the host user's shell,
    and exit ends the session (1000)."""
    from fakeserver import Client, Device, rest_json

    def connected():
        status, body = rest_json(target.url, "GET", "/v1/terminal/hosts", token)
        assert status == 200, (status, body)
        return [h["connected"] for h in body["hosts"] if h["host"] == host] == [True]
    poll_until(connected, 30, "the host connected")

    # The node that answered may hold the control connection while the
    # node the edge picks for the opening has not yet heard its
    # terminal.host_present (D-M2-47-6, sent after the host's first
    # report): that node answers 409 host_unavailable until it does.
    def open_session():
        status, body = rest_json(target.url, "POST", "/v1/terminal/sessions", token, {"host": host})
        if (status, body) == (409, {"error": "host_unavailable"}):
            return None
        assert status == 201, (status, body)
        return body
    opened = poll_until(open_session, 15, "a session opened on the node the edge picks")
    device = Device(Client.open(target.ws + opened["stream"], opened["token"]).paired(), announce=False)
    device.send(b"echo bothy-$((6*7)) $(id -un)\n")
    device.read_until(b"bothy-42 bothy-host")
    device.send(b"exit\n")
    assert device.stream.wait_closed(15) == 1000


@pytest.fixture(scope="session")
def timing():
    started = time.monotonic()
    yield
    REPORT.append("compose suite: %.0f s in all" % (time.monotonic() - started))


@pytest.fixture(scope="session")
def images(timing):
    """The packages and the images built from them; their sizes printed."""
    ensure_dockerd()
    t0 = time.monotonic()
    run("make", "-s", "deb", cwd=ROOT)
    debdir = os.path.join(ROOT, "build", "deb")
    t1 = time.monotonic()
    r = run(os.path.join(ROOT, "images", "build"), debdir, cwd=ROOT,
            env={**os.environ, "BOTHY_NGINX_VERSION": NGINX_TAG, "BOTHY_IMAGE_VERSION": VERSION})
    REPORT.append("make deb %.0f s, images %.0f s" % (t1 - t0, time.monotonic() - t1))
    REPORT.extend(r.stdout.splitlines())
    return debdir


class Stack:
    """One Compose project of the overlay, in a copy of compose/."""

    def __init__(self, debdir):
        self.debdir = debdir
        self.dir = tempfile.mkdtemp(prefix="bothy-compose-")
        shutil.copytree(os.path.join(ROOT, "compose"), os.path.join(self.dir, "compose"))
        self.project_dir = os.path.join(self.dir, "compose")
        # docker-compose 1.29 refuses depends_on's restart: true (README.md)
        with open(os.path.join(self.project_dir, "compose.multi-node.yaml")) as f:
            overlay = [l for l in f if l.strip() != "restart: true"]
        with open(os.path.join(self.project_dir, "compose.multi-node.v1.yaml"), "w") as f:
            f.writelines(overlay)
        self.project = "bothytest%d" % os.getpid()
        self.port = free_port()
        self.app_password = secrets.token_urlsafe(18)
        with open(os.path.join(self.project_dir, ".env"), "w") as f:
            f.write("BOTHY_DB_GATEWAY_PASSWORD=%s\nBOTHY_DB_APP_PASSWORD=%s\nBOTHY_VERSION=%s\n"
                    "BOTHY_NGINX_VERSION=%s\nBOTHY_EDGE_PORT=%d\n"
                    % (secrets.token_urlsafe(18), self.app_password, VERSION, NGINX_TAG, self.port))
        self.url = "http://127.0.0.1:%d" % self.port
        self.ws = "ws://127.0.0.1:%d" % self.port

    def compose(self, *args, timeout=600, check=True):
        return run("docker-compose", "-p", self.project, "-f", "compose.yaml", "-f", "compose.multi-node.v1.yaml",
                   "--profile", "direct", *args, cwd=self.project_dir, timeout=timeout, check=check)

    def container(self, service):
        return "%s_%s_1" % (self.project, service)

    def health(self, service):
        r = run("docker", "inspect", "-f", "{{.State.Health.Status}}", self.container(service), check=False)
        return r.stdout.strip()

    def up(self):
        self.compose("up", "-d", timeout=UP_TIMEOUT_S + 60)
        for service in ("db", "node", "node-2"):
            poll_until(lambda: self.health(service) == "healthy", UP_TIMEOUT_S, service + " healthy")
        poll_until(self.edge_answers, 60, "the edge answering")

    def edge_answers(self):
        try:
            urllib.request.urlopen(self.url + "/", timeout=2)
        except urllib.error.HTTPError as e:
            return e.code == 404
        except OSError:
            return False
        return False

    def sql(self, query, *variables):
        """psql in the database container as the application's login (peer
        on the socket as postgres, then SET ROLE): one row per line."""
        args = ["docker", "exec", "-i", self.container("db"), "psql", "-h", "/tmp", "-X", "-q", "-d", "bothy", "-tA",
                "-v", "ON_ERROR_STOP=1"]
        for i, v in enumerate(variables):
            args += ["-v", "v%d=%s" % (i, v)]
        r = run(*args, input="SET ROLE bothy_application;\n" + query + "\n")
        return [line for line in r.stdout.splitlines() if line]

    def token(self, person, device):
        return run("docker", "exec", self.container("node"), "bothy-gateway", "token", "person",
                   "--person", person, "--device", device, "--keys", "/var/lib/bothy/keys").stdout.strip()

    def leftovers(self):
        """What docker still has of the project: containers, networks, volumes."""
        found = []
        for kind in ("ps -a --format {{.Names}}", "network ls --format {{.Name}}",
                     "volume ls --format {{.Name}}"):
            out = run("docker", *kind.split()).stdout.split()
            found += [n for n in out if n.startswith(self.project + "_")]
        return found

    def down(self):
        self.compose("down", "-v", "--remove-orphans", timeout=120, check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def stack(images):
    s = Stack(images)
    try:
        t0 = time.monotonic()
        s.up()
        REPORT.append("the overlay up and healthy in %.0f s" % (time.monotonic() - t0))
        yield s
    finally:
        if os.environ.get("BOTHY_TEST_KEEP"):
            print("kept: project %s in %s" % (s.project, s.project_dir))
        else:
            s.down()
