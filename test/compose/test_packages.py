"""The three Debian packages: `make deb` on a fresh machine (the fixture
`images`), and the packages alone installed into a clean Debian 12 root
(a container of the debootstrapped base, not this machine): the steps of
docs/operations.md (test/compose/install-from-packages) with the preload
the package printed and the daemons run by the lines of "Without
systemd" bring up PostgreSQL with the extension, two nodes as the user
bothy and the edge; then a host paired by bothy-host as the system user
bothy-host that its package made, and a shell of that user opened
through the edge.  Every example environment file reads alike in sh and
in systemd."""
import glob
import os
import re
import subprocess
import tempfile

import pytest

from conftest import MAKE_DEB, ROOT, code_lines, doc_section, free_port, new_id, poll_until, run, \
    shell_through_the_edge

HERE = os.path.dirname(os.path.abspath(__file__))
INSTALL_TIMEOUT_S = 600     # apt-get of PostgreSQL and nginx from Debian's mirror, on a loaded machine


def recipes():
    """The lines of operations.md "Without systemd", one per daemon."""
    lines = code_lines(doc_section("operations.md", "## Without systemd"))
    assert len(lines) == 3, lines
    return lines


class Machine:
    def __init__(self, debdir):
        self.name = "bothy-packages-%d" % os.getpid()
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.ws = "ws://127.0.0.1:%d" % self.port
        fd, self.recipes = tempfile.mkstemp(prefix="bothy-recipes-")
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(recipes()) + "\n")
        os.chmod(self.recipes, 0o644)
        run("docker", "run", "-d", "--name", self.name, "-p", "127.0.0.1:%d:8080" % self.port,
            "-v", "%s:/debs:ro" % debdir, "-v", "%s:/recipes:ro" % self.recipes,
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
        os.unlink(m.recipes)


def test_make_deb_installs_what_a_fresh_machine_misses(images):
    """On a machine with make and none of the build dependencies (the
    fixture checked), `make deb` as root installed them and made the three
    packages; as another user it stopped with the line operations.md
    gives.  Without debian/install-build-deps dpkg-buildpackage is not
    even there."""
    names = sorted(re.sub(r"_.*", "", f) for f in os.listdir(images) if f.endswith(".deb") and "dbgsym" not in f)
    assert names == ["bothy-gateway", "bothy-host", "postgresql-15-bothy"]
    assert "installing the build dependencies of debian/control" in MAKE_DEB["root"]
    line = "sudo apt-get update && sudo apt-get build-dep -y /home/someone/bothy/"
    assert line in MAKE_DEB["user"], MAKE_DEB["user"]
    assert "`sudo apt-get update && sudo apt-get build-dep -y\n<the tree>/`" in \
        doc_section("operations.md", "### Debian packages")


def test_the_packages_alone_pair_a_host_and_open_a_shell(machine):
    m = machine
    # the users and the units the packages brought
    assert m.sh("id", "-un", user="bothy").strip() == "bothy"
    assert m.sh("getent", "passwd", "bothy-host").split(":")[5:] == ["/var/lib/bothy-host", "/bin/bash\n"]
    # the preload step printed, not done: the server's own configuration
    # untouched; the file it names and its settings are the docs'
    printed = m.sh("cat", "/var/log/bothy-install.txt")
    assert "shared_preload_libraries = 'bothy'" in printed and "CREATE EXTENSION bothy" in printed, printed
    assert "createdb app" in printed and "postgresql.conf" not in printed, printed
    assert "bothy" not in m.sh("cat", "/etc/postgresql/15/main/postgresql.conf")
    documented = code_lines(doc_section("operations.md", "### Debian packages"))
    assert "cat >/etc/postgresql/15/main/conf.d/bothy.conf <<'CONF'" in documented
    assert "/etc/postgresql/15/main/conf.d/bothy.conf:" in printed
    settings = re.findall(r"^    ([a-z_.]+ = '.*')$", printed, re.M)
    assert settings and set(settings) <= set(documented), (settings, documented)
    assert [l for l in documented if l.startswith("runuser -u postgres -- createdb app")]
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
    # bothy-host.service's ExecStart as operations.md "Without systemd" runs it
    m.sh("sed", "-i", "s|^BOTHY_HOST_SERVER=.*|BOTHY_HOST_SERVER=http://127.0.0.1:8080|", "/etc/bothy/host.env")
    (host_line,) = [l for l in recipes() if "/etc/bothy/host.env" in l]
    run("docker", "exec", "-d", m.name, "bash", "-c", host_line)

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


# --- the example environment files: one reading in sh and in systemd -----

def systemd_reading(path):
    """The variables systemd's EnvironmentFile= takes from PATH, for the
    forms whose reading systemd.exec(5) and POSIX sh agree on: a bare
    value without blanks, quotes, backslashes or $, or a single-quoted
    one.  Any other value line fails: it is read differently by the two
    (edge.env's unquoted list was a command to sh)."""
    found = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith(("#", ";")):
                continue
            m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)=(?:([^\s'\"\\$`;&|<>()]*)|'([^']*)')", line)
            assert m, "%s:%d: neither a bare nor a single-quoted value: %s" % (path, number, line)
            found[m.group(1)] = m.group(2) if m.group(2) is not None else m.group(3)
    return found


def sh_reading(path):
    """What `set -a; . FILE; set +a` exports in Debian's sh (dash), beyond
    an empty environment's own variables."""
    def exported(script):
        r = subprocess.run(["env", "-i", "sh", "-c", script + "; env -0"], capture_output=True, text=True)
        assert r.returncode == 0 and r.stderr == "", (path, r.returncode, r.stderr)
        return dict(item.split("=", 1) for item in r.stdout.split("\0") if item)
    before = exported(":")
    after = exported("set -a; . %s; set +a" % path)
    return {k: v for k, v in after.items() if before.get(k) != v}


@pytest.mark.parametrize("name", sorted(os.path.basename(p) for p in
                                        glob.glob(os.path.join(ROOT, "deploy", "systemd", "*.env.example"))))
def test_each_env_example_reads_alike_in_sh_and_systemd(name):
    path = os.path.join(ROOT, "deploy", "systemd", name)
    expected = systemd_reading(path)
    assert expected, "no variable in " + name
    assert sh_reading(path) == expected
