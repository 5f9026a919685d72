"""Real nginx in front of real gateway nodes, running the SHIPPED edge
(deploy/nginx/bothy-edge.conf) with only its listen line and its upstreams'
server lines changed (the file's header documents both).

nginx runs as the user the tests run as, in the foreground, with its pid,
temp paths and logs under a directory of BOTHY_TEST_WORK, on a free
127.0.0.1 port, with one worker process (or `workers`; the listen line then
has reuseport, so the kernel spreads connections over the workers).  The
fixture `edge` starts it and stops it at teardown, also when the test
failed.  A test of a trap the shipped file closes may run it with a
`change` (a function of the generated text) that opens the trap again, to
show the trap is real.
"""
import os
import re
import signal
import socket
import subprocess
import tempfile

import pytest

from conftest import ROOT, WORK, free_port, poll_until

NGINX = os.environ.get("BOTHY_NGINX", "/usr/sbin/nginx")
SHIPPED = os.path.join(ROOT, "deploy", "nginx", "bothy-edge.conf")

LISTEN = re.compile(r"^(\s*)listen\s+[^;]+;\s*$")
SERVER = re.compile(r"^(\s*)server\s+(\S+)((?:\s+[^;\s]+)*)\s*;\s*$")
UPSTREAM = re.compile(r"^\s*upstream\s+(bothy_gateways|bothy_terminal_stream)\s*\{\s*$")
UPSTREAMS = ("bothy_gateways", "bothy_terminal_stream")

# The test's own nginx.conf around the shipped file: everything a root-run
# Debian nginx would find in /etc/nginx/nginx.conf and /var/lib/nginx, here
# under the work directory.  The http-level access_log is the test's trap:
# the shipped server must turn it off.
MAIN_CONF = """\
daemon off;
master_process on;
worker_processes {workers};
pid {dir}/nginx.pid;
error_log {dir}/error.log notice;
events {{
    worker_connections 256;
}}
http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/temp/body;
    proxy_temp_path {dir}/temp/proxy;
    fastcgi_temp_path {dir}/temp/fastcgi;
    uwsgi_temp_path {dir}/temp/uwsgi;
    scgi_temp_path {dir}/temp/scgi;
    include {dir}/bothy-edge.conf;
}}
"""


def shipped_text():
    with open(SHIPPED) as f:
        return f.read()


def substitute(text, listen, nodes):
    """The shipped file with its one listen line set to `listen` and the
    server lines of each upstream replaced by one line per node address,
    each with the parameters of that upstream's first shipped line.  Every
    other line stays as shipped."""
    out, upstream, servers, listens = [], None, {}, 0
    for line in text.splitlines(keepends=True):
        m = UPSTREAM.match(line)
        if m:
            upstream = m.group(1)
            servers.setdefault(upstream, 0)
        elif upstream and line.strip() == "}":
            upstream = None
        m = SERVER.match(line) if upstream else None
        if m:
            if servers[upstream] == 0:
                out.extend("%sserver %s%s;\n" % (m.group(1), node, m.group(3)) for node in nodes)
            servers[upstream] += 1
            continue
        m = LISTEN.match(line)
        if m:
            listens += 1
            line = "%slisten %s;\n" % (m.group(1), listen)
        out.append(line)
    assert listens == 1, "the shipped edge must have exactly one listen line, found %d" % listens
    for name in UPSTREAMS:
        assert servers.get(name, 0) >= 1, "the shipped edge lists no server in upstream %s" % name
    return "".join(out)


class Edge:
    """One nginx master process (and its worker) serving the shipped edge."""

    def __init__(self, nodes, workers=1, change=None):
        self.dir = tempfile.mkdtemp(prefix="edge-", dir=WORK)
        os.mkdir(os.path.join(self.dir, "temp"))
        self.port = free_port()
        self.url = "ws://127.0.0.1:%d/gateway" % self.port
        self.ws_base = "ws://127.0.0.1:%d" % self.port
        self.http_url = "http://127.0.0.1:%d" % self.port
        self.conf = os.path.join(self.dir, "nginx.conf")
        listen = "127.0.0.1:%d%s" % (self.port, " reuseport" if workers > 1 else "")
        text = substitute(shipped_text(), listen, ["127.0.0.1:%d" % node.port for node in nodes])
        with open(os.path.join(self.dir, "bothy-edge.conf"), "w") as f:
            f.write(change(text) if change else text)
        with open(self.conf, "w") as f:
            f.write(MAIN_CONF.format(dir=self.dir, workers=workers))
        self.stderr_path = os.path.join(self.dir, "stderr.log")
        self.proc = None

    def start(self, timeout=10):
        self.stderr = open(self.stderr_path, "a")
        # -e: the log nginx writes before it has read the configuration
        # (Debian's compiled-in default is stderr, root's /var/log otherwise)
        self.proc = subprocess.Popen(
            [NGINX, "-p", self.dir, "-c", self.conf, "-e", os.path.join(self.dir, "error.log")],
            stdin=subprocess.DEVNULL, stdout=self.stderr, stderr=self.stderr)
        poll_until(self._accepts, timeout=timeout, what="nginx accepting")
        return self

    def _accepts(self):
        if self.proc.poll() is not None:
            raise AssertionError("nginx exited with %s: %s" % (self.proc.returncode, self.logs()))
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def logs(self):
        """Everything nginx wrote: the error log, the access log (which the
        shipped edge turns off) and its stderr."""
        text = ""
        for name in ("error.log", "access.log", "stderr.log"):
            path = os.path.join(self.dir, name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    text += f.read()
        return text

    def stop(self, timeout=10):
        """Fast shutdown (SIGTERM): open WebSocket connections would hold a
        graceful one (SIGQUIT) until they end."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()


@pytest.fixture
def edge():
    """edge(nodes, workers=1, change=None) starts nginx with the shipped edge
    in front of the given gateway nodes; every edge started is stopped after
    the test."""
    started = []

    def make(nodes, workers=1, change=None):
        e = Edge(nodes, workers, change)
        started.append(e)
        return e.start()
    yield make
    for e in started:
        e.stop()
