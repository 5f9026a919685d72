"""The multi-node recipe of deploy/ (D-M2-47-10, 20; docs/operations.md,
"Several nodes and the edge for terminals"): every systemd unit passes
`systemd-analyze verify` (in a root of its own, with the programs its
Exec lines name installed where the unit expects them), and a broken unit
does not, so the check means something; bothy-wait-ready waits for every
node's /readyz and gives up in time; and the edge unit's own nginx.conf
runs the shipped edge in front of real nodes, on 127.0.0.1 only.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from conftest import GATEWAY, ROOT, WORK, free_port, keys, poll_until  # noqa: F401  (keys is a fixture)
from edge import NGINX, substitute
from terminal_streams import tnodes, tpg  # noqa: F401  (fixtures)

DEPLOY = os.path.join(ROOT, "deploy")
UNITS = ["bothy-gateway.service", "bothy-gateway@.service", "bothy-edge.service", "bothy-host.service"]
WAIT_READY = os.path.join(DEPLOY, "systemd", "bothy-wait-ready")


def staged_install():
    """What `make install` puts in place, under a DESTDIR: test/run-all
    stages it into the work directory (ROOT/staged); a run of pytest on a
    checkout stages it here with the checkout's own Makefile."""
    staged = os.path.join(ROOT, "staged")
    if not os.path.isdir(staged):
        staged = tempfile.mkdtemp(prefix="staged-", dir=WORK)
        subprocess.run(["make", "-s", "install-gateway", "install-host", "DESTDIR=" + staged],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL, timeout=300)
    return staged


def unit_root():
    """A directory to verify the units under: what `make install` installs,
    the system's own units (so their dependencies resolve), ours in
    etc/systemd/system, and every other program their Exec lines name at
    that path (bothy-wait-ready from deploy/, the system's copied)."""
    root = tempfile.mkdtemp(prefix="units-", dir=WORK)
    shutil.copytree(staged_install(), root, symlinks=True, dirs_exist_ok=True)
    shutil.copytree("/usr/lib/systemd/system", os.path.join(root, "usr/lib/systemd/system"), symlinks=True)
    etc = os.path.join(root, "etc/systemd/system")
    os.makedirs(etc)
    ours = {"/usr/local/lib/bothy/bothy-wait-ready": WAIT_READY}
    for unit in UNITS:
        shutil.copy(os.path.join(DEPLOY, "systemd", unit), etc)
        with open(os.path.join(DEPLOY, "systemd", unit)) as f:
            for path in re.findall(r"^Exec\w+=[-@:+!]*(/\S+)", f.read(), re.M):
                target = os.path.join(root, path.lstrip("/"))
                if os.path.exists(target):
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy(ours.get(path, path), target)
    return root


def verify(root, unit):
    # the Documentation= pages are looked up with man(1), which knows no
    # --root: the installed pages' directory goes first on its path
    manpath = subprocess.run(["manpath"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True).stdout.strip()
    env = dict(os.environ, MANPATH=os.path.join(root, "usr/local/share/man") + ":" + manpath)
    r = subprocess.run(["systemd-analyze", "verify", "--root=" + root, unit], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    return r.returncode, r.stdout


def test_make_install_puts_both_programs_and_their_man_pages_in_place():
    staged = staged_install()
    for program in ("bothy-gateway", "bothy-host"):
        path = os.path.join(staged, "usr/local/bin", program)
        assert os.stat(path).st_mode & 0o777 == 0o755, path
        page = os.path.join(staged, "usr/local/share/man/man1", program + ".1")
        with open(page, "rb") as installed, open(os.path.join(ROOT, "docs", program + ".1"), "rb") as shipped:
            assert installed.read() == shipped.read(), page
        # man(1) finds it where make install put it, as `man bothy-host` will
        r = subprocess.run(["man", "-w", "1", program], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, env=dict(os.environ, MANPATH=os.path.join(staged, "usr/local/share/man")))
        assert (r.returncode, r.stdout.strip()) == (0, page), r.stdout


def test_every_unit_passes_systemd_analyze_verify():
    root = unit_root()
    results = {unit: verify(root, unit) for unit in
               ("bothy-gateway.service", "bothy-gateway@1.service", "bothy-gateway@2.service",
                "bothy-edge.service", "bothy-host.service")}
    assert results == {unit: (0, "") for unit in results}
    # the check is not vacuous: a misspelt key, or a program not installed, fails it
    etc = os.path.join(root, "etc/systemd/system")
    with open(os.path.join(etc, "bothy-edge.service")) as f:
        text = f.read()
    with open(os.path.join(etc, "broken-edge.service"), "w") as f:
        f.write(text.replace("NoNewPrivileges=yes", "NoNewPrivilege=yes"))
    with open(os.path.join(etc, "missing-edge.service"), "w") as f:
        f.write(text.replace("/usr/sbin/nginx", "/usr/sbin/nginx-missing"))
    code, out = verify(root, "broken-edge.service")
    assert "Unknown key" in out, out
    code, out = verify(root, "missing-edge.service")
    assert code != 0 and "not executable" in out, out


def test_the_units_share_the_hardening_and_the_edge_waits_for_both_nodes():
    def lines(unit):
        with open(os.path.join(DEPLOY, "systemd", unit)) as f:
            return [l.strip() for l in f if re.match(r"^[A-Z]\w*=", l)]
    hardening = [l for l in lines("bothy-gateway.service")
                 if l.split("=")[0] in ("NoNewPrivileges", "ProtectSystem", "ProtectHome", "PrivateTmp",
                                        "CapabilityBoundingSet", "AmbientCapabilities", "SystemCallFilter",
                                        "RestrictAddressFamilies", "MemoryDenyWriteExecute")]
    assert len(hardening) == 10
    for unit in ("bothy-gateway@.service", "bothy-edge.service"):
        assert all(l in lines(unit) for l in hardening), unit
    edge = lines("bothy-edge.service")
    nodes = ["bothy-gateway@1.service", "bothy-gateway@2.service"]
    for key in ("Wants", "PartOf"):
        assert "%s=%s" % (key, " ".join(nodes)) in edge, key
    assert any(l.startswith("After=") and all(n in l for n in nodes) for l in edge)
    assert "ExecStartPre=/usr/local/lib/bothy/bothy-wait-ready $BOTHY_EDGE_NODES" in edge
    assert "EnvironmentFile=/etc/bothy/gateway-%i.env" in lines("bothy-gateway@.service")


def wait_ready(*nodes, seconds=5):
    start = time.monotonic()
    r = subprocess.run([WAIT_READY, *nodes], env=dict(os.environ, BOTHY_WAIT_READY_S=str(seconds)),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=seconds + 10)
    return r.returncode, r.stderr, time.monotonic() - start


def test_wait_ready_waits_for_every_node(tnodes):
    a, b = tnodes(2)
    addr = ["127.0.0.1:%d" % n.port for n in (a, b)]
    assert wait_ready(*addr)[0] == 0
    nothing = "127.0.0.1:%d" % free_port()
    code, err, took = wait_ready(addr[0], nothing, seconds=2)
    assert code == 1 and 1 <= took < 5 and nothing not in err   # bash counts whole seconds
    assert wait_ready("no-port")[0] == 2
    # a node that becomes ready while it waits
    b.stop()
    waiting = subprocess.Popen([WAIT_READY, *addr], env=dict(os.environ, BOTHY_WAIT_READY_S="30"))
    time.sleep(1)
    assert waiting.poll() is None
    b.start()
    assert waiting.wait(timeout=30) == 0


def test_the_edge_units_nginx_conf_runs_the_shipped_edge(tnodes):
    """The unit's nginx.conf with its paths moved under a directory of the
    test (the unit's /run/bothy-edge, /tmp and /etc/bothy/edge), the edge's
    node lines set as edge.py does: nginx -t accepts it, and it serves."""
    nodes = tnodes(2)
    d = tempfile.mkdtemp(prefix="edge-unit-", dir=WORK)
    port = free_port()
    with open(os.path.join(DEPLOY, "nginx", "bothy-edge.conf")) as f:
        edge = substitute(f.read(), "127.0.0.1:%d" % port, ["127.0.0.1:%d" % n.port for n in nodes])
    with open(os.path.join(d, "bothy-edge.conf"), "w") as f:
        f.write(edge)
    with open(os.path.join(DEPLOY, "nginx", "bothy-edge-main.conf")) as f:
        main = f.read()
    assert "pid /run/bothy-edge/nginx.pid;" in main and "include /etc/bothy/edge/bothy-edge.conf;" in main
    main = (main.replace(" /tmp/", " %s/tmp-" % d).replace("/run/bothy-edge/", d + "/")
            .replace("/etc/bothy/edge/", d + "/").replace("worker_connections 65536", "worker_connections 512"))
    conf = os.path.join(d, "nginx.conf")
    with open(conf, "w") as f:
        f.write(main)
    test = subprocess.run([NGINX, "-t", "-c", conf, "-e", "stderr"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    assert test.returncode == 0, test.stdout
    proc = subprocess.Popen([NGINX, "-c", conf, "-e", "stderr"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        poll_until(lambda: _get(port, "/v1/presence") is not None, timeout=10, what="the edge")
        # through to a node (401: no token), and the per-node paths not served
        assert _get(port, "/v1/presence") == 401 and _get(port, "/readyz") == 404
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    assert err == ""                    # crit only: nothing logged


def _get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return None
