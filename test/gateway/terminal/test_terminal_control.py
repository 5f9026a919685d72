"""The control connection of a host service at /terminal/host on one node
(docs/protocol.md, "The terminal: control connection"): the challenge,
pair while pairing and hello with the key the database holds, ready with
the conn ID and the host's state, the confirmation reaching a confirming
connection without a reconnect, heartbeats and their deadline, report and
session.started, and every refusal with its close code (4001, 4002, 4009,
4110, 4111) without harm to a bystander.  multi mode, real PostgreSQL,
real gateways, the fake host of fakehost.py."""
import asyncio
import uuid

import pytest

from conftest import active_host, new_id, node_base, run, terminal_call, terminal_instance
from fakehost import Closed, ControlConnection, HostKey


@pytest.fixture(scope="module")
def pg():
    inst = terminal_instance("terminal-control-pg")
    yield inst
    inst.close()


def is_uuidv7(text):
    return uuid.UUID(text).version == 7 and str(uuid.UUID(text)) == text


def test_pair_confirm_and_ready_again_on_the_same_connection(gateways, tworld):
    node = gateways(1)

    async def go():
        key = HostKey()
        host, code, _ = tworld.register()
        conn = await ControlConnection(node_base(node), key).connect()
        ready = await conn.pair(host, code)
        assert tworld.host_state(host) == "confirming"
        # a wrong fingerprint changes nothing on the connection
        assert tworld.confirm(host, "SHA256:wrong") == "confirming"
        assert tworld.confirm(host, key.fingerprint) == "active"
        again = await conn.expect("ready", timeout=5)
        await conn.report()
        await conn.send({"op": "heartbeat"})
        await asyncio.sleep(0.3)
        acks = conn.times_of("heartbeat_ack")
        await conn.close()
        return ready, again, acks
    ready, again, acks = run(go())
    assert set(ready) == {"op", "conn", "state", "heartbeat_ms"}
    assert ready["state"] == "confirming" and ready["heartbeat_ms"] == 1000
    assert is_uuidv7(ready["conn"])
    assert again == dict(ready, state="active")
    assert len(acks) == 1


def test_hello_with_the_key_the_database_holds(gateways, tworld):
    node = gateways(1)

    async def go():
        host, _, conn = await active_host(tworld, node)
        key = conn.key
        await conn.close()
        # a new connection says hello with the same key
        second = await ControlConnection(node_base(node), key).connect()
        ready = await second.hello(host)
        first_conn = conn.ready["conn"]
        await second.close()
        return ready, first_conn
    ready, first_conn = run(go())
    assert ready["state"] == "active" and is_uuidv7(ready["conn"])
    assert ready["conn"] > first_conn           # UUIDv7: a later connection, a larger ID


@pytest.mark.parametrize("case", ["unknown_host", "wrong_key", "bad_signature", "wrong_code",
                                  "pair_signed_by_another_key", "pair_when_active"])
def test_refusals_close_with_4001(gateways, tworld, case):
    node = gateways(1)

    async def go():
        key = HostKey()
        bystander_host, _, bystander = await active_host(tworld, node)
        conn = await ControlConnection(node_base(node), key).connect()
        try:
            if case == "unknown_host":
                await conn.hello(new_id())
            elif case == "wrong_key":
                await conn.hello(bystander_host)      # the key is not the host's
            elif case == "bad_signature":
                await conn.hello(bystander_host, sig=bystander.key.sign("bothy-host-hello-v1",
                                                                         bystander_host, "x"))
            elif case == "wrong_code":
                host, code, _ = tworld.register()
                await conn.pair(host, "0" * 16 if code != "0" * 16 else "1" * 16)
            elif case == "pair_signed_by_another_key":
                host, code, _ = tworld.register()
                await conn.pair(host, code, sig=HostKey().sign("bothy-host-pair-v1", host, conn.nonce))
            elif case == "pair_when_active":
                host, code, _ = tworld.register()
                await conn.pair(bystander_host, code)
        except Closed as e:
            code = e.code
        else:
            raise AssertionError("not refused")
        # the bystander is untouched
        await bystander.send({"op": "heartbeat"})
        await asyncio.sleep(0.2)
        alive = bystander.close_code is None
        await bystander.close()
        return code, alive
    code, alive = run(go())
    assert code == 4001 and alive
    reason = {"unknown_host": "unknown_host", "wrong_key": "bad_signature",
              "bad_signature": "bad_signature", "wrong_code": "wrong_code",
              "pair_signed_by_another_key": "bad_signature", "pair_when_active": "wrong_code"}[case]
    assert node.metric('bothy_terminal_control_refused_total{reason="%s"}' % reason) == 1


def test_hello_of_a_pairing_host_is_4110_and_of_a_disabled_host_4111(gateways, tworld):
    node = gateways(1)

    async def go():
        host, _, conn = await active_host(tworld, node)
        key = conn.key
        tworld.disable(host)
        disabled_close = await conn.closed()
        refused = await ControlConnection(node_base(node), key).connect()
        try:
            await refused.hello(host)
        except Closed as e:
            disabled_hello = e.code
        tworld.repair(host)
        again = await ControlConnection(node_base(node), key).connect()
        try:
            await again.hello(host)
        except Closed as e:
            pairing_hello = e.code
        return disabled_close, disabled_hello, pairing_hello
    assert run(go()) == (4111, 4111, 4110)


@pytest.mark.parametrize("message", [
    "not json", "[]", '{"op":1}', '{"op":"dance"}', '{"op":"hello"}',
    '{"op":"hello","host":"%s","sig":"AA","version":"v"}' % new_id(),
    '{"op":"hello","host":"%s","sig":"%s","version":""}' % (new_id(), "A" * 86),
    '{"op":"hello","host":"%s","sig":"%s","version":"v","x":1}' % (new_id(), "A" * 86),
    '{"op":"pair","host":"%s","code":"ILOU0000ilou0000","public_key":"%s","sig":"%s"}'
    % (new_id(), "A" * 43, "A" * 86),
    '{"op":"heartbeat"}', '{"op":"report","sessions":[]}',
])
def test_malformed_or_unexpected_before_ready_is_4002(gateways, tworld, message):
    node = gateways(1)

    async def go():
        conn = await ControlConnection(node_base(node), HostKey()).connect()
        await conn.send_raw(message)
        return await conn.closed()
    assert run(go()) == 4002


def test_unexpected_after_ready_and_binary_frames_are_4002(gateways, tworld):
    node = gateways(1)

    async def go():
        codes = []
        for message in ({"op": "hello", "host": new_id(), "sig": "A" * 86, "version": "v"},
                        {"op": "probe_ack", "sig": "A" * 86},
                        {"op": "report", "sessions": [new_id()] * 33}):
            _, _, conn = await active_host(tworld, node)
            await conn.send(message)
            codes.append(await conn.closed())
        _, _, conn = await active_host(tworld, node)
        await conn.ws.send(b"\x00\x01")
        codes.append(await conn.closed())
        # session.started from a confirming host is not its to send
        host, code, _ = tworld.register()
        conn = await ControlConnection(node_base(node), HostKey()).connect()
        await conn.pair(host, code)
        await conn.started(new_id(), new_id())
        codes.append(await conn.closed())
        return codes
    assert run(go()) == [4002] * 5


def test_no_hello_in_time_is_4002_and_no_heartbeat_in_time_4009(gateways, tworld):
    node = gateways(1)

    async def go():
        silent = await ControlConnection(node_base(node), HostKey()).connect()
        no_hello = await silent.closed(timeout=5)
        _, _, conn = await active_host(tworld, node, heartbeats=False)
        # heartbeat_ms 1000 x miss limit 3: alive at 2 s, closed by about 3 s
        await asyncio.sleep(2.0)
        alive = conn.close_code is None
        loop = asyncio.get_running_loop()
        start = loop.time()
        silent_close = await conn.closed(timeout=5)
        return no_hello, alive, silent_close, loop.time() - start
    no_hello, alive, silent_close, waited = run(go())
    assert no_hello == 4002 and alive and silent_close == 4009
    assert waited < 2.0
    assert node.metric("bothy_terminal_heartbeats_missed_total") == 1


def test_heartbeats_keep_it_open(gateways, tworld):
    node = gateways(1)

    async def go():
        _, _, conn = await active_host(tworld, node)
        await conn.nothing_for(4.0)
        acks = len(conn.times_of("heartbeat_ack"))
        await conn.close()
        return acks
    assert run(go()) >= 3


def test_session_started_commits_and_a_report_gets_session_close_for_closed_sessions(
        gateways, tworld, keys):
    node = gateways(1)

    async def go():
        host, owner, conn = await active_host(tworld, node)
        status, opened = await terminal_call(node, "POST", "/v1/terminal/sessions",
                                             keys.person(owner), {"host": host})
        assert status == 201, opened
        sopen = await conn.expect("session.open", timeout=5)
        state_before = tworld.session(opened["session"])[0]
        await conn.started(sopen["session"], sopen["grant"])
        # a session of another host and a grant that is not the session's change nothing
        await conn.started(sopen["session"], new_id())
        for _ in range(50):
            if tworld.session(opened["session"])[0] == "active":
                break
            await asyncio.sleep(0.1)
        state_after = tworld.session(opened["session"])[0]
        # the report names the running session, a closed one and an unknown one
        closed_one = new_id()
        await conn.report([sopen["session"], closed_one])
        close = await conn.expect("session.close")
        await conn.nothing_for(0.5)
        await conn.close()
        return opened, sopen, state_before, state_after, close, closed_one
    opened, sopen, before, after, close, closed_one = run(go())
    assert sopen["session"] == opened["session"] and set(sopen) == {"op", "session", "grant", "device"}
    assert before == "opening" and after == "active"
    assert close == {"op": "session.close", "session": closed_one}
    assert node.metric("bothy_terminal_sessions_started_total") == 1


def test_at_login_every_session_of_the_host_that_is_not_closed_gets_session_open(gateways, tworld, keys):
    node = gateways(1)

    async def go():
        host, owner, conn = await active_host(tworld, node)
        opened = []
        for _ in range(2):
            status, body = await terminal_call(node, "POST", "/v1/terminal/sessions", keys.person(owner),
                                               {"host": host})
            assert status == 201, body
            opened.append(body["session"])
            await conn.expect("session.open", timeout=5)
        assert (await terminal_call(node, "DELETE", "/v1/terminal/sessions/" + opened[1],
                                    keys.person(owner)))[0] == 204
        await conn.expect("session.close")
        await conn.close()
        again = await ControlConnection(node_base(node), conn.key).connect()
        await again.hello(host)
        await again.report()
        again.start_heartbeats()
        sopen = await again.expect("session.open", timeout=5)
        await again.nothing_for(1.0)
        await again.close()
        return opened, sopen
    opened, sopen = run(go())
    state, _, grant = tworld.session(opened[0])
    assert sopen == {"op": "session.open", "session": opened[0], "grant": grant,
                     "device": sopen["device"]} and state == "opening"
