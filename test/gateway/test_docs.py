"""The gateway's docs keep up with its code: an option of `serve`, a metric,
a log message, an op, a close code or a close reason that is missing from
its page fails here, and so do examples in docs/protocol.md that the
schemas of docs/asyncapi.yaml refuse.

Needs no database.  The sources are read from BOTHY_SRC_DIR (a copy of
src/gateway's tree of *.c and *.h; test/run-all sets it), the binary from
BOTHY_GATEWAY (conftest.py), the docs from BOTHY_ROOT/docs.
"""
import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from conftest import GATEWAY, ROOT

DOCS = os.path.join(ROOT, "docs")


# --- inputs -------------------------------------------------------------------

@pytest.fixture(scope="module")
def src():
    """The gateway's sources: {path under src/gateway ("core/conn.h"): text}.
    Absent sources fail the test: a docs check that cannot see the code
    checks nothing."""
    where = os.environ.get("BOTHY_SRC_DIR")
    if not where:
        pytest.fail("BOTHY_SRC_DIR is not set: it must name a copy of the tree of src/gateway")
    if not os.path.isfile(os.path.join(where, "clients", "protocol.c")):
        pytest.fail("BOTHY_SRC_DIR=%s holds no clients/protocol.c: not the gateway's sources" % where)
    files = {}
    for top, _, names in sorted(os.walk(where)):
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                path = os.path.join(top, name)
                with open(path) as f:
                    files[os.path.relpath(path, where)] = f.read()
    # the log writer the gateway links from src/common (beside BOTHY_SRC_DIR):
    # its own records are the node's too
    with open(os.path.join(os.path.dirname(where), "common", "logline.c")) as f:
        files["../common/logline.c"] = f.read()
    return files


# Where the node's metrics are rendered: the core's, and the gateway route's.
METRICS_SOURCES = ("core/metrics.c", "clients/stats.c")


def joined(src, names):
    return "".join(src[name] for name in names)


def doc(name):
    with open(os.path.join(DOCS, name)) as f:
        return f.read()


def table_rows(text):
    """Every Markdown table row as its list of stripped cells (an escaped
    pipe, \\|, stays inside its cell)."""
    return [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
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


# --- ops, close codes, close reasons -------------------------------------------

def ops_of(src):
    ops = re.findall(r'\{\s*"([a-z_]+)"\s*,\s*GW_OP_[A-Z_]+', src["clients/protocol.c"])
    assert len(ops) >= 8 and "identify" in ops, ops
    return ops


def close_codes(src):
    """{constant: code} of the transport's (core/conn.h) and the gateway
    route's (clients/client.h), plus every code /metrics counts (the
    transport's GW_CLOSE_CODES and the route's GW_CLIENT_CLOSE_CODES, both
    built from the names)."""
    headers = joined(src, ("core/conn.h", "clients/client.h"))
    defined = {k: int(v) for k, v in re.findall(r"#define\s+(GW_CLOSE_[A-Z_]+)\s+(\d{4})\b", headers)}
    assert len(defined) >= 12, defined
    counted = re.findall(r"#define\s+GW_\w*CLOSE_CODES\s*\{([^}]*)\}", headers)
    assert len(counted) == 2, "GW_CLOSE_CODES or GW_CLIENT_CLOSE_CODES not found"
    names = re.findall(r"\w+", ",".join(counted))
    assert len(names) >= 12 and [n for n in names if n not in defined] == [], names
    return defined, sorted(set(defined.values()))


def test_every_op_has_its_section_in_protocol_md(src):
    text = doc("protocol.md")
    assert [op for op in ops_of(src) if not re.search(r"^### `%s`$" % op, text, re.M)] == []


# --- events --------------------------------------------------------------------

def event_types(src):
    """The event types the node sends: clients/stats.c's event_type_names."""
    m = re.search(r"event_type_names\[[^]]*\]\s*=\s*\{([^}]*)\}", src["clients/stats.c"])
    assert m, "event_type_names not found in clients/stats.c"
    types = re.findall(r'"([a-z_.]+)"', m.group(1))
    assert len(types) >= 6 and "agent.event" in types, types
    return types


def test_every_event_type_has_its_row_in_protocol_md(src):
    rows = {r[0]: r for r in table_rows(doc("protocol.md")) if r and re.fullmatch(r"`[a-z_.]+`", r[0])}
    problems = []
    for t in event_types(src):
        row = rows.get("`%s`" % t)
        if row is None or len(row) != 3:
            problems.append("%s: no row in the events table" % t)
        elif "planned" in " ".join(row):
            problems.append("%s: sent, but its row says planned" % t)
    assert problems == []


def test_every_close_code_and_reason_is_in_protocol_md(src):
    defined, codes = close_codes(src)
    rows = {r[0]: r for r in table_rows(doc("protocol.md")) if r and re.fullmatch(r"\d{4}", r[0])}
    assert [c for c in codes if str(c) not in rows] == []
    # every reason the node closes with stands in the row of its code
    # (a control connection's closes, the transport's codes among them, stand
    # in their own table: test_terminal_docs.py checks them there)
    reasons = set()
    for name, text in src.items():
        if name.startswith("terminal/control"):
            continue
        for const, lit in re.findall(r"gw_conn_close\s*\([^,]+,\s*(GW_CLOSE_[A-Z_]+)\s*,\s*" + LITERALS, text):
            reasons.add((defined[const], c_string(lit)))
    assert len(reasons) >= 10, reasons
    missing = sorted((code, reason) for code, reason in reasons
                     if "`%s`" % reason not in " ".join(rows.get(str(code), [])))
    assert missing == []


# --- REST ----------------------------------------------------------------------

def rest_paths(src):
    """The paths the node answers: core/http.c's and clients/rest.c's routes."""
    paths = re.findall(r'strcmp\(uri,\s*"(/[a-z/._]+)"\)', src["core/http.c"])
    routes = re.search(r"routes\[\]\s*=\s*\{(.*?)\};", src["clients/rest.c"], re.S)
    assert routes, "the routes of clients/rest.c not found"
    paths += re.findall(r'\{"(/v1/[a-z/_]+)"', routes.group(1))
    assert len(paths) >= 6 and "/v1/agent/events" in paths, paths
    return paths


def defines(text):
    return {k: int(v) for k, v in re.findall(r"#define\s+(\w+)\s+(\d+)\b", text)}


def number(token, consts):
    token = token.strip()
    return consts[token] if token in consts else int(token.rstrip("L"))


def test_every_rest_path_has_its_section_in_protocol_md(src):
    text = doc("protocol.md")
    problems = []
    for path in rest_paths(src):
        heading = re.search(r"^### `GET %s`(.*)$" % re.escape(path), text, re.M)
        if heading is None:
            problems.append("%s: no section" % path)
        elif "planned" in heading.group(1):
            problems.append("%s: answered, but its section says planned" % path)
    assert problems == []


# The REST calls: routing and checks, the internal header, the calls.
REST_SOURCES = ("clients/rest.c", "clients/rest_call.h", "clients/rest_poll.c",
                "clients/rest_presence.c")


def test_every_rest_error_is_in_protocol_md(src):
    """Each status with its {"error":...} body stands on one line of
    protocol.md, and a failure counted by status is one of those."""
    pairs = set()
    # core/restcall.c: the refusals before a call exists (404, 405, 503)
    for name in REST_SOURCES + ("core/http.c", "core/restcall.c"):
        pairs |= {(int(st), code) for st, code in
                  re.findall(r'answer_error\(r,\s*(\d{3}),\s*"([a-z_]+)"\)', src[name])}
        statuses = {"HTTP_STATUS_NOT_FOUND": 404, "HTTP_STATUS_METHOD_NOT_ALLOWED": 405,
                    "HTTP_STATUS_SERVICE_UNAVAILABLE": 503}
        for const, code in re.findall(r"gw_http_respond\([^;]*?(HTTP_STATUS_[A-Z_]+),\s*"
                                      r'"application/json",\s*"\{\\"error\\":\\"([a-z_]+)', src[name]):
            pairs.add((statuses[const], code))
    assert len(pairs) >= 7 and (409, "fenced") in pairs and (405, "method_not_allowed") in pairs, pairs
    lines = doc("protocol.md").splitlines()
    body = '{"error":"%s"}'
    missing = sorted((st, code) for st, code in pairs
                     if not any(str(st) in l and body % code in l for l in lines))
    assert missing == []
    counted = {int(n) for n in re.findall(r"\d{3}", re.search(
        r"#define\s+GW_REST_STATUSES\s*\{([^}]*)\}", src["clients/stats.h"]).group(1))}
    assert counted == {200} | {st for st, code in pairs if code not in
                               ("not_found", "method_not_allowed")} | {503}


def test_every_rest_argument_is_in_protocol_md_with_its_range_and_default(src):
    """The REST calls' arg_spec tables: each integer argument's row carries
    its range and its default; the limits of lists, of one argument and the
    poll window's grace are stated."""
    rest = "".join(src[name] for name in REST_SOURCES)
    consts = defines(rest)
    rows = table_rows(doc("protocol.md"))
    text = doc("protocol.md")
    problems = []
    blocks = re.findall(r"static const arg_spec specs\[\]\s*=\s*\{(.*?)\};(.*?)(?=static const arg_spec|\Z)",
                        rest, re.S)
    assert len(blocks) >= 3, blocks
    ints = 0
    for specs, body in blocks:
        entries = re.findall(r'\{"([a-z_]+)",\s*(ARG_[A-Z]+),\s*([\w]+),\s*([\w]+),', specs)
        defaults = dict(re.findall(r"v\.seen\[(\d+)\]\s*\?[^:;]*:\s*(\w+)\s*;", body))
        for i, (name, kind, lo, hi) in enumerate(entries):
            if kind != "ARG_INT":
                if "`%s`" % name not in text:
                    problems.append("%s: not named" % name)
                continue
            ints += 1
            mine = [r for r in rows if r and r[0] == "`%s`" % name]
            want = "%d to %d" % (number(lo, consts), number(hi, consts))
            if not any(want in " ".join(r) for r in mine):
                problems.append("%s: no row with %s" % (name, want))
            if str(i) in defaults and defaults[str(i)] in consts:
                d = str(consts[defaults[str(i)]])
                if not any(c == d for r in mine for c in r):
                    problems.append("%s: default %s not in its row" % (name, d))
    assert ints >= 3
    if "1 to %d times" % consts["LIST_MAX"] not in text:
        problems.append("LIST_MAX %d not stated" % consts["LIST_MAX"])
    if not re.search(r"at most %d\s+bytes" % consts["ARG_MAX"], text):
        problems.append("ARG_MAX %d not stated" % consts["ARG_MAX"])
    if "`wait_ms` + %d s" % (consts["POLL_GRACE_MS"] // 1000) not in text:
        problems.append("POLL_GRACE_MS %d not stated" % consts["POLL_GRACE_MS"])
    assert problems == []


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
    sent = {m["payload"]["properties"]["type"]["const"]
            for m in messages(api, "subscribe") if "type" in m["payload"]["properties"]}
    assert [t for t in event_types(src) if t not in sent] == []
    # what the node does is not marked planned
    built = set(ops_of(src)) | set(event_types(src))
    for m in messages(api, "publish") + messages(api, "subscribe"):
        props = m["payload"]["properties"]
        name = props["type"]["const"] if "type" in props else props["op"]["const"]
        if name in built:
            assert "x-bothy-status" not in m, m["name"]
            assert "planned" not in json.dumps(m), m["name"]
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

def anchors(text):
    """GitHub's anchors of the headings of a Markdown text."""
    out = set()
    for line in text.splitlines():
        m = re.match(r"^#{1,6} (.*)$", line)
        if m:
            out.add(re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-"))
    return out


@pytest.mark.parametrize("page", ["protocol.md", "tokens.md", "gateway.md", "operations.md",
                                  "performance.md"])
def test_every_link_of_the_gateway_pages_resolves(page):
    broken = []
    for target, anchor in re.findall(r"\]\(([a-z0-9_.-]*)(?:#([^)]+))?\)", doc(page)):
        name = target or page
        if not os.path.isfile(os.path.join(DOCS, name)):
            broken.append(target)
        elif anchor and anchor not in anchors(doc(name)):
            broken.append("%s#%s" % (name, anchor))
    assert broken == []


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
