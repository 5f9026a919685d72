"""bothy-host builds from src/common and itself (docs/development.md,
"Layout"): a host service must not need the gateway's rooms to build.  Every
#include of src/host names a header of src/host ("host/ring.h") or of
src/common by its bare name ("logline.h"), and host.mk names no file or
include path under src/gateway.  A rule nobody checks decays: a violation
fails here, naming the file and the line.

Needs no process.  The sources are read from src/host and src/common of
BOTHY_ROOT (test/run-all copies both, host.mk included).
"""
import os
import re

import pytest

from conftest import ROOT

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# a path of the gateway's tree, as a build rule or a flag would spell it
GATEWAY_PATH = re.compile(r"\bsrc/gateway\b")


@pytest.fixture(scope="module")
def ground():
    host = os.path.join(ROOT, "src", "host")
    common = os.path.join(ROOT, "src", "common")
    if not os.path.isfile(os.path.join(host, "host.mk")) or not os.path.isdir(common):
        pytest.fail("no src/host/host.mk or src/common under %s: a check that cannot see "
                    "the sources checks nothing" % ROOT)
    files = {}
    for name in sorted(os.listdir(host)):
        if name.endswith((".c", ".h", ".mk")):
            with open(os.path.join(host, name)) as f:
                files[name] = f.read()
    return files, {n for n in os.listdir(common) if n.endswith(".h")}


def violations(files, common):
    """Each include or build path of src/host that leaves src/host and
    src/common, as "file:line: what: why"."""
    found = []
    for name, text in sorted(files.items()):
        if name.endswith(".mk"):
            for number, line in enumerate(text.split("\n"), 1):
                if GATEWAY_PATH.search(line):
                    found.append("%s:%d: %s: host.mk names a path of the gateway; link "
                                 "src/common's copy" % (name, number, line.strip()))
            continue
        for m in INCLUDE.finditer(text):
            target = m.group(1)
            where = "%s:%d: #include \"%s\"" % (name, text.count("\n", 0, m.start()) + 1, target)
            if "/" not in target:
                if target not in common:
                    found.append(where + ": not a header of src/common")
            elif not (target.startswith("host/") and target[5:] in files and "/" not in target[5:]):
                found.append(where + ": src/host may include only host/ and src/common")
    return found


def test_src_host_builds_from_src_common_and_itself(ground):
    files, common = ground
    includes = sum(len(INCLUDE.findall(t)) for n, t in files.items() if not n.endswith(".mk"))
    assert includes > 40, "too few includes found: the test reads the wrong tree"
    assert {"logline.h", "base64url.h", "intparse.h", "uuid.h"} <= common, sorted(common)
    assert violations(files, common) == []


def test_the_check_catches_each_kind_of_violation(ground):
    """The rule above on a few planted lines: each must be caught, and the
    lines that keep to it must not be."""
    files, common = ground
    planted = dict(files)
    planted["x.c"] = ('#include "core/log.h"\n#include "keys/base64url.h"\n'
                      '#include "gateway/core/config.h"\n#include "log.h"\n'
                      '#include "host/nosuch.h"\n#include "../gateway/core/log.h"\n'
                      '#include "host/ring.h"\n#include "logline.h"\n')
    planted["host.mk"] = files["host.mk"] + (
        "\nHOST_SHARED += src/gateway/core/config.c\nHOST_INCLUDES += -iquote src/gateway\n")
    found = violations(planted, common)
    assert [f.split(": ")[0] for f in found] == [
        "host.mk:%d" % (files["host.mk"].count("\n") + 2),
        "host.mk:%d" % (files["host.mk"].count("\n") + 3),
        'x.c:1', 'x.c:2', 'x.c:3', 'x.c:4', 'x.c:5', 'x.c:6'], found
