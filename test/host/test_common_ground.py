"""bothy-host builds from src/common and itself (docs/development.md,
"Layout"): a host service must not need the gateway's rooms to build.  Every
#include of src/host names a header of src/host ("host/ring.h") or of
src/common by its bare name ("logline.h"); an include in angle brackets
names a system header, never a room of the tree; src/common's own files
include only src/common and system headers (the host links them, so a
gateway header there would reach the host through them); and host.mk names
no file, include path, glob or variable of the gateway (only gateway.mk's
libwebsockets flags, GATEWAY_LWS_CFLAGS and GATEWAY_LWS_LIBS, found once
for both daemons).  A rule nobody checks decays: a violation fails here,
naming the file and the line.

Needs no process.  The sources are read from src/host and src/common of
BOTHY_ROOT (test/run-all copies both, host.mk included).
"""
import os
import re

import pytest

from conftest import ROOT

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
ANGLE = re.compile(r'^\s*#\s*include\s*<([^>]+)>', re.M)
# the tree's rooms: an angle include starting with one names a file of the
# tree, not of the system (<signal.h> is the system's, "signal.h" common's)
ROOMS = ("src", "gateway", "core", "clients", "terminal", "keys", "host", "common")
# what host.mk may not name, and why
MK_RULES = (
    (re.compile(r"(?:\bsrc/|\.\./)gateway\b"), "a path of the gateway; link src/common's copy"),
    (re.compile(r"\bsrc/[*%]"),
     "a glob over src's rooms reaches the gateway; name src/host or src/common"),
    (re.compile(r"\b(?:core|clients|terminal|keys)/"), "a room of the gateway"),
    (re.compile(r"\$[({]GATEWAY_(?!LWS_CFLAGS\b|LWS_LIBS\b)\w+"),
     "a variable of gateway.mk other than its libwebsockets flags"),
)


def read_dir(path, suffixes):
    files = {}
    for name in sorted(os.listdir(path)):
        if name.endswith(suffixes):
            with open(os.path.join(path, name)) as f:
                files[name] = f.read()
    return files


@pytest.fixture(scope="module")
def ground():
    host = os.path.join(ROOT, "src", "host")
    common = os.path.join(ROOT, "src", "common")
    if not os.path.isfile(os.path.join(host, "host.mk")) or not os.path.isdir(common):
        pytest.fail("no src/host/host.mk or src/common under %s: a check that cannot see "
                    "the sources checks nothing" % ROOT)
    return read_dir(host, (".c", ".h", ".mk")), read_dir(common, (".c", ".h"))


def line_of(text, at):
    return text.count("\n", 0, at) + 1


def angle_violations(name, text):
    found = []
    for m in ANGLE.finditer(text):
        target = m.group(1).strip()
        if ".." in target or target.split("/")[0] in ROOMS and "/" in target:
            found.append("%s:%d: #include <%s>: a file of the tree in angle brackets; "
                         "src/host and src/common include it with quotes or not at all"
                         % (name, line_of(text, m.start()), target))
    return found


def violations(files, common_files):
    """Each include or build path of src/host, and each include of
    src/common, that leaves src/host and src/common, as
    "file:line: what: why"."""
    common = {n for n in common_files if n.endswith(".h")}
    found = []
    for name, text in sorted(files.items()):
        if name.endswith(".mk"):
            for number, line in enumerate(text.split("\n"), 1):
                for rule, why in MK_RULES:
                    if rule.search(line):
                        found.append("%s:%d: %s: host.mk names %s"
                                     % (name, number, line.strip(), why))
                        break
            continue
        for m in INCLUDE.finditer(text):
            target = m.group(1)
            where = "%s:%d: #include \"%s\"" % (name, line_of(text, m.start()), target)
            if "/" not in target:
                if target not in common:
                    found.append(where + ": not a header of src/common")
            elif not (target.startswith("host/") and target[5:] in files and "/" not in target[5:]):
                found.append(where + ": src/host may include only host/ and src/common")
        found.extend(angle_violations(name, text))
    for name, text in sorted(common_files.items()):
        where_name = "common/" + name
        for m in INCLUDE.finditer(text):
            target = m.group(1)
            if "/" in target or target not in common:
                found.append("%s:%d: #include \"%s\": src/common may include only src/common "
                             "and system headers" % (where_name, line_of(text, m.start()), target))
        found.extend(angle_violations(where_name, text))
    return found


def test_src_host_builds_from_src_common_and_itself(ground):
    files, common_files = ground
    includes = sum(len(INCLUDE.findall(t)) for n, t in files.items() if not n.endswith(".mk"))
    assert includes > 40, "too few includes found: the test reads the wrong tree"
    assert sum(len(ANGLE.findall(t)) for t in files.values()) > 40, "too few system includes found"
    assert {"logline.h", "base64url.h", "intparse.h", "uuid.h", "logline.c"} <= set(common_files), \
        sorted(common_files)
    assert violations(files, common_files) == []


def test_the_check_catches_each_kind_of_violation(ground):
    """The rules above on a few planted lines: each must be caught, and the
    lines that keep to them must not be."""
    files, common_files = ground
    planted = dict(files)
    planted["x.c"] = ('#include "core/log.h"\n#include "keys/base64url.h"\n'
                      '#include "gateway/core/config.h"\n#include "log.h"\n'
                      '#include "host/nosuch.h"\n#include "../gateway/core/log.h"\n'
                      '#include "host/ring.h"\n#include "logline.h"\n'
                      '#include <core/config.h>\n#include <gateway/core/log.h>\n'
                      '#include <../gateway/core/log.h>\n#include <host/ring.h>\n'
                      '#include <signal.h>\n#include <sys/types.h>\n#include <arpa/inet.h>\n')
    mk = files["host.mk"]
    planted["host.mk"] = mk + (
        "\nHOST_SHARED += src/gateway/core/config.c\nHOST_INCLUDES += -iquote src/gateway\n"
        "HOST_SRCS += $(GATEWAY_SRCS)\nHOST_SRCS += $(GATEWAY_CRYPTO_SRCS)\n"
        "HOST_HDRS += ${GATEWAY_HDRS}\nHOST_DEPS = $(GATEWAY_BIN)\n"
        "HOST_INCLUDES += -iquote ../gateway\nHOST_SRCS += $(wildcard src/*/core/*.c)\n"
        "HOST_CFLAGS += $(GATEWAY_LWS_CFLAGS)\nHOST_LIBS += $(GATEWAY_LWS_LIBS)\n")
    planted_common = dict(common_files)
    planted_common["zz.h"] = ('#include "gateway/core/x.h"\n#include "core/conn.h"\n'
                              '#include "nosuch.h"\n#include <core/x.h>\n'
                              '#include "uuid.h"\n#include <stdint.h>\n')
    found = violations(planted, planted_common)
    base = mk.count("\n") + 1
    assert [f.split(": ")[0] for f in found] == (
        ["host.mk:%d" % (base + n) for n in range(1, 9)] +
        ['x.c:%d' % n for n in range(1, 7)] + ['x.c:%d' % n for n in range(9, 13)] +
        ['common/zz.h:1', 'common/zz.h:2', 'common/zz.h:3', 'common/zz.h:4']), found
