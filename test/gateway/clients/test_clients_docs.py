"""The gateway route's docs keep up with its code (docs/protocol.md,
docs/asyncapi.yaml): an op, an event type, a close code or a close
reason, a REST path, a REST error or a REST argument's range or default
missing from protocol.md fails here, and so do an asyncapi.yaml that lacks
an op, an event type or a close code, examples in protocol.md that its
schemas refuse, and schemas that accept what the parser refuses.  The
core's docs: core/test_core_docs.py.

Needs no database.  The sources are read from BOTHY_SRC_DIR (a copy of
src/gateway's tree of *.c and *.h; test/run-all sets it), the docs from
BOTHY_ROOT/docs.
"""
import json
import re

import pytest

from docs_lib import (LITERALS, api, c_string, doc, joined, resolve, src,  # noqa: F401  (fixtures)
                      table_rows, valid)


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
    # in their own table: test_terminal_control_docs.py checks them there)
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
