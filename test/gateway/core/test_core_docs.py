"""The gateway's docs keep up with the core's code (docs/gateway.md,
docs/operations.md, the man page): an option of `serve` missing from
gateway.md or the man page with its default, a man page that does not
render cleanly, a metric or a log message (with its level) missing from
gateway.md, a record or a metric operations.md quotes that does not
exist, a broken link between the pages, and a performance.md that is a
history rather than a reference fail here.  The routes' own docs tests:
clients/test_clients_docs.py, terminal/test_terminal_*_docs.py.

Needs no database.  The sources are read from BOTHY_SRC_DIR (a copy of
src/gateway's tree of *.c and *.h; test/run-all sets it), the binary from
BOTHY_GATEWAY (conftest.py), the docs from BOTHY_ROOT/docs.
"""
import os
import re
import shutil
import subprocess

import pytest

from conftest import GATEWAY
from docs_lib import (DOCS, LITERALS, c_string, doc, joined, links_resolve, src,  # noqa: F401  (src: a fixture)
                      table_rows)

# Where the node's metrics are rendered: the core's, and the gateway route's.
METRICS_SOURCES = ("core/metrics.c", "clients/stats.c")


# --- bothy-gateway serve --------------------------------------------------------

def serve_options():
    """(option, default or None) of every option in `serve --help`."""
    r = subprocess.run([GATEWAY, "serve", "--help"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    blocks = []
    for line in r.stdout.splitlines():
        m = re.match(r"^\s+(--[a-z][a-z-]*)", line)
        if m:
            blocks.append([m.group(1), line])
        elif blocks and line.startswith("    "):
            blocks[-1][1] += " " + line.strip()     # a continuation line
    options = []
    for name, text in blocks:
        d = re.search(r"\(default ([^)]+)\)", text)
        options.append((name, d.group(1) if d else None))
    return options


def test_every_serve_option_is_in_gateway_md_with_its_default():
    options = serve_options()
    assert len(options) >= 15 and ("--listen", None) in options, options
    rows = table_rows(doc("gateway.md"))
    problems = []
    for name, default in options:
        mine = [r for r in rows if r and re.match(r"^`%s[ `]" % re.escape(name), r[0])]
        if not mine:
            problems.append("%s: no row in the options table" % name)
        elif default is not None and not any(c.strip("`") == default for r in mine for c in r[1:]):
            problems.append("%s: default %s not in its row" % (name, default))
        elif any("planned" in c for r in mine for c in r):
            problems.append("%s: built, but its row says planned" % name)
    assert problems == []


# --- the man page ----------------------------------------------------------------

MAN = os.path.join(DOCS, "bothy-gateway.1")


def man_sections():
    """{section name: its roff lines} of docs/bothy-gateway.1."""
    sections, name = {}, None
    with open(MAN) as f:
        for line in f.read().splitlines():
            m = re.match(r'^\.SH\s+"?([^"]+?)"?\s*$', line)
            if m:
                name = m.group(1)
                sections[name] = []
            elif name is not None:
                sections[name].append(line)
    return sections


def roff_plain(lines):
    """The words of roff lines: macro names, quotes and font escapes gone,
    \\- as -, whitespace collapsed."""
    out = []
    for line in lines:
        if line.startswith(".\\\""):
            continue
        line = re.sub(r"^\.[A-Z]{1,2}\b", "", line)
        line = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", line)
        out.append(line.replace("\\-", "-").replace("\\(dq", '"').replace('"', ""))
    return " ".join(" ".join(out).split())


def man_items(lines):
    """(tag, body) of every .TP item: the tag line and the lines up to the next."""
    items, i = [], 0
    while i < len(lines):
        if lines[i].startswith(".TP") and i + 1 < len(lines):
            j = i + 2
            while j < len(lines) and not lines[j].startswith((".TP", ".SH", ".PP")):
                j += 1
            items.append((roff_plain([lines[i + 1]]), roff_plain(lines[i + 2:j])))
            i = j
        else:
            i += 1
    return items


def test_man_page_has_every_serve_option_with_its_default():
    sections = man_sections()
    want = ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "ENVIRONMENT",
            "SIGNALS", "FILES", "EXIT STATUS", "SEE ALSO"]
    assert [n for n in want if n not in sections] == []
    items = {}
    for tag, body in man_items(sections["OPTIONS"]):
        m = re.match(r"(--[a-z-]+)", tag)
        if m:
            items[m.group(1)] = tag + " " + body
    options = serve_options()
    assert len(options) >= 15
    problems = []
    for name, default in options:
        if name not in items:
            problems.append("%s: no item in OPTIONS" % name)
        elif default is not None and "default %s" % default not in items[name]:
            problems.append("%s: default %s not in its item" % (name, default))
    assert problems == []
    env = {tag for tag, _ in man_items(sections["ENVIRONMENT"])}
    assert {"BOTHY_LISTEN", "BOTHY_DATABASE", "BOTHY_KEYS"} <= env, env
    signals = " ".join(tag for tag, _ in man_items(sections["SIGNALS"]))
    assert all(s in signals for s in ("SIGTERM", "SIGINT", "SIGHUP")), signals


def test_man_page_renders_without_warnings():
    groff = shutil.which("groff")
    if groff is None:
        pytest.fail("groff is missing: .ci/install-deps installs groff-base")
    r = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", MAN], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=30)
    assert r.returncode == 0 and r.stderr == "", r.stderr


# --- metrics -------------------------------------------------------------------

def test_every_metric_is_in_gateway_md(src):
    names = sorted(set(re.findall(r"bothy_gateway_[a-z_]+", joined(src, METRICS_SOURCES))))
    assert len(names) >= 20, names
    text = doc("gateway.md")
    assert [n for n in names if "`%s`" % n not in text] == []


# --- log messages --------------------------------------------------------------

def call_args(text, start):
    """The arguments of the call whose "(" is at text[start], split at the
    commas of its top level (strings and nested parentheses kept whole)."""
    args, depth, cur, i = [], 0, "", start + 1
    while i < len(text):
        ch = text[i]
        if ch == '"':
            m = re.match(r'"(?:[^"\\]|\\.)*"', text[i:])
            cur += m.group(0)
            i += len(m.group(0))
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                args.append(cur.strip())
                return args
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
            i += 1
            continue
        cur += ch
        i += 1
    raise AssertionError("unbalanced call at %d" % start)


def log_messages(src):
    """(level, message) of every gw_log/gw_logf call with a constant message,
    and of every call of a function that passes one of its parameters on as
    the message (server.c's refuse and use_settings)."""
    found = set()
    for name, text in src.items():
        if not name.endswith(".c"):
            continue
        for m in re.finditer(r"\bgw_logf?\s*\(\s*GW_LOG_([A-Z]+)\s*,\s*(?:" + LITERALS + r"|(\w+))",
                             text):
            level = m.group(1).lower()
            if m.group(2) is not None:
                found.add((level, c_string(m.group(2))))
                continue
            # a wrapper: the message is a parameter of the enclosing function
            start = text.rfind("\n", 0, m.start())
            head = list(re.finditer(r"^(\w+)\s*\(([^)]*)\)\s*\n\{", text[:start], re.M))
            assert head, "%s: gw_log(..., %s) outside a function" % (name, m.group(3))
            fn, params = head[-1].group(1), head[-1].group(2)
            names = [re.findall(r"\w+", p)[-1] for p in params.split(",")]
            assert m.group(3) in names, (
                "%s: %s logs %s, which is not one of its parameters: teach this test" % (name, fn, m.group(3)))
            at = names.index(m.group(3))
            calls = []
            # a static wrapper is called in its file; another one anywhere (keys/bearer.c)
            callers = [text] if re.search(r"^static\b[^;{]*\n%s\s*\(" % fn, text, re.M) else \
                [t for n, t in src.items() if n.endswith(".c")]
            for caller in callers:
                for call in re.finditer(r"\b%s\s*\(" % fn, caller):
                    line = caller[caller.rfind("\n", 0, call.start()) + 1:call.start()]
                    if line == "" or re.match(r"\s*(static|extern)\b", line):
                        continue        # the definition, or a prototype
                    args = call_args(caller, call.end() - 1)
                    assert re.fullmatch(LITERALS, args[at] + " "), (
                        "%s: %s called with a message that is not a constant: %s" % (name, fn, args[at]))
                    calls.append(args[at])
            assert calls, "%s: no call of %s with a constant message" % (name, fn)
            found.update((level, c_string(c)) for c in calls)
    return found


def test_every_log_message_is_in_gateway_md_with_its_level(src):
    messages = log_messages(src)
    assert len(messages) >= 30, sorted(messages)
    assert ("error", "database not reachable at start") in messages    # through refuse()
    assert ("error", "libwebsockets reported an error") in messages    # src/common/logline.c
    rows = table_rows(doc("gateway.md"))
    documented = {(r[0], r[1]) for r in rows if len(r) >= 2}
    missing = sorted((lvl, msg) for lvl, msg in messages if (lvl, "`%s`" % msg) not in documented)
    assert missing == []


# --- docs/operations.md ----------------------------------------------------------

# What an operator must find in the table of operations.md (the brief of the
# page): records and metrics that call for action.
ACTIONABLE = [
    ("gateway log", "listener connection lost, reconnecting"),
    ("gateway log", "database connection lost"),
    ("gateway log", "database call timed out"),
    ("gateway log", "gateway presence not written, retrying at the next interval"),
    ("gateway log", "signal dropped as malformed"),
    ("gateway log", "client closed: send queue full"),
    ("gateway metric", "bothy_gateway_listener_up"),
    ("gateway metric", "bothy_gateway_presence_write_failures_total"),
    ("server log", "bothy maintenance waits for ALTER EXTENSION bothy UPDATE to version"),
    ("server log", "bothy fan-out lost a batch of"),
]


def server_messages():
    """The format strings of the workers' LOG records and of the SQL
    warnings (src/extension, src/sql beside BOTHY_SRC_DIR)."""
    base = os.path.dirname(os.environ["BOTHY_SRC_DIR"])
    found = []
    for sub, pattern in (("extension", r'errmsg\("((?:[^"\\]|\\.)*)"'),
                         ("sql", r"RAISE\s+(?:WARNING|LOG|NOTICE)\s+'([^']*)'")):
        where = os.path.join(base, sub)
        assert os.path.isdir(where), "%s is missing: test/run-all copies it" % where
        for name in os.listdir(where):
            if name.endswith((".c", ".sql")):
                with open(os.path.join(where, name)) as f:
                    found += [m.replace('\\"', '"') for m in re.findall(pattern, f.read())]
    assert any(m.startswith("bothy maintenance") for m in found), found
    return found


def test_operations_md_quotes_only_records_and_metrics_that_exist(src):
    rows = [r for r in table_rows(doc("operations.md")) if len(r) == 4 and r[1].startswith("`")]
    quoted = [(r[0], r[1].strip("`")) for r in rows]
    assert [a for a in ACTIONABLE if a not in quoted] == []
    logs = {m for _, m in log_messages(src)}
    metrics = set(re.findall(r"bothy_gateway_[a-z_]+", joined(src, METRICS_SOURCES)))
    server = server_messages()
    worker_metrics = {c.strip("`") for r in table_rows(doc("sql-api.md")) for c in r[:1]}
    problems = []
    for where, text in quoted:
        if where == "gateway log" and text not in logs:
            problems.append((where, text))
        elif where == "gateway metric" and re.sub(r"\{.*\}$", "", text) not in metrics:
            problems.append((where, text))
        elif where == "server log" and not any(m.startswith(text) for m in server):
            problems.append((where, text))
        elif where == "`bothy.metrics()`" and text not in worker_metrics:
            problems.append((where, text))
        elif where not in ("gateway log", "gateway metric", "server log", "`bothy.metrics()`"):
            problems.append(("unknown source", where))
    assert problems == []


# --- links between the pages ----------------------------------------------------

@pytest.mark.parametrize("page", ["protocol.md", "tokens.md", "gateway.md", "operations.md",
                                  "performance.md"])
def test_every_link_of_the_gateway_pages_resolves(page):
    assert links_resolve(page) == []


# --- performance.md: a reference, not a history (issue 26) -----------------------

PERFORMANCE_PARTS = ("**What.**", "**Command.**", "**Latest", "**Goal", "**Notes.**")


def test_performance_md_is_a_reference():
    """At most 400 lines; every bench's section has its five parts, in order,
    and a Latest that names its date; the history is left to git."""
    text = doc("performance.md")
    assert len(text.splitlines()) <= 400
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    benches = [s for s in sections if not s.startswith("Adding a bench")]
    assert len(benches) >= 13, [s.splitlines()[0] for s in sections]
    for section in benches:
        title = section.splitlines()[0]
        places = [section.find(part) for part in PERFORMANCE_PARTS]
        assert -1 not in places and places == sorted(places), title
        latest = section[places[2]:places[3]]
        assert re.search(r"\b20\d\d-\d\d-\d\d\b", latest) or "docs/scaling.md" in latest, title
        assert "bench/" in section[places[1]:places[2]], title
    assert "58bb870:docs/performance.md" in text
