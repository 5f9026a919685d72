"""The gateway's rooms keep their walls (docs/development.md, "The gateway's
rooms"): the core includes only the core and src/common; keys/ only itself,
the core and src/common; a route (clients/, terminal/) only itself, the
core, keys/ and src/common, never another route; and only main.c, at the
top of src/gateway/, wires the rooms together.  A room is a path's first
component; only the terminal's wings (control/, relay/, rest/) nest.
Inside the terminal the wings keep walls of their own (issue 26): the top
(route.c/.h, tail.c/.h) sees the wings, the shared ground sees only
itself, a wing sees itself and the ground (control/ also the relay's
contract relay/relay.h, rest/ also control/presence.h), and no wing or
ground file includes route.h or tail.h.  A rule nobody checks decays: a
violating #include fails here, naming the file, the line and the rule.

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
# The only rooms that hold folders: the terminal's wings.
WINGS = {"terminal": {"control", "relay", "rest"}}
# Within terminal/: the files at its top (route sees every wing; tail is
# handed its calls at init and sees only the ground), and the one header of
# another wing each wing may include.
TERMINAL_TOP = {"terminal/route.c", "terminal/route.h", "terminal/tail.c", "terminal/tail.h"}
TERMINAL_TAIL = {"terminal/tail.c", "terminal/tail.h"}
ALLOW = {"control": {"terminal/relay/relay.h"}, "rest": {"terminal/control/presence.h"}}
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


def room_of(path):
    """A path's room: its first component ("" for main.c at the top)."""
    return path.split("/")[0] if "/" in path else ""


def includes(text):
    """(line, target) of every quoted include of text."""
    for m in INCLUDE.finditer(text):
        yield text.count("\n", 0, m.start()) + 1, m.group(1)


def violations(files, common):
    found = []
    for path, text in sorted(files.items()):
        room = room_of(path)
        for line, target in includes(text):
            where = "%s:%d: #include \"%s\"" % (path, line, target)
            if "/" not in target:
                if target not in common:
                    found.append(where + ": not a header of src/common; name its room (\"core/%s\")"
                                 % target)
                continue
            their = room_of(target)
            if target not in files:
                found.append(where + ": no such header")
            elif room == "":
                continue            # main.c: the wiring sees every room
            elif their not in allowed(room):
                found.append(where + ": %s/ may include only %s and src/common"
                             % (room, ", ".join(r + "/" for r in sorted(allowed(room)))))
    return found


def terminal_part(path):
    """Where a file of terminal/ stands: "top", "ground" (any other file
    directly in terminal/), "wing:W" for a file under terminal/W/; None
    outside terminal/."""
    parts = path.split("/")
    if parts[0] != "terminal":
        return None
    if len(parts) > 2:
        return "wing:" + parts[1]
    return "top" if path in TERMINAL_TOP else "ground"


def wing_violations(files):
    """The terminal's inner walls, as the module's docstring says."""
    found = []
    for path, text in sorted(files.items()):
        part = terminal_part(path)
        if part is None:
            continue
        for line, target in includes(text):
            theirs = terminal_part(target)
            if theirs is None or target not in files:
                continue            # another room, or no such header: violations() speaks
            where = "%s:%d: #include \"%s\"" % (path, line, target)
            if part == "top" and path not in TERMINAL_TAIL:
                continue            # route.c/.h: the one place that sees every wing
            if theirs == "top" and target not in TERMINAL_TAIL and path in TERMINAL_TAIL:
                found.append(where + ": tail sees only the shared ground, never route.h")
            elif theirs == "top" and path not in TERMINAL_TAIL:
                found.append(where + ": no wing or shared ground includes route.h or tail.h; "
                             "route.c hands them their calls")
            elif theirs == "top" or theirs == "ground":
                continue
            elif part in ("top", "ground"):
                found.append(where + ": %s sees only the shared ground"
                             % ("tail" if part == "top" else "the shared ground"))
            elif theirs != part and target not in ALLOW.get(part[5:], ()):
                found.append(where + ": terminal/%s/ may include only itself and the shared "
                             "ground%s" % (part[5:], "".join(", " + a for a in
                                                               sorted(ALLOW.get(part[5:], ())))))
    return found


def nested_rooms(files):
    """The folders below a room that are not one of its wings."""
    folders = {os.path.dirname(p) for p in files if p.count("/") > 1}
    return sorted(f for f in folders
                  if f.count("/") > 1 or f.split("/")[1] not in WINGS.get(f.split("/")[0], ()))


def test_only_main_c_is_at_the_top(tree):
    files, _ = tree
    top = {p for p in files if room_of(p) == ""}
    assert top == TOP


def test_the_rooms_are_there(tree):
    files, _ = tree
    rooms = {room_of(p) for p in files} - {""}
    assert {"core", "keys", "clients", "terminal"} <= rooms
    assert nested_rooms(files) == [], "a room within a room (only terminal's wings nest)"


def test_no_room_includes_what_it_may_not(tree):
    files, common = tree
    includes = sum(len(INCLUDE.findall(t)) for p, t in files.items() if p not in TOP)
    assert includes > 200, "too few includes found: the test reads the wrong tree"
    assert violations(files, common) == []


def test_no_wing_includes_what_it_may_not(tree):
    files, _ = tree
    assert sum(1 for p in files if terminal_part(p) is not None) > 30, \
        "too few terminal files found: the test reads the wrong tree"
    # the terminal stands in its wings: the rule reads real files of each part
    parts = {terminal_part(p) for p in files} - {None}
    assert parts == {"top", "ground", "wing:control", "wing:relay", "wing:rest"}, parts
    assert {"terminal/control/connection.h", "terminal/relay/relay.h", "terminal/rest/rest.c",
            "terminal/model.h", "terminal/send.c"} <= set(files)
    assert wing_violations(files) == []


def test_the_check_catches_each_kind_of_violation(tree):
    """The rules above on a few planted lines: each must be caught."""
    files, common = tree
    planted = dict(files)
    planted["core/x.c"] = '#include "clients/client.h"\n#include "keys/token.h"\n'
    planted["keys/x.c"] = '#include "clients/hub.h"\n'
    planted["clients/x.c"] = '#include "terminal/relay/relay.h"\n#include "conn.h"\n'
    planted["terminal/relay/relay.h"] = '#include "clients/session.h"\n#include "core/conn.h"\n'
    found = violations(planted, common)
    assert [f.split(":")[0] for f in found] == [
        "clients/x.c", "clients/x.c", "core/x.c", "core/x.c", "keys/x.c", "terminal/relay/relay.h"], found


def test_the_wing_check_catches_each_kind_of_violation(tree):
    """The terminal's inner walls on planted files (the wings exist here
    whether or not the tree has moved into them yet): each must be caught,
    and what is allowed must pass."""
    files, common = tree
    planted = dict(files)
    for header in ("terminal/control/connection.h", "terminal/control/presence.h",
                   "terminal/relay/relay.h", "terminal/relay/slot.h", "terminal/ground.h",
                   "terminal/route.h", "terminal/tail.h"):
        planted.setdefault(header, "")
    planted["terminal/relay/x.c"] = ('#include "terminal/control/connection.h"\n'
                                     '#include "terminal/relay/slot.h"\n'
                                     '#include "terminal/ground.h"\n')
    planted["terminal/control/x.c"] = ('#include "terminal/relay/slot.h"\n'
                                       '#include "terminal/relay/relay.h"\n')
    planted["terminal/rest/x.c"] = ('#include "terminal/relay/relay.h"\n'
                                    '#include "terminal/control/presence.h"\n')
    planted["terminal/send.c"] = '#include "terminal/route.h"\n#include "terminal/ground.h"\n'
    planted["terminal/ground.c"] = '#include "terminal/relay/relay.h"\n'
    planted["terminal/control/x.h"] = '#include "terminal/tail.h"\n'
    planted["terminal/tail.c"] = ('#include "terminal/route.h"\n#include "terminal/ground.h"\n'
                                  '#include "terminal/control/connection.h"\n')
    planted["terminal/route.c"] = ('#include "terminal/control/x.h"\n#include "terminal/tail.h"\n'
                                   '#include "terminal/relay/relay.h"\n')
    found = [f.split(": #include ")[0] for f in wing_violations(planted)]
    assert found == ["terminal/control/x.c:1", "terminal/control/x.h:1", "terminal/ground.c:1",
                     "terminal/relay/x.c:1", "terminal/rest/x.c:1", "terminal/send.c:1",
                     "terminal/tail.c:1", "terminal/tail.c:3"], found
    assert violations(planted, common) == violations(files, common)
    # a folder anywhere but a terminal wing is a room within a room
    planted["core/deep/x.c"] = planted["terminal/other/x.c"] = ""
    planted["terminal/relay/deep/x.c"] = ""
    assert nested_rooms(planted) == ["core/deep", "terminal/other", "terminal/relay/deep"]


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
