"""The terminal's REST calls on one node (docs/protocol.md, "The terminal:
REST calls"; docs/terminal.md, "The REST calls"): the 201 of an open and an
attach with a terminal session token that verifies, 409 host_unavailable
when the host is not connected, 403 for another person's host, the
recheck after the commit that returns no token when it fails
(D-M2-47-27, made to happen by holding the log's lock while the host's
connection goes), DELETE and session.close, GET /v1/terminal/hosts with
connected, and every refusal of the request itself, the request body's
included (core/http.c: 400, 401, 404, 405, 411, 413)."""
import http.client
import json
import time

import pytest

from cluster import parse_time
from conftest import (active_host, terminal_call, new_id, poll_until, run, terminal_instance,
                      terminal_rest)
from fakehost import b64d

SESSIONS = "/v1/terminal/sessions"


@pytest.fixture(scope="module")
def pg():
    inst = terminal_instance("terminal-rest-pg")
    yield inst
    inst.close()



def token_payload(token):
    return json.loads(b64d(token.split(".")[2]))


def test_open_answers_201_with_a_terminal_token_and_the_host_gets_session_open(gateways, tworld, keys):
    node = gateways(1)
    device = new_id()

    async def go():
        host, owner, conn = await active_host(tworld, node)
        status, body = await terminal_call(node, "POST", SESSIONS, keys.person(owner, device), {"host": host})
        sopen = await conn.expect("session.open", timeout=5)
        await conn.close()
        return owner, status, body, sopen
    owner, status, body, sopen = run(go())
    assert status == 201, body
    assert set(body) == {"session", "stream", "token", "expires_at"}
    assert body["stream"] == "/terminal/stream/" + body["session"]
    state, detail, grant = tworld.session(body["session"])
    assert (state, detail) == ("opening", None)
    assert sopen == {"op": "session.open", "session": body["session"], "grant": grant, "device": device}
    payload = token_payload(body["token"])
    expires = parse_time(body["expires_at"])
    assert payload == {"kind": "terminal", "session": body["session"], "grant": grant,
                       "person": owner, "device": device, "exp": int(expires)}
    # expires_at is the grant's expiry: the open timeout (8 s) after the open
    db_expires = tworld.pg.query("SELECT extract(epoch FROM grant_expires_at)::float8 "
                                "FROM bothy.terminal_sessions WHERE session = %s", body["session"])[0][0]
    assert abs(expires - db_expires) < 0.001 and abs(expires - (time.time() + 8)) < 5
    assert node.metric('bothy_terminal_rest_requests_total{endpoint="POST /v1/terminal/sessions",status="201"}') == 1


def test_not_connected_is_409_and_another_persons_host_403(gateways, tworld, keys):
    node = gateways(1)
    host, _, owner = tworld.register()
    status, body = terminal_rest(node, "POST", SESSIONS, keys.person(owner), {"host": host})
    assert (status, body) == (409, {"error": "host_unavailable"})

    async def go():
        host, owner, conn = await active_host(tworld, node)
        other = await terminal_call(node, "POST", SESSIONS, keys.person(), {"host": host})
        unknown = await terminal_call(node, "POST", SESSIONS, keys.person(owner), {"host": new_id()})
        await conn.close()
        # gone: 409 again, and nothing opened
        poll_until(lambda: node.metric('bothy_terminal_control_connections{state="active"}') == 0,
                   timeout=5, what="connection gone")
        after = await terminal_call(node, "POST", SESSIONS, keys.person(owner), {"host": host})
        return other, unknown, after
    other, unknown, after = run(go())
    assert other == (403, {"error": "forbidden"}) and unknown == (403, {"error": "forbidden"})
    assert after == (409, {"error": "host_unavailable"})
    assert tworld.pg.query("SELECT count(*) FROM bothy.terminal_sessions WHERE host = %s", host)[0][0] == 0


def test_a_failed_recheck_returns_no_token_and_ends_the_session(gateways, tworld, keys, pg):
    # the open's commit waits for the log's lock the test holds; meanwhile
    # the host's connection goes, so the recheck after the commit finds the
    # host not connected
    node = gateways(1, extra=["--db-timeout", "5000"])

    async def go():
        host, owner, conn = await active_host(tworld, node)
        locker = pg.connect(autocommit=False)
        locker.cursor().execute("LOCK TABLE bothy.terminal_log_order IN EXCLUSIVE MODE")
        pending = terminal_call(node, "POST", SESSIONS, keys.person(owner), {"host": host})
        poll_until(lambda: pg.query(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'bothy-gateway' "
            "AND wait_event_type = 'Lock'")[0][0] == 1, timeout=5, what="the open waits for the lock")
        await conn.close()
        poll_until(lambda: node.metric('bothy_terminal_control_connections{state="active"}') == 0,
                   timeout=5, what="connection gone")
        locker.commit()
        locker.close()
        status, body = await pending
        return host, status, body
    host, status, body = run(go())
    assert (status, body) == (409, {"error": "host_unavailable"})
    rows = tworld.pg.query("SELECT state, close_detail FROM bothy.terminal_sessions WHERE host = %s", host)
    assert rows == [("closed", "recheck_failed")]


def test_attach_a_detached_session_and_refusals(gateways, tworld, keys):
    node = gateways(1)
    device2 = new_id()

    async def go():
        host, owner, conn = await active_host(tworld, node)
        status, opened = await terminal_call(node, "POST", SESSIONS, keys.person(owner), {"host": host})
        assert status == 201
        sopen = await conn.expect("session.open")
        path = "%s/%s/attach" % (SESSIONS, opened["session"])
        not_detached = await terminal_call(node, "POST", path, keys.person(owner), raw=b"")
        await conn.started(sopen["session"], sopen["grant"])
        poll_until(lambda: tworld.session(opened["session"])[0] == "active", timeout=5, what="active")
        assert tworld.pg.query("SELECT bothy.terminal_session_detach(%s, %s)",
                              opened["session"], sopen["grant"])[0][0]
        forbidden = await terminal_call(node, "POST", path, keys.person(), raw=b"")
        bad_body = await terminal_call(node, "POST", path, keys.person(owner), {"x": 1})
        status, attached = await terminal_call(node, "POST", path, keys.person(owner, device2), body={})
        again = await conn.expect("session.open")
        await conn.close()
        poll_until(lambda: node.metric('bothy_terminal_control_connections{state="active"}') == 0,
                   timeout=5, what="connection gone")
        # the host gone: 409, and the session stays detached
        gone = await terminal_call(node, "POST", path, keys.person(owner), raw=b"")
        return opened, not_detached, forbidden, bad_body, status, attached, again, gone
    opened, not_detached, forbidden, bad_body, status, attached, again, gone = run(go())
    assert not_detached == (409, {"error": "not_detached"})
    assert forbidden == (403, {"error": "forbidden"})
    assert bad_body == (400, {"error": "bad_request"})
    assert status == 201 and attached["session"] == opened["session"]
    state, _, grant = tworld.session(opened["session"])
    assert again == {"op": "session.open", "session": opened["session"], "grant": grant, "device": device2}
    assert gone == (409, {"error": "host_unavailable"})
    assert state == "detached" and tworld.session(opened["session"])[0] == "detached"


def test_delete_ends_the_session_and_the_host_gets_session_close(gateways, tworld, keys):
    node = gateways(1)

    async def go():
        host, owner, conn = await active_host(tworld, node)
        status, opened = await terminal_call(node, "POST", SESSIONS, keys.person(owner), {"host": host})
        await conn.expect("session.open")
        path = "%s/%s" % (SESSIONS, opened["session"])
        forbidden = await terminal_call(node, "DELETE", path, keys.person())
        deleted = await terminal_call(node, "DELETE", path, keys.person(owner))
        close = await conn.expect("session.close", timeout=5)
        twice = await terminal_call(node, "DELETE", path, keys.person(owner))
        await conn.close()
        return opened, forbidden, deleted, close, twice
    opened, forbidden, deleted, close, twice = run(go())
    assert forbidden == (403, {"error": "forbidden"})
    assert deleted == (204, None) and twice == (204, None)
    assert close == {"op": "session.close", "session": opened["session"]}
    assert tworld.session(opened["session"])[:2] == ("closed", "closed_by_device")


def test_hosts_with_connected(gateways, tworld, keys):
    node = gateways(1)

    async def go():
        host, owner, conn = await active_host(tworld, node)
        other, _, _ = tworld.register(owner, name='the "other" one')
        status, body = await terminal_call(node, "GET", "/v1/terminal/hosts", keys.person(owner))
        await conn.close()
        return host, other, status, body
    host, other, status, body = run(go())
    assert status == 200
    assert sorted(body["hosts"], key=lambda h: h["host"]) == sorted([
        {"host": host, "name": "laptop", "state": "active", "connected": True},
        {"host": other, "name": 'the "other" one', "state": "pairing", "connected": False},
    ], key=lambda h: h["host"])
    assert terminal_rest(node, "GET", "/v1/terminal/hosts", keys.person()) == (200, {"hosts": []})


def raw_request(node, method, path, headers, *pieces):
    """(status, body) of a hand-written HTTP/1.1 request: a chunked body,
    or a body sent in pieces 0.1 s apart."""
    c = http.client.HTTPConnection("127.0.0.1", node.port, timeout=10)
    c.putrequest(method, path, skip_accept_encoding=True)
    for name, value in headers.items():
        c.putheader(name, value)
    c.endheaders()
    for piece in pieces:
        c.send(piece)
        time.sleep(0.1)
    r = c.getresponse()
    text = r.read().decode()
    c.close()
    return r.status, json.loads(text) if text else None


def test_refusals_of_the_request(gateways, keys):
    node = gateways(1)
    person = keys.person()
    auth = {"Authorization": "Bearer " + person}
    host = new_id()
    assert terminal_rest(node, "POST", SESSIONS, None, {"host": host}) == (401, {"error": "token_refused"})
    assert terminal_rest(node, "POST", SESSIONS, keys.agent(), {"host": host}) == (401, {"error": "token_refused"})
    for body in (b"", b"{", b"[]", b'{"host":1}', b'{"host":"%s","x":1}' % host.encode(),
                 b'{"host":"%s","host":"%s"}' % (host.encode(), host.encode()),
                 b'{"host":"%s"}' % host.upper().encode()):
        assert terminal_rest(node, "POST", SESSIONS, person, raw=body) == (400, {"error": "bad_request"}), body
    assert terminal_rest(node, "GET", SESSIONS, person) == (405, {"error": "method_not_allowed"})
    assert terminal_rest(node, "POST", "/v1/terminal/hosts", person, raw=b"") == (405, {"error": "method_not_allowed"})
    assert terminal_rest(node, "DELETE", "%s/%s/attach" % (SESSIONS, host), person) == (405, {"error": "method_not_allowed"})
    for path in ("/v1/terminal/", "/v1/terminal/sessionsx", "%s/%s/" % (SESSIONS, host),
                 "%s/%s" % (SESSIONS, host.upper()), "%s/not-a-uuid" % SESSIONS,
                 "%s/%s/attachx" % (SESSIONS, host)):
        assert terminal_rest(node, "GET", path, person) == (404, {"error": "not_found"}), path
    # the body's length: declared, and at most 1024 bytes
    big = b'{"host":"%s","pad":"%s"}' % (host.encode(), b"x" * 1024)
    assert terminal_rest(node, "POST", SESSIONS, person, raw=big) == (413, {"error": "too_large"})
    chunked = raw_request(node, "POST", SESSIONS, dict(auth, **{"Transfer-Encoding": "chunked"}),
                          b"%x\r\n%s\r\n0\r\n\r\n" % (len(b'{"host":"%s"}' % host.encode()),
                                                     b'{"host":"%s"}' % host.encode()))
    assert chunked == (411, {"error": "length_required"})
    # a body in pieces is read whole; the node still serves
    whole = b'{"host":"%s"}' % host.encode()
    status, body = raw_request(node, "POST", SESSIONS, dict(auth, **{"Content-Length": str(len(whole))}),
                               whole[:20], whole[20:])
    assert (status, body) == (403, {"error": "forbidden"})
    assert node.http("/healthz")[0] == 200
