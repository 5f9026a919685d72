"""The gateway's rooms keep their walls (docs/development.md, "Rooms"): the
core includes only the core and src/common; keys/ only itself, the core
and src/common; a route (clients/, and later terminal/) only itself, the
core, keys/ and src/common, never another route; and only main.c, at the
top of src/gateway/, wires the rooms together.  A rule nobody checks
decays: a violating #include fails here, naming the file and the line.

Needs no database.  The sources are read from BOTHY_SRC_DIR (a copy of
src/gateway's tree that test/run-all makes), src/common's headers from
beside it.
"""
import os
import re

import pytest

# The rooms every other room may use; every other directory is a route.
SHARED = {"core": {"core"}, "keys": {"core", "keys"}}
# The one file at the top: main.c wires the rooms (and may include any).
TOP = {"main.c"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


@pytest.fixture(scope="module")
def tree():
    where = os.environ.get("BOTHY_SRC_DIR")
    if not where:
        pytest.fail("BOTHY_SRC_DIR is not set: it must name a copy of the tree of src/gateway")
    common = os.path.join(os.path.dirname(where), "common")
    if not os.path.isdir(os.path.join(where, "core")) or not os.path.isdir(common):
        pytest.fail("BOTHY_SRC_DIR=%s has no core/, or no src/common beside it" % where)
    files = {}
    for top, _, names in os.walk(where):
        for name in names:
            if name.endswith((".c", ".h")):
                path = os.path.join(top, name)
                with open(path) as f:
                    files[os.path.relpath(path, where)] = f.read()
    return files, {n for n in os.listdir(common) if n.endswith(".h")}


def allowed(room):
    """The rooms whose headers a file of room may include."""
    if room in SHARED:
        return SHARED[room]
    return {"core", "keys", room}


def violations(files, common):
    found = []
    for path, text in sorted(files.items()):
        room = os.path.dirname(path)
        for m in INCLUDE.finditer(text):
            target = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            where = "%s:%d: #include \"%s\"" % (path, line, target)
            if "/" not in target:
                if target not in common:
                    found.append(where + ": not a header of src/common; name its room (\"core/%s\")"
                                 % target)
                continue
            their = os.path.dirname(target)
            if their + "/" + os.path.basename(target) not in files or "/" in their:
                found.append(where + ": no such header")
            elif room == "":
                continue            # main.c: the wiring sees every room
            elif their not in allowed(room):
                found.append(where + ": %s/ may include only %s and src/common"
                             % (room, ", ".join(r + "/" for r in sorted(allowed(room)))))
    return found


def test_only_main_c_is_at_the_top(tree):
    files, _ = tree
    top = {p for p in files if os.path.dirname(p) == ""}
    assert top == TOP


def test_the_rooms_are_there(tree):
    files, _ = tree
    rooms = {os.path.dirname(p) for p in files} - {""}
    assert {"core", "keys", "clients"} <= rooms
    assert all("/" not in r for r in rooms), "a room within a room: %s" % sorted(rooms)


def test_no_room_includes_what_it_may_not(tree):
    files, common = tree
    includes = sum(len(INCLUDE.findall(t)) for p, t in files.items() if p not in TOP)
    assert includes > 200, "too few includes found: the test reads the wrong tree"
    assert violations(files, common) == []


def test_the_check_catches_each_kind_of_violation(tree):
    """The rules above on a few planted lines: each must be caught."""
    files, common = tree
    planted = dict(files)
    planted["core/x.c"] = '#include "clients/client.h"\n#include "keys/token.h"\n'
    planted["keys/x.c"] = '#include "clients/hub.h"\n'
    planted["clients/x.c"] = '#include "terminal/relay.h"\n#include "conn.h"\n'
    planted["terminal/relay.h"] = '#include "clients/session.h"\n#include "core/conn.h"\n'
    found = violations(planted, common)
    assert [f.split(":")[0] for f in found] == [
        "clients/x.c", "clients/x.c", "core/x.c", "core/x.c", "keys/x.c", "terminal/relay.h"], found
