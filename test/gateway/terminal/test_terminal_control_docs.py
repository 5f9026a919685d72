"""The terminal's docs keep up with its code (clients/test_clients_docs.py
does the same for the gateway route): every op of the control connection has its
section in protocol.md and its message in asyncapi.yaml's /terminal/host
channel, every example there is one message of the channel (and its
signatures verify with the example's key), every close code and reason of
the control connection stands in its table, every REST error of the
terminal's calls stands in protocol.md and in x-terminal-rest, the REST
examples fit their schemas, and every metric of terminal/control/stats.c,
terminal/tail.c and terminal/rest/rest.c is in gateway.md.  Needs no database; the sources come from BOTHY_SRC_DIR."""
import json
import re

import pytest
import yaml
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from fakehost import b64d
from docs_lib import DOCS, LITERALS, c_string, doc, resolve, src, table_rows, valid  # noqa: F401

CHANNEL = "/terminal/host"


@pytest.fixture(scope="module")
def api():
    with open(DOCS + "/asyncapi.yaml") as f:
        return yaml.safe_load(f)


def terminal_part():
    """The terminal's part of protocol.md: from its control connection to Limits."""
    text = doc("protocol.md")
    start = text.index("## The terminal: control connection")
    return text[start:text.index("\n## Limits", start)]


def host_ops(src):
    """What a host service sends: the ops table of terminal/wire.c."""
    ops = re.findall(r'\{"([a-z_.]+)",\s*GW_TOP_[A-Z_]+', src["terminal/control/wire.c"])
    assert len(ops) == 6 and "hello" in ops, ops
    return ops


def node_ops(src):
    """What the node sends: the ops its encoders write."""
    text = src["terminal/control/wire.c"]
    ops = re.findall(r'\\"op\\":\\"([a-z_.]+)\\"', text)
    ops += re.findall(r'enc_nonce\(out, size, "([a-z_]+)"', text)
    assert len(set(ops)) == 6 and "ready" in ops, ops
    return sorted(set(ops))


def channel_ops(api, operation):
    refs = api["channels"][CHANNEL][operation]["message"]["oneOf"]
    return {resolve(api, r)["payload"]["properties"]["op"]["const"]: resolve(api, r) for r in refs}


def test_every_op_has_its_section_and_its_message(src, api):
    part = terminal_part()
    headings = " ".join(re.findall(r"^#### (.*)$", part, re.M))
    ops = host_ops(src) + node_ops(src)
    assert [op for op in ops if "`%s`" % op not in headings] == []
    assert sorted(channel_ops(api, "publish")) == sorted(host_ops(src))
    assert sorted(channel_ops(api, "subscribe")) == node_ops(src)
    for m in list(channel_ops(api, "publish").values()) + list(channel_ops(api, "subscribe").values()):
        assert m["payload"]["additionalProperties"] is False and "op" in m["payload"]["required"], m["name"]


def examples():
    """The control connection's JSON lines of protocol.md: (operation, message)."""
    out = []
    for line in terminal_part().splitlines():
        if line.startswith("-> {"):
            out.append(("publish", json.loads(line[3:])))
        elif line.startswith("<- {"):
            out.append(("subscribe", json.loads(line[3:])))
    return out


def test_every_example_is_one_message_of_the_channel(api):
    found = examples()
    assert len(found) >= 12, len(found)
    wrong = []
    for operation, message in found:
        names = [m["name"] for m in channel_ops(api, operation).values()
                 if valid(api, m["payload"], message)]
        if len(names) != 1:
            wrong.append((operation, names, message))
    assert wrong == []


def test_the_examples_signatures_verify_with_the_examples_key():
    found = [m for _, m in examples()]
    key = Ed25519PublicKey.from_public_bytes(b64d(next(m for m in found if m["op"] == "pair")["public_key"]))
    challenge = next(m for m in found if m["op"] == "challenge")["nonce"]
    probe = next(m for m in found if m["op"] == "probe")["nonce"]
    signed = []
    for m in found:
        if m["op"] in ("hello", "pair"):
            lines = ["bothy-host-%s-v1" % m["op"], m["host"], challenge]
        elif m["op"] == "probe_ack":
            lines = ["bothy-host-probe-v1", next(x for x in found if x["op"] == "hello")["host"], probe]
        else:
            continue
        try:
            key.verify(b64d(m["sig"]), "\n".join(lines).encode())
            signed.append(m["op"])
        except InvalidSignature:
            signed.append(m["op"] + " does not verify")
    assert signed == ["hello", "pair", "probe_ack"]


# What the parser refuses (terminal/wire.c): the schemas refuse it too.
UUID = "01a2b3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b"
SIG = "A" * 86
REFUSED = [
    {"op": "hello", "host": UUID, "sig": SIG},
    {"op": "hello", "host": UUID, "sig": SIG, "version": ""},
    {"op": "hello", "host": UUID, "sig": SIG, "version": "v" * 65},
    {"op": "hello", "host": UUID, "sig": SIG, "version": "a\nb"},
    {"op": "hello", "host": UUID, "sig": "B" * 86, "version": "v"},
    {"op": "hello", "host": UUID.upper(), "sig": SIG, "version": "v"},
    {"op": "pair", "host": UUID, "code": "0123456789abcdei", "public_key": "A" * 43, "sig": SIG},
    {"op": "pair", "host": UUID, "code": "0123456789abcdef", "public_key": "B" * 43, "sig": SIG},
    {"op": "report", "sessions": [UUID] * 33},
    {"op": "report"},
    {"op": "heartbeat", "state": "busy"},
    {"op": "probe_ack", "sig": SIG + "A"},
]


@pytest.mark.parametrize("message", REFUSED, ids=lambda m: json.dumps(m)[:60])
def test_the_channel_refuses_what_the_parser_refuses(api, message):
    assert [m for m in channel_ops(api, "publish").values() if valid(api, m["payload"], message)] == []


def close_reasons(src):
    """(code, reason) of every close of the control connection."""
    # the terminal's own codes (model.h) and the transport's (core/conn.h)
    codes = {k: int(v) for k, v in re.findall(r"#define\s+(GW_(?:TCODE|CLOSE)_[A-Z_]+)\s+(\d{4})\b",
                                               src["terminal/model.h"] + src["core/conn.h"])}
    assert len([k for k in codes if k.startswith("GW_TCODE_")]) == 7, codes
    reasons = set()
    for name in ("terminal/control/endpoint.c", "terminal/control/probe.c",
                 "terminal/control/hostcheck.c"):
        text = src[name]
        for const, lit in re.findall(r"(GW_(?:TCODE|CLOSE)_[A-Z_]+)\s*,\s*" + LITERALS, text):
            reasons.add((codes[const], c_string(lit)))
        for lit in re.findall(r"\brefuse\(tc,\s*GW_TREFUSE_\w+,\s*" + LITERALS, text):
            reasons.add((codes["GW_TCODE_REFUSED"], c_string(lit)))
    assert len(reasons) >= 12, reasons
    # the codes a control connection closes with: each has its reasons
    used = {code for code, _ in reasons}
    assert {4001, 4002, 4009, 4110, 4111, 4112, 1011} <= used, sorted(used)
    return {k: v for k, v in codes.items() if v in used}, reasons


def test_every_close_code_and_reason_is_in_the_table(src, api):
    codes, reasons = close_reasons(src)
    table = terminal_part().split("### Close codes of the control connection")[1]
    rows = {r[0].strip("`"): r for r in table_rows(table) if r and re.fullmatch(r"`\d{4}`", r[0])}
    assert [c for c in codes.values() if str(c) not in rows] == []
    missing = sorted((code, reason) for code, reason in reasons
                     if "`%s`" % reason not in " ".join(rows.get(str(code), [])))
    assert missing == []
    listed = {c["code"] for c in api["channels"][CHANNEL]["x-close-codes"]}
    assert sorted(set(int(c) for c in rows) - listed) == []


def rest_errors(src):
    """(status, code) of every error the terminal's REST calls answer, the
    core's refusals of a body included."""
    pairs = set()
    for name, text in src.items():
        # core/restcall.c: the engine's refusals before a call exists (404, 405, 503)
        if name.startswith("terminal/rest") or name == "core/restcall.c":
            pairs |= {(int(st), code) for st, code in
                      re.findall(r'gw_trest_error\(r,\s*(\d{3}),\s*"([a-z_]+)"\)', text)}
            pairs |= {(st, code) for st, code in
                      ((404, "not_found"), (405, "method_not_allowed"), (503, "unavailable"))
                      if '\\"error\\":\\"%s\\"' % code in text}
    pairs |= {(int(st), code) for st, code in
              re.findall(r'refuse_body\(wsi,\s*c,\s*(\d{3}),\s*"([a-z_]+)"\)', src["core/http.c"])}
    assert (409, "host_unavailable") in pairs and (413, "too_large") in pairs, pairs
    return pairs


def test_every_rest_error_is_in_protocol_md_and_asyncapi(src, api):
    pairs = rest_errors(src)
    lines = terminal_part().splitlines()
    assert sorted((st, code) for st, code in pairs
                  if not any(str(st) in l and '{"error":"%s"}' % code in l for l in lines)) == []
    documented = set()
    for call in api["x-terminal-rest"]:
        for status, schema in call["responses"].items():
            for code in ([schema["const"]] if "const" in schema else schema.get("enum", [])):
                documented.add((int(status), code))
    # 404 and 405 are the path's and the method's, before any call
    assert sorted(p for p in pairs if p not in documented and p[0] not in (404, 405)) == []


def test_the_rest_examples_fit_their_schemas(api):
    part = terminal_part()
    grants = [json.loads(line[4:]) for line in part.splitlines() if line.startswith("201 {")]
    hosts = [json.loads(line[4:]) for line in part.splitlines() if line.startswith("200 {")]
    opens = [json.loads(line) for line in part.splitlines() if line.startswith('{"host":')]
    schemas = api["components"]["schemas"]
    assert grants and hosts and opens
    assert all(valid(api, schemas["terminal_grant"], g) for g in grants)
    assert all(valid(api, schemas["terminal_hosts"], h) for h in hosts)
    assert all(valid(api, schemas["terminal_open"], o) for o in opens)
    assert not valid(api, schemas["terminal_open"], {"host": UUID, "x": 1})


def test_every_terminal_metric_is_in_gateway_md(src):
    # the control plane's families (stats.c), the log tail's and the REST calls'
    names = sorted(set(re.findall(r"bothy_terminal_[a-z_]+", src["terminal/control/stats.c"]
                                  + src["terminal/tail.c"] + src["terminal/rest/rest.c"])))
    assert len(names) >= 14 and {"bothy_terminal_log_seq", "bothy_terminal_rest_requests_total"} <= set(names), \
        names
    text = doc("gateway.md")
    assert [n for n in names if "`%s`" % n not in text] == []
