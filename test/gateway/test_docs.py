"""The gateway's docs keep up with its code: an option of `serve`, a metric,
a log message, an op, a close code or a close reason that is missing from
its page fails here, and so do examples in docs/protocol.md that the
schemas of docs/asyncapi.yaml refuse.

Needs no database.  The sources are read from BOTHY_SRC_DIR (the directory
holding src/gateway's *.c and *.h; test/run-all sets it), the binary from
BOTHY_GATEWAY (conftest.py), the docs from BOTHY_ROOT/docs.
"""
import json
import os
import re
import subprocess

import pytest
import yaml

from conftest import GATEWAY, ROOT

DOCS = os.path.join(ROOT, "docs")


# --- inputs -------------------------------------------------------------------

@pytest.fixture(scope="module")
def src():
    """The gateway's sources: {file name: text}.  Absent sources fail the
    test: a docs check that cannot see the code checks nothing."""
    where = os.environ.get("BOTHY_SRC_DIR")
    if not where:
        pytest.fail("BOTHY_SRC_DIR is not set: it must name the directory of src/gateway/*.c and *.h")
    if not os.path.isfile(os.path.join(where, "protocol.c")):
        pytest.fail("BOTHY_SRC_DIR=%s holds no protocol.c: not the gateway's sources" % where)
    files = {}
    for name in sorted(os.listdir(where)):
        if name.endswith((".c", ".h")):
            with open(os.path.join(where, name)) as f:
                files[name] = f.read()
    return files


def doc(name):
    with open(os.path.join(DOCS, name)) as f:
        return f.read()


def table_rows(text):
    """Every Markdown table row as its list of stripped cells."""
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.splitlines() if line.lstrip().startswith("|")]


def c_string(literals):
    """The value of adjacent C string literals ("a" "b"), escapes undone."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', literals)
    return "".join(parts).encode().decode("unicode_escape")


LITERALS = r'((?:"(?:[^"\\]|\\.)*"\s*)+)'


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
    assert problems == []


# --- metrics -------------------------------------------------------------------

def test_every_metric_is_in_gateway_md(src):
    names = sorted(set(re.findall(r"bothy_gateway_[a-z_]+", src["metrics.c"])))
    assert len(names) >= 20, names
    text = doc("gateway.md")
    assert [n for n in names if "`%s`" % n not in text] == []


# --- log messages --------------------------------------------------------------

def log_messages(src):
    """(level, message) of every gw_log/gw_logf call with a constant message,
    and of every call of a function that passes its first parameter on as
    the message (server.c's refuse)."""
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
            first = re.findall(r"\w+", params.split(",")[0])[-1]
            assert first == m.group(3), (
                "%s: %s logs its parameter %s, not its first one: teach this test" % (name, fn, m.group(3)))
            calls = re.findall(r"\b%s\s*\(\s*%s" % (fn, LITERALS), text)
            assert calls, "%s: no call of %s with a constant message" % (name, fn)
            found.update((level, c_string(c)) for c in calls)
    return found


def test_every_log_message_is_in_gateway_md_with_its_level(src):
    messages = log_messages(src)
    assert len(messages) >= 30, sorted(messages)
    assert ("error", "database not reachable at start") in messages    # through refuse()
    rows = table_rows(doc("gateway.md"))
    documented = {(r[0], r[1]) for r in rows if len(r) >= 2}
    missing = sorted((lvl, msg) for lvl, msg in messages if (lvl, "`%s`" % msg) not in documented)
    assert missing == []


# --- ops, close codes, close reasons -------------------------------------------

def ops_of(src):
    ops = re.findall(r'\{\s*"([a-z_]+)"\s*,\s*GW_OP_[A-Z_]+', src["protocol.c"])
    assert len(ops) >= 8 and "identify" in ops, ops
    return ops


def close_codes(src):
    """{constant: code} of conn.h, plus every code metrics.h counts."""
    defined = {k: int(v) for k, v in re.findall(r"#define\s+(GW_CLOSE_[A-Z_]+)\s+(\d{4})\b", src["conn.h"])}
    assert len(defined) >= 9, defined
    counted = re.search(r"#define\s+GW_CLOSE_CODES\s*\{([^}]*)\}", src["metrics.h"])
    assert counted, "GW_CLOSE_CODES not found in metrics.h"
    return defined, sorted(set(defined.values()) | {int(c) for c in re.findall(r"\d+", counted.group(1))})


def test_every_op_has_its_section_in_protocol_md(src):
    text = doc("protocol.md")
    assert [op for op in ops_of(src) if not re.search(r"^### `%s`" % op, text, re.M)] == []


def test_every_close_code_and_reason_is_in_protocol_md(src):
    defined, codes = close_codes(src)
    rows = {r[0]: r for r in table_rows(doc("protocol.md")) if r and re.fullmatch(r"\d{4}", r[0])}
    assert [c for c in codes if str(c) not in rows] == []
    # every reason the node closes with stands in the row of its code
    reasons = set()
    for text in src.values():
        for const, lit in re.findall(r"gw_conn_close\s*\([^,]+,\s*(GW_CLOSE_[A-Z_]+)\s*,\s*" + LITERALS, text):
            reasons.add((defined[const], c_string(lit)))
    assert len(reasons) >= 10, reasons
    missing = sorted((code, reason) for code, reason in reasons
                     if "`%s`" % reason not in " ".join(rows.get(str(code), [])))
    assert missing == []


# --- docs/asyncapi.yaml --------------------------------------------------------

@pytest.fixture(scope="module")
def api():
    with open(os.path.join(DOCS, "asyncapi.yaml")) as f:
        return yaml.safe_load(f)


def resolve(api, schema):
    while "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        node = api
        for part in ref[2:].split("/"):
            node = node[part]
        schema = node
    return schema


ANNOTATIONS = {"description", "title", "examples", "x-bothy-status"}
FORMATS = {
    "uuid": r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    "date-time": r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})",
}
TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def valid(api, schema, v):
    """A small JSON Schema validator for exactly the keywords asyncapi.yaml
    uses; an unknown keyword fails, so a schema cannot say more than is
    checked here."""
    schema = resolve(api, schema)
    for key, want in schema.items():
        if key in ANNOTATIONS:
            continue
        if key == "type":
            ok = TYPES[want](v)
        elif key == "const":
            ok = v == want and type(v) is type(want)
        elif key == "enum":
            ok = v in want
        elif key == "oneOf":
            ok = sum(valid(api, s, v) for s in want) == 1
        elif key == "format":
            ok = not isinstance(v, str) or re.fullmatch(FORMATS[want], v) is not None
        elif key == "pattern":
            ok = not isinstance(v, str) or re.search(want, v) is not None
        elif key in ("minLength", "maxLength"):
            ok = not isinstance(v, str) or (len(v) >= want if key == "minLength" else len(v) <= want)
        elif key in ("minimum", "maximum"):
            ok = not TYPES["number"](v) or (v >= want if key == "minimum" else v <= want)
        elif key in ("minItems", "maxItems"):
            ok = not isinstance(v, list) or (len(v) >= want if key == "minItems" else len(v) <= want)
        elif key == "items":
            ok = not isinstance(v, list) or all(valid(api, want, e) for e in v)
        elif key == "required":
            ok = not isinstance(v, dict) or all(k in v for k in want)
        elif key == "properties":
            ok = not isinstance(v, dict) or all(valid(api, s, v[k]) for k, s in want.items() if k in v)
        elif key == "additionalProperties":
            extra = [k for k in v if k not in schema.get("properties", {})] if isinstance(v, dict) else []
            ok = all(valid(api, want, v[k]) for k in extra) if isinstance(want, dict) else (want or not extra)
        else:
            raise AssertionError("asyncapi.yaml uses %r, which this test does not check" % key)
        if not ok:
            return False
    return True


def messages(api, operation):
    refs = api["channels"]["/gateway"][operation]["message"]["oneOf"]
    return [resolve(api, r) for r in refs]


def accepted_by(api, operation, value):
    """The names of the messages of operation whose payload accepts value."""
    return [m["name"] for m in messages(api, operation) if valid(api, m["payload"], value)]


def test_asyncapi_is_2_6_and_has_every_op_and_close_code(src, api):
    assert api["asyncapi"] == "2.6.0"
    assert api["info"]["title"] and api["info"]["version"] == "1"
    client_ops = {m["payload"]["properties"]["op"]["const"] for m in messages(api, "publish")}
    assert [op for op in ops_of(src) if op not in client_ops] == []
    for m in messages(api, "publish") + messages(api, "subscribe"):
        assert m["payload"]["additionalProperties"] is False, m["name"]
        assert "op" in m["payload"]["required"], m["name"]
    _, codes = close_codes(src)
    listed = {c["code"] for c in api["channels"]["/gateway"]["x-close-codes"]}
    # 1000 and 1006 are never sent by the node: counted, not part of the protocol
    assert [c for c in codes if c not in listed and c not in (1000, 1006)] == []


def examples():
    """The JSON lines of protocol.md: ("publish" or "subscribe", line)."""
    out = []
    for line in doc("protocol.md").splitlines():
        if line.startswith("> {"):
            out.append(("publish", line[2:]))
        elif line.startswith("< {"):
            out.append(("subscribe", line[2:]))
    return out


def test_every_example_of_protocol_md_is_one_message_of_asyncapi(api):
    found = examples()
    assert len(found) >= 25, len(found)
    wrong = []
    for operation, line in found:
        names = accepted_by(api, operation, json.loads(line))
        if len(names) != 1:
            wrong.append((operation, names, line[:80]))
    assert wrong == []


UUID = "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b"

# What the parser refuses (protocol.c): the schemas must refuse it too.
REFUSED = [
    {"op": "dance"},
    {"op": "Heartbeat"},
    {"token": "x"},
    {"op": "heartbeat", "x": 1},
    {"op": "heartbeat", "state": "offline"},
    {"op": "identify"},
    {"op": "identify", "token": ""},
    {"op": "identify", "token": "has space"},
    {"op": "identify", "token": "t" * 1025},
    {"op": "identify", "token": 5},
    {"op": "resume", "token": "é"},
    {"op": "focus"},
    {"op": "focus", "thread": "not-a-uuid"},
    {"op": "focus", "thread": UUID.upper()},
    {"op": "focus", "thread": "{%s}" % UUID},
    {"op": "idle", "idle": 1},
    {"op": "idle", "idle": "true"},
    {"op": "typing"},
    {"op": "typing", "thread": None},
    {"op": "ack", "event": -1},
    {"op": "ack", "event": 1.5},
    {"op": "ack", "event": 9007199254740992},
    {"op": "ack", "event": "1"},
    {"op": "autocomplete", "agent": UUID, "ref": "", "query": ""},
    {"op": "autocomplete", "agent": UUID, "ref": "r" * 129, "query": ""},
    {"op": "autocomplete", "agent": UUID, "ref": "r", "query": "q" * 1025},
    {"op": "autocomplete", "agent": UUID, "ref": "r"},
    {"op": "autocomplete_answer", "request": UUID, "items": [{}] * 51},
    {"op": "autocomplete_answer", "request": UUID, "items": ["text"]},
]

ACCEPTED = [
    {"op": "heartbeat"},
    {"op": "focus", "thread": None},
    {"op": "ack", "event": 0},
    {"op": "ack", "event": 9007199254740991},
    {"op": "autocomplete", "agent": UUID, "ref": "r" * 128, "query": "q" * 1024},
    {"op": "autocomplete", "agent": UUID, "ref": "r", "query": ""},
    {"op": "autocomplete_answer", "request": UUID, "items": [{}] * 50},
    {"op": "identify", "token": "!" * 1024},
]


@pytest.mark.parametrize("message", REFUSED, ids=lambda m: json.dumps(m)[:60])
def test_asyncapi_refuses_what_the_parser_refuses(api, message):
    assert accepted_by(api, "publish", message) == []


@pytest.mark.parametrize("message", ACCEPTED, ids=lambda m: json.dumps(m)[:60])
def test_asyncapi_accepts_the_limits_of_the_parser(api, message):
    assert len(accepted_by(api, "publish", message)) == 1


# --- links between the pages ----------------------------------------------------

def anchors(text):
    """GitHub's anchors of the headings of a Markdown text."""
    out = set()
    for line in text.splitlines():
        m = re.match(r"^#{1,6} (.*)$", line)
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-"))
    return out


@pytest.mark.parametrize("page", ["protocol.md", "tokens.md", "gateway.md"])
def test_every_link_of_the_gateway_pages_resolves(page):
    broken = []
    for target, anchor in re.findall(r"\]\(([a-z0-9_.-]*)(?:#([^)]+))?\)", doc(page)):
        name = target or page
        if not os.path.isfile(os.path.join(DOCS, name)):
            broken.append(target)
        elif anchor and anchor not in anchors(doc(name)):
            broken.append("%s#%s" % (name, anchor))
    assert broken == []
