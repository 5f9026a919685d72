"""test/compose: the Debian packages, the images built from them and the
Compose files, run on this machine's docker (dockerd started when none
runs).  The fixture `images` makes the base, then the packages with
`make deb` in a container of that base holding a fresh copy of the tree
and none of the build dependencies, then the images (images/build, each
skipped when its content has not changed).  `Stack` is one Compose
project in a copy of compose/, brought up and down with the commands of
docs/operations.md "Compose" as written there (COMPOSE_PROJECT_NAME keeps
each run apart), published on a free port of 127.0.0.1; at the end a
check that nothing of the project is left."""
import os
import re
import secrets
import shlex
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
UP_TIMEOUT_S = 300                  # a first start: initdb, the extension, two nodes, on a loaded machine
DEB_TIMEOUT_S = 900                 # apt-get of the build dependencies, then the build, on a loaded machine


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


def doc_section(page, heading):
    """The text of one section of docs/PAGE, from its heading line to the
    next heading of the same or a higher level (a shell comment inside a
    code block is no heading)."""
    with open(os.path.join(ROOT, "docs", page)) as f:
        lines = f.read().splitlines()
    start = lines.index(heading)
    level = len(heading.split()[0])
    section, inside = [], False
    for line in lines[start + 1:]:
        if line.startswith("```"):
            inside = not inside
        elif not inside and re.match(r"#{1,%d} " % level, line):
            break
        section.append(line)
    return "\n".join([heading] + section) + "\n"


def code_lines(section):
    """The lines of a section's fenced code blocks."""
    lines, inside = [], False
    for line in section.splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside:
            lines.append(line)
    return lines


def documented_compose():
    """operations.md's docker-compose commands, as {files and profile: (up,
    down)}: each up has its teardown with the same files and profile."""
    commands = [shlex.split(l, comments=True) for l in code_lines(doc_section("operations.md", "### Compose"))
                if l.startswith("docker-compose ")]
    ups = {tuple(c[:-2]): c for c in commands if c[-2:] == ["up", "-d"]}
    downs = {tuple(c[:-2]): c for c in commands if c[-2:] == ["down", "-v"]}
    assert set(ups) == set(downs) and len(ups) == 2, commands
    return {key: (ups[key], downs[key]) for key in ups}


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


# A fresh Debian 12 machine (the base image) that has `make` and none of
# the build dependencies: `make deb` as a user other than root stops and
# prints the line to run as root; as root it installs them and builds.
FRESH_MACHINE = r"""
set -eu
apt-get update -qq
apt-get install -y -qq --no-install-recommends make >/dev/null
for tool in dpkg-buildpackage dpkg-checkbuilddeps pg_config gcc dh; do
    if command -v "$tool" >/dev/null; then echo "not a fresh machine: $tool is there"; exit 3; fi
done
useradd --create-home someone
cp -a /work/bothy /home/someone/bothy && chown -R someone /home/someone/bothy
if (cd /home/someone/bothy && runuser -u someone -- make deb) >/work/as-user.log 2>&1; then exit 4; fi
cd /work/bothy && make deb
"""


def fresh_copy(work):
    """What a fresh clone holds, as the working tree has it: the tracked
    files and the new ones git does not ignore; nothing built."""
    names = run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT).stdout.split("\0")
    names = sorted({n for n in names if n and os.path.lexists(os.path.join(ROOT, n))})
    dest = os.path.join(work, "bothy")
    os.makedirs(dest)
    tar = subprocess.run(["tar", "-C", ROOT, "--null", "-T", "-", "-cf", "-"], input="\0".join(names).encode(),
                         capture_output=True, check=True).stdout
    subprocess.run(["tar", "-C", dest, "-xf", "-"], input=tar, check=True)
    return dest


@pytest.fixture(scope="session")
def images(timing):
    """The packages made by `make deb` on a fresh machine, and the images
    built from them; their sizes printed.  Yields the packages' folder;
    what `make deb` printed is in REPORT_DEB."""
    ensure_dockerd()
    t0 = time.monotonic()
    run(os.path.join(ROOT, "images", "base", "build"), "debian:bookworm-slim")
    work = tempfile.mkdtemp(prefix="bothy-deb-")
    try:
        fresh_copy(work)
        t1 = time.monotonic()
        r = run("docker", "run", "--rm", "-v", "%s:/work" % work, "debian:bookworm-slim", "bash", "-c", FRESH_MACHINE,
                timeout=DEB_TIMEOUT_S)
        with open(os.path.join(work, "as-user.log")) as f:
            MAKE_DEB.update(root=r.stdout + r.stderr, user=f.read())
        debdir = os.path.join(work, "bothy", "build", "deb")
        t2 = time.monotonic()
        r = run(os.path.join(ROOT, "images", "build"), debdir, cwd=ROOT)
        REPORT.append("base %.0f s, make deb on a fresh machine %.0f s, images %.0f s"
                      % (t1 - t0, t2 - t1, time.monotonic() - t2))
        REPORT.extend(r.stdout.splitlines())
        yield debdir
    finally:
        shutil.rmtree(work, ignore_errors=True)


# what `make deb` printed on the fresh machine: as root, and as a user
MAKE_DEB = {}


def set_line(text, key, value):
    """The .env edit an operator makes (`editor .env`): KEY's line of
    .env.example given another value; the line must be there."""
    new, n = re.subn(r"^%s=.*$" % key, "%s=%s" % (key, value), text, flags=re.M)
    assert n == 1, "%s is not a line of .env.example" % key
    return new


class Stack:
    """One Compose project in a copy of compose/, brought up and down with
    the commands of operations.md for FILES (the -f and --profile part:
    () for compose.yaml alone).  Its .env is .env.example with the
    passwords and the edge's port changed, nothing else."""

    def __init__(self, files):
        self.up_command, self.down_command = documented_compose()[("docker-compose",) + tuple(files)]
        self.dir = tempfile.mkdtemp(prefix="bothy-compose-")
        shutil.copytree(os.path.join(ROOT, "compose"), os.path.join(self.dir, "compose"))
        self.project_dir = os.path.join(self.dir, "compose")
        self.project = "bothytest%d%s" % (os.getpid(), "multi" if files else "one")
        self.port = free_port()
        self.app_password = secrets.token_urlsafe(18)
        with open(os.path.join(self.project_dir, ".env.example")) as f:
            env = f.read()
        env = set_line(env, "BOTHY_DB_GATEWAY_PASSWORD", secrets.token_urlsafe(18))
        env = set_line(env, "BOTHY_DB_APP_PASSWORD", self.app_password)
        env = set_line(env, "BOTHY_EDGE_PORT", str(self.port))
        with open(os.path.join(self.project_dir, ".env"), "w") as f:
            f.write(env)
        self.url = "http://127.0.0.1:%d" % self.port
        self.ws = "ws://127.0.0.1:%d" % self.port
        self.env = {**os.environ, "COMPOSE_PROJECT_NAME": self.project}

    def documented(self, command, timeout):
        return run(*command, cwd=self.project_dir, env=self.env, timeout=timeout)

    def compose(self, *args, timeout=600, check=True):
        """docker-compose with the files and profile of the documented up."""
        return run(*self.up_command[:-2], *args, cwd=self.project_dir, env=self.env, timeout=timeout, check=check)

    def container(self, service):
        return "%s_%s_1" % (self.project, service)

    def health(self, service):
        r = run("docker", "inspect", "-f", "{{.State.Health.Status}}", self.container(service), check=False)
        return r.stdout.strip()

    def up(self, services=("db", "node", "node-2")):
        self.documented(self.up_command, timeout=UP_TIMEOUT_S + 60)
        for service in services:
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
        """The documented teardown; what it left, removed after it."""
        try:
            self.documented(self.down_command, timeout=120)
        finally:
            self.compose("down", "-v", "--remove-orphans", timeout=120, check=False)
            shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def stack(images):
    """The overlay: two nodes behind the hashing edge (profile direct)."""
    s = Stack(["-f", "compose.yaml", "-f", "compose.multi-node.yaml", "--profile", "direct"])
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
