"""The host service's docs keep up with its code: an option, a log message,
a close code, an exit status or a frame type missing from docs/host.md or
the man page fails here, and the man page must render without a warning.

Needs no server.  The sources are read from BOTHY_ROOT/src/host (test/run-all
copies them), the docs from BOTHY_ROOT/docs, the usage text from the binary.
"""
import os
import re
import shutil
import subprocess

import pytest

from conftest import HOST, ROOT, gateway_module

DOCS = os.path.join(ROOT, "docs")
SRC = os.path.join(ROOT, "src", "host")
MAN = os.path.join(DOCS, "bothy-host.1")


@pytest.fixture(scope="module")
def src():
    if not os.path.isfile(os.path.join(SRC, "main.c")):
        pytest.fail("no src/host/main.c under %s: a docs check that cannot see the code "
                    "checks nothing" % ROOT)
    files = {}
    for name in sorted(os.listdir(SRC)):
        if name.endswith((".c", ".h")):
            with open(os.path.join(SRC, name)) as f:
                files[name] = f.read()
    return files


def doc():
    with open(os.path.join(DOCS, "host.md")) as f:
        return f.read()


def table_rows(text):
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.startswith("|") and not line.startswith("|---")]


def usage_options():
    """(option, default or None) of every option in `bothy-host --help`."""
    text = subprocess.run([HOST, "--help"], stdout=subprocess.PIPE, text=True, check=True).stdout
    found = []
    for m in re.finditer(r"^\s+(--[a-z-]+)[^\n]*((?:\n\s{20,}[^\n]*)*)", text, re.M):
        block = m.group(0)
        default = re.search(r"\(default (\d+)\)", block)
        found.append((m.group(1), default.group(1) if default else None))
    return found


def test_every_option_is_in_host_md_with_its_default():
    options = usage_options()
    assert len(options) >= 10, options
    rows = table_rows(doc())
    problems = []
    for name, default in options:
        mine = [r for r in rows if r and re.match(r"^`%s[ `]" % re.escape(name), r[0])]
        if not mine:
            problems.append("%s: no row in the options table" % name)
        elif default is not None and not any(c.strip("`") == default for r in mine for c in r):
            problems.append("%s: default %s not in its row" % (name, default))
    assert problems == []


def man_text():
    """The man page as a reader sees it: rendered by groff (every warning
    on, none allowed), without hyphenation and with long lines, so that no
    word is broken."""
    groff = shutil.which("groff")
    if groff is None:
        pytest.fail("groff is missing: .ci/install-deps installs groff-base")
    r = subprocess.run([groff, "-ww", "-man", "-Tascii", "-P-cbou", "-rHY=0", "-rLL=200n", MAN],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    assert r.returncode == 0 and r.stderr == "", "groff warned: " + r.stderr
    return r.stdout


def rendered_sections(text):
    """{heading: its lines} of the rendered page (headings start at column 0)."""
    sections, name = {}, None
    for line in text.splitlines():
        if line and not line[0].isspace() and line.upper() == line and "(" not in line:
            name = line.strip()
            sections[name] = []
        elif name is not None:
            sections[name].append(line)
    return sections


def test_man_page_has_every_option_with_its_default():
    sections = rendered_sections(man_text())
    want = ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "SIGNALS", "FILES",
            "EXIT STATUS", "SECURITY", "SEE ALSO"]
    assert [n for n in want if n not in sections] == []
    # an item's tag is indented one step, its text further
    items, tag = {}, None
    for line in sections["OPTIONS"]:
        m = re.match(r"^ {7}(--[a-z-]+)", line)
        if m:
            tag = m.group(1)
            items[tag] = line
        elif tag is not None:
            items[tag] += " " + line.strip()
    problems = []
    for name, default in usage_options():
        if name not in items:
            problems.append("%s: no item in OPTIONS" % name)
        elif default is not None and "default %s" % default not in items[name]:
            problems.append("%s: default %s not in its item" % (name, default))
    assert problems == []
    statuses = {m.group(1) for m in (re.match(r"^ {7}(\d) ", line)
                                     for line in sections["EXIT STATUS"]) if m}
    assert statuses == {"0", "1", "2", "3", "4", "5"}, statuses


def test_man_page_renders_without_warnings():
    assert "bothy-host - the bothy host service" in man_text()


def log_messages(src):
    """{(level, message)} of every record the host writes: gw_log and gw_logf
    with a constant message, and the data connection's refusals (stream.c's
    malformed(), which logs at warn)."""
    found = set()
    for name, text in src.items():
        for level, msg in re.findall(r'gw_logf?\(GW_LOG_([A-Z]+),\s*"([^"]+)"', text):
            found.add((level.lower(), msg))
        bare = re.findall(r"gw_logf?\(GW_LOG_[A-Z]+,\s*[^\"\s]", text)
        if name == "stream.c":
            assert len(bare) == 1, "stream.c: one gw_log of a variable message (malformed)"
            found.update(("warn", m) for m in re.findall(r'malformed\(wsi, st, "([^"]+)"\)', text))
        else:
            assert bare == [], "%s: a log call without a constant message" % name
    # the shared logger's own (src/common/logline.c, which the host links)
    with open(os.path.join(ROOT, "src", "common", "logline.c")) as f:
        own = re.findall(r'gw_logf?\(GW_LOG_([A-Z]+),\s*"([^"]+)"', f.read())
    assert own, "src/common/logline.c writes no record of its own: not the logger"
    found.update((level.lower(), msg) for level, msg in own)
    return found


def test_every_log_message_is_in_host_md_with_its_level(src):
    messages = log_messages(src)
    assert len(messages) >= 40, sorted(messages)
    documented = {(r[0], r[1]) for r in table_rows(doc()) if len(r) >= 2}
    missing = sorted((lvl, msg) for lvl, msg in messages if (lvl, "`%s`" % msg) not in documented)
    assert missing == []


def test_close_codes_exit_statuses_and_frames_are_documented(src):
    text = doc()
    codes = re.findall(r"#define\s+HOST_CLOSE_[A-Z]+\s+(\d{4})", src["host.h"])
    assert len(codes) == 4, codes
    rows = table_rows(text)
    for code in codes + ["1011"]:
        assert any(r[0] == code for r in rows), "close code %s has no row" % code
    statuses = re.findall(r"#define\s+HOST_EXIT_[A-Z]+\s+(\d)", src["host.h"])
    assert sorted(set(statuses)) == ["0", "1", "2", "3", "4", "5"]
    exit_rows = {r[0] for r in rows if r and r[0].isdigit() and len(r[0]) == 1}
    assert set(statuses) <= exit_rows
    frames = re.findall(r"#define\s+HOST_FRAME_([A-Z]+)\s+'(.)'", src["frame.h"])
    assert len(frames) == 5, frames
    for name, letter in frames:
        assert any(r[0] == name.lower() and "`%s`" % letter in r[3] for r in rows
                   if len(r) >= 4), "frame %s (%s) has no row" % (name, letter)
    # the signed contexts, as docs/protocol.md fixes them
    for line in ("bothy-host-hello-v1", "bothy-host-pair-v1", "bothy-host-probe-v1",
                 "bothy-host-data-v1"):
        assert line in text and '"%s"' % line in src["proof.c"]


def test_every_link_of_host_md_resolves():
    # the gateway suite's check of its pages, on this one
    assert gateway_module("docs_lib").links_resolve("host.md") == []
