"""The three Debian packages alone, installed into a clean Debian 12 root
(a container of the debootstrapped base, not this machine): the steps of
docs/operations.md (test/compose/install-from-packages) bring up
PostgreSQL with the extension, two nodes as the user bothy and the edge;
then a host paired by bothy-host as the system user bothy-host that its
package made, and a shell of that user opened through the edge."""
import os
import subprocess

import pytest

from conftest import free_port, new_id, poll_until, run, shell_through_the_edge

HERE = os.path.dirname(os.path.abspath(__file__))
INSTALL_TIMEOUT_S = 600     # apt-get of PostgreSQL and nginx from Debian's mirror, on a loaded machine


class Machine:
    def __init__(self, debdir):
        self.name = "bothy-packages-%d" % os.getpid()
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.ws = "ws://127.0.0.1:%d" % self.port
        run("docker", "run", "-d", "--name", self.name, "-p", "127.0.0.1:%d:8080" % self.port,
            "-v", "%s:/debs:ro" % debdir,
            "-v", "%s:/install-from-packages:ro" % os.path.join(HERE, "install-from-packages"),
            "debian:bookworm-slim", "/install-from-packages")

    def logs(self):
        return subprocess.run(["docker", "logs", self.name], capture_output=True, text=True).stdout

    def running(self):
        return run("docker", "ps", "-q", "-f", "name=" + self.name).stdout.strip() != ""

    def ready(self):
        assert self.running(), "the install stopped:\n" + \
            subprocess.run(["docker", "logs", self.name], capture_output=True, text=True).stderr[-3000:]
        return "ready" in self.logs().split()

    def sh(self, *args, user=None):
        prefix = ["runuser", "-u", user, "--"] if user else []
        return run("docker", "exec", self.name, *prefix, *args).stdout

    def sql(self, query):
        return self.sh("psql", "-X", "-qtA", "-v", "ON_ERROR_STOP=1", "-d", "app", "-c",
                       "SET ROLE application", "-c", query, user="postgres").split()


@pytest.fixture(scope="module")
def machine(images):
    m = Machine(images)
    try:
        poll_until(m.ready, INSTALL_TIMEOUT_S, "installed and running", interval=2)
        yield m
    finally:
        run("docker", "rm", "-f", m.name, check=False)


def test_the_packages_alone_pair_a_host_and_open_a_shell(machine):
    m = machine
    # the users and the units the packages brought
    assert m.sh("id", "-un", user="bothy").strip() == "bothy"
    assert m.sh("getent", "passwd", "bothy-host").split(":")[5:] == ["/var/lib/bothy-host", "/bin/bash\n"]
    # the preload step printed, not done: the server's own configuration untouched
    printed = m.sh("cat", "/var/log/bothy-install.log")
    assert "shared_preload_libraries = 'bothy'" in printed and "CREATE EXTENSION bothy" in printed, printed
    assert "bothy" not in m.sh("cat", "/etc/postgresql/15/main/postgresql.conf")
    # the key store and the file with the database password, as the node requires them
    assert m.sh("stat", "-c", "%U %G %a", "/var/lib/bothy/keys", "/etc/bothy/gateway.env").split("\n")[:2] == \
        ["bothy bothy 700", "root bothy 640"]
    assert m.sh("stat", "-c", "%U %a", "/var/lib/bothy-host").strip() == "bothy-host 700"
    units = m.sh("ls", "/lib/systemd/system").split()
    assert {"bothy-gateway@.service", "bothy-edge.service", "bothy-host.service"} <= set(units)
    for port in ("8081", "8082"):
        assert m.sh("env", "BOTHY_WAIT_READY_S=0", "/usr/lib/bothy/bothy-wait-ready", "127.0.0.1:" + port) == ""

    person = new_id()
    token = m.sh("bothy-gateway", "token", "person", "--person", person, "--device", new_id(),
                 "--keys", "/var/lib/bothy/keys", user="bothy").strip()
    host, code = m.sql("SELECT host || ' ' || pairing_code FROM bothy.terminal_host_register('%s', 'pkg')" % person)
    # bothy-host.service's pairing step and its ExecStart, as its user
    fingerprint = m.sh("bothy-host", "pair", "--server", "http://127.0.0.1:8080", "--host", host, "--code", code,
                       "--key", "/var/lib/bothy-host/host.key", user="bothy-host").strip()
    assert m.sql("SELECT bothy.terminal_host_confirm('%s', '%s')" % (host, fingerprint)) == ["active"]
    run("docker", "exec", "-d", m.name, "runuser", "-u", "bothy-host", "--", "bothy-host", "run",
        "--server", "http://127.0.0.1:8080", "--key", "/var/lib/bothy-host/host.key")

    shell_through_the_edge(m, token, host)


def test_lintian_reports_no_error_no_warning_and_full_hardening(images):
    changes = [f for f in os.listdir(images) if f.endswith(".changes")]
    assert len(changes) == 1, changes
    r = subprocess.run(["lintian", "--fail-on", "error,warning", "--display-info", os.path.join(images, changes[0])],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert not [line for line in r.stdout.splitlines() if line.startswith(("E: ", "W: "))], r.stdout
    # the daemons built with Debian's hardening flags (fortify, relro, bindnow)
    assert not [line for line in r.stdout.splitlines() if ": hardening-" in line], r.stdout
