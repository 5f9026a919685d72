"""The relay's docs keep up with its code, as clients/test_clients_docs.py
does for the gateway route: every metric of terminal/relay/stats.c has its row in
gateway.md; every close code and reason the relay sends stands in the
stream close codes of protocol.md and in the stream channel of
asyncapi.yaml; every stream example of protocol.md is exactly one message
of that channel; and the channel's schemas refuse what the relay's parser
refuses (test/unit/gateway/test_relay_wire.c) and take what it takes.
"""
import json
import re

import pytest

from docs_lib import LITERALS, api, c_string, doc, src, table_rows, valid, resolve  # noqa: F401  (fixtures)

CHANNEL = "/terminal/stream/{session}"
S = "0190a5d0-0000-7000-8000-000000000001"
SIG = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0-Pw"


def terminal_sources(src):
    return {name: text for name, text in src.items() if name.startswith("terminal/relay")}


def test_every_relay_metric_is_in_gateway_md(src):
    names = sorted(set(re.findall(r"bothy_terminal_[a-z_]+", src["terminal/relay/stats.c"])))
    assert len(names) >= 10 and "bothy_terminal_relay_unpaired_total" in names, names
    text = doc("gateway.md")
    assert [n for n in names if "`%s`" % n not in text] == []


def relay_closes(src):
    """{code: {reasons}} of every close the relay decides with its own codes."""
    codes = {k: int(v) for k, v in re.findall(r"#define\s+(GW_TCODE_(?:ENDED|REFUSED|LONE))\s+(\d{4})\b",
                                               src["terminal/model.h"])}
    assert set(codes.values()) == {1000, 4001, 4102}, codes
    found = {}
    for text in terminal_sources(src).values():
        for const, lit in re.findall(r"gw_conn_close\s*\([^,]+,\s*(GW_TCODE_[A-Z]+)\s*,\s*" + LITERALS, text):
            found.setdefault(codes[const], set()).add(c_string(lit))
    assert set(found) == {1000, 4001, 4102}, found
    return found


def stream_section():
    text = doc("protocol.md")
    return text[text.index("\n## Terminal streams"):]


def test_every_stream_close_code_and_reason_is_in_protocol_md(src):
    rows = {r[0].strip("`"): r for r in table_rows(stream_section()) if r and re.fullmatch(r"`\d{4}`", r[0])}
    assert {"1000", "1001", "4001", "4002", "4008", "4102"} <= set(rows), sorted(rows)
    missing = [(code, reason) for code, reasons in relay_closes(src).items() for reason in reasons
               if "`%s`" % reason not in " ".join(rows.get(str(code), []))]
    assert missing == []


def test_the_stream_channel_lists_every_close_code(src, api):
    listed = {c["code"] for c in api["channels"][CHANNEL]["x-close-codes"]}
    assert set(relay_closes(src)) | {1001, 4002, 4008} <= listed, listed


def messages(api, operation):
    return [resolve(api, r) for r in api["channels"][CHANNEL][operation]["message"]["oneOf"]]


def accepted_by(api, operation, value):
    return [m["name"] for m in messages(api, operation)
            if m.get("contentType") != "application/octet-stream" and valid(api, m["payload"], value)]


def test_every_stream_example_is_one_message_of_the_channel(api):
    found = []
    for line in stream_section().splitlines():
        if line.startswith("-> {"):
            found.append(("publish", line[3:]))
        elif line.startswith("<- {"):
            found.append(("subscribe", line[3:]))
    assert len(found) >= 4, found
    wrong = [(op, accepted_by(api, op, json.loads(line)), line[:60]) for op, line in found
             if len(accepted_by(api, op, json.loads(line))) != 1]
    assert wrong == []


def host(**change):
    msg = {"op": "identify", "side": "host", "host": S, "session": S, "grant": S, "sig": SIG}
    msg.update(change)
    return msg


REFUSED = [
    {"op": "identify"},
    {"op": "identify", "side": "both", "token": "t"},
    {"op": "identify", "side": "device"},
    {"op": "identify", "side": "device", "token": ""},
    {"op": "identify", "side": "device", "token": "has space"},
    {"op": "identify", "side": "device", "token": "t" * 1025},
    {"op": "identify", "side": "device", "token": "t", "x": 1},
    {"op": "identify", "side": "device", "token": "t", "session": S},
    host(host=S.upper()),
    host(session=None),
    host(sig=SIG + "=="),
    host(sig="AAEC"),
    host(sig=SIG[:-1] + "x"),
    host(sig=SIG.replace("-", "+")),
    host(token="t"),
    {k: v for k, v in host().items() if k != "grant"},
]
ACCEPTED = [
    {"op": "identify", "side": "device", "token": "!" * 1024},
    host(),
]


@pytest.mark.parametrize("message", REFUSED, ids=lambda m: json.dumps(m)[:60])
def test_the_stream_schemas_refuse_what_the_parser_refuses(api, message):
    assert accepted_by(api, "publish", message) == []


@pytest.mark.parametrize("message", ACCEPTED, ids=lambda m: json.dumps(m)[:60])
def test_the_stream_schemas_take_what_the_parser_takes(api, message):
    assert len(accepted_by(api, "publish", message)) == 1
