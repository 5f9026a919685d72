"""`bothy-gateway --version` and `bothy-host --version`: each prints its
name and the release, and the release is bothy.control's default_version
(the one place it is numbered: gateway.mk and host.mk pass it as a -D)."""
import os
import re
import subprocess

from conftest import GATEWAY, ROOT

# as test/host/conftest.py finds it: BOTHY_HOST, the work directory's copy, the tree's
HOST = os.environ.get("BOTHY_HOST") or next(
    p for p in (os.path.join(ROOT, "bin", "bothy-host"), os.path.join(ROOT, "src", "host", "bothy-host"))
    if os.path.exists(p) or p.endswith(os.path.join("src", "host", "bothy-host")))


def release():
    with open(os.path.join(ROOT, "bothy.control")) as f:
        found = re.findall(r"^default_version = '([0-9]+\.[0-9]+\.[0-9]+)'$", f.read(), re.M)
    assert len(found) == 1, found
    return found[0]


def run(*args):
    return subprocess.run(list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=10)


def test_each_daemon_prints_its_name_and_the_release():
    for program, name in ((GATEWAY, "bothy-gateway"), (HOST, "bothy-host")):
        r = run(program, "--version")
        assert (r.returncode, r.stdout, r.stderr) == (0, "%s %s\n" % (name, release()), ""), program
    r = run(GATEWAY, "--version", "serve")
    assert r.returncode == 2 and "--version takes no argument" in r.stderr
    assert "  --version " in run(GATEWAY, "--help").stdout


def test_the_docs_name_the_same_release():
    docs = os.path.join(ROOT, "docs")
    wanted = {"gateway.md": "`bothy-gateway %s`", "bothy-gateway.1": '"bothy-gateway %s"',
              "host.md": "`bothy-host %s`", "bothy-host.1": '"bothy-host %s"'}
    for page, text in wanted.items():
        with open(os.path.join(docs, page)) as f:
            assert text % release() in f.read(), page
