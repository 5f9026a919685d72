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


# Files that are not in the repository, which a comment must not send a
# reader to (issue 26): comments cite docs/ and the rulings by their IDs
# (D-M7-17-n, D-M2-47-n).  The names are built from parts, so this file
# does not trip its own check.
OUTSIDE = tuple(name + ".md" for name in ("TERMINAL", "DESIGN", "STYLE"))
# What is scanned: every part of src/ that test/run-all copies beside
# BOTHY_SRC_DIR, and the tests themselves (test/, and the pg_regress pairs
# sql/ and expected/ beside it).
SOURCE_DIRS = ("gateway", "common", "host", "extension", "sql")
TEST_DIRS = ("test", "sql", "expected")


def outside_citations(files):
    """file:line: name for every line of files ({path: text}) that cites one."""
    found = []
    for path, text in sorted(files.items()):
        for number, line in enumerate(text.split("\n"), 1):
            found.extend("%s:%d: %s" % (path, number, name) for name in OUTSIDE if name in line)
    return found


def text_files(top, label):
    """{label/relative path: text} for every text file under top (binaries,
    such as the unit tests a build left in test/unit, and caches are skipped)."""
    files = {}
    for where, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", "node_modules")]
        for name in names:
            path = os.path.join(where, name)
            with open(path, "rb") as f:
                data = f.read()
            if b"\0" in data:
                continue
            files[os.path.join(label, os.path.relpath(path, top))] = data.decode("utf-8", "replace")
    return files


def test_no_comment_cites_a_file_outside_the_repository(tree):
    src = os.path.dirname(os.path.abspath(os.environ["BOTHY_SRC_DIR"]))
    # this file is test/gateway/core/test_rooms.py
    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
    files = {}
    for part in SOURCE_DIRS:
        found = text_files(os.path.join(src, part), os.path.join("src", part))
        assert found, "src/%s has no files: the test reads the wrong tree" % part
        files.update(found)
    for part in TEST_DIRS:
        files.update(text_files(os.path.join(root, part), part))
    assert "test/gateway/core/test_rooms.py" in files and "expected/terminal_hosts.out" in files
    assert sum(p.startswith("src/extension/") for p in files) > 10
    assert outside_citations(files) == []
    # the check itself, on planted lines in a C comment, SQL and a docstring
    planted = {"src/host/x.c": "/* the wire (%s) */\n" % OUTSIDE[0],
               "src/sql/x.sql": "--\n-- modes (%s, \"Modes\")\n" % OUTSIDE[1],
               "test/x.py": '"""x\n\n%s says"""\n' % OUTSIDE[2]}
    assert outside_citations(planted) == [
        "src/host/x.c:1: " + OUTSIDE[0], "src/sql/x.sql:2: " + OUTSIDE[1],
        "test/x.py:3: " + OUTSIDE[2]]
