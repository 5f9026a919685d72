"""The terminal relay on one node, through real WebSocket clients on a real
gateway (docs/protocol.md, "Terminal streams"): both sides identify (the device with its
single-use token, the host with its key's signature over session and
grant), the first is told waiting, both paired, and binary frames go both
ways untouched; every refusal and its code; a path without a session ID
answered 404; a lone side closed with 4102 within open_timeout, counted by
side, the opening ended once with open_timeout; the host's 1000 ending the
session (closed_by_host), the device's 1000 after it, and a lone host's
1000 too.
"""
import asyncio
import os
import signal
import time
import urllib.error
import urllib.request

import websockets

from conftest import keys, new_id, poll_until  # noqa: F401  (keys is a fixture)
from conftest import Gateway
from terminal_streams import (OPEN_S, STREAM, HostKey, Side, Terminal, one_session, pair, run,  # noqa: F401
                              terminal, tnodes, tpg, tpg_single, wait_state, ws_base)


def upgrade_status(node, path):
    """The HTTP status a WebSocket upgrade of path gets (101 when it upgrades)."""
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (node.port, path), headers={
        "Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="})
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_both_sides_pair_and_bytes_flow_untouched_both_ways(tnodes, terminal):
    node, base, session = one_session(tnodes, terminal)
    blob = os.urandom(100_000)

    async def go():
        device, hostside = await pair(base, base, session)
        await device.ws.send(b"ls -l\r")
        typed = await hostside.bytes(6)
        # the host's output in frames of every size up to --max-message
        for i in range(0, len(blob), 2048):
            await hostside.ws.send(blob[i:i + 2048])
        out = await device.bytes(len(blob))
        await device.close()
        await hostside.close()
        return typed, out
    typed, out = run(go())
    assert typed == b"ls -l\r" and out == blob
    m = node.metrics()
    assert m['bothy_terminal_relay_bytes_total{direction="host_to_device"}'] == len(blob)
    assert m['bothy_terminal_relay_bytes_total{direction="device_to_host"}'] == 6
    assert m["bothy_terminal_relay_pairings_total"] == 1
    # the pairing was announced once (multi mode: terminal.session_paired staged, heard back)
    poll_until(lambda: node.metric('bothy_gateway_signals_received_total{kind="terminal.session_paired"}') == 1,
               timeout=5, what="terminal.session_paired heard")
    assert node.metric("bothy_gateway_signals_published_total") == 1


def test_host_first_then_device_with_or_without_the_subprotocol(tnodes, terminal):
    node, base, session = one_session(tnodes, terminal)

    async def go():
        hostside = await Side.open(base, session.id, session.host_identify())
        assert await hostside.op() == "waiting"
        device = await Side.open(base, session.id, session.device_identify(), subprotocol=False)
        assert await device.op() == "paired" and await hostside.op() == "paired"
        await hostside.ws.send(b"$ ")
        prompt = await device.bytes(2)
        names = hostside.ws.subprotocol, device.ws.subprotocol
        await device.close()
        await hostside.close()
        # /gateway does not take the stream's subprotocol
        try:
            await websockets.connect(base + "/gateway", subprotocols=["bothy-terminal-stream"])
            refused = False
        except (websockets.InvalidHandshake, OSError):
            refused = True
        return prompt, names, refused
    prompt, names, refused = run(go())
    assert prompt == b"$ " and names == ("bothy-terminal-stream", None) and refused


def test_refusals(tnodes, terminal, keys):
    node, = tnodes(1)
    host, owner, key = terminal.host()
    other_host, other_owner, other_key = terminal.host()
    session = terminal.open(host, owner)
    other = terminal.open(host, owner)
    base = ws_base(node)

    async def code_of(session_id, message, raw=False):
        side = await Side.open(base, session_id)
        if raw:
            await side.ws.send(message)
        else:
            await side.send_json(message)
        return await side.closed()

    async def go():
        codes = {}
        codes["not json"] = await code_of(session.id, "{", raw=True)
        codes["binary first"] = await code_of(session.id, b"\x00", raw=True)
        codes["unknown side"] = await code_of(session.id, {"op": "identify", "side": "both", "token": "x"})
        codes["extra member"] = await code_of(session.id, dict(session.device_identify(), x=1))
        codes["forged token"] = await code_of(session.id, {"op": "identify", "side": "device",
                                                           "token": session.token()[:-4] + "AAAA"})
        codes["expired token"] = await code_of(session.id, session.device_identify(exp=int(time.time()) - 1))
        codes["person token"] = await code_of(session.id, {"op": "identify", "side": "device",
                                                           "token": keys.person()})
        codes["another session's token"] = await code_of(session.id, other.device_identify())
        codes["another grant"] = await code_of(session.id, session.device_identify(grant=new_id()))
        codes["host: bad signature"] = await code_of(session.id, session.host_identify(key=HostKey()))
        codes["host: another host"] = await code_of(session.id, session.host_identify(
            key=other_key, host=other_host))
        codes["host: another session"] = await code_of(session.id, other.host_identify())
        codes["host: unknown host"] = await code_of(session.id, session.host_identify(host=new_id()))
        # the single use: the first stream keeps its place, the second is refused
        first = await Side.open(base, session.id, session.device_identify())
        assert await first.op() == "waiting"
        codes["token used twice"] = await code_of(session.id, session.device_identify())
        # a second host side of the grant
        hostside = await Side.open(base, session.id, session.host_identify())
        assert await first.op() == "paired" and await hostside.op() == "paired"
        codes["second host side"] = await code_of(session.id, session.host_identify())
        await hostside.ws.send(b"still here")
        still = await first.bytes(10)
        await hostside.ws.send('{"op":"identify"}')
        codes["text after paired"] = await hostside.closed()
        await first.close()
        return codes, still
    codes, still = run(go())
    assert still == b"still here"
    assert codes == {
        "not json": 4002, "binary first": 4002, "unknown side": 4002, "extra member": 4002,
        "forged token": 4001, "expired token": 4001, "person token": 4001,
        "another session's token": 4001, "another grant": 4001,
        "host: bad signature": 4001, "host: another host": 4001, "host: another session": 4001,
        "host: unknown host": 4001, "token used twice": 4001, "second host side": 4001,
        "text after paired": 4002,
    }
    log = node.log
    for secret in (session.id, host, owner, session.grant):
        assert secret not in log


def test_paths_without_a_session_are_404(tnodes, terminal):
    node, = tnodes(1)
    for rest in ("", "x", new_id().upper(), new_id() + "/", new_id() + "x", "../gateway"):
        assert upgrade_status(node, STREAM + rest) == 404, rest
    assert upgrade_status(node, "/terminal/nothing") == 404
    assert node.http(STREAM + new_id())[0] == 404     # not an upgrade: no HTTP route


def test_lone_device_and_lone_host_get_4102_and_the_opening_ends_once(tnodes, terminal, tpg):
    node, = tnodes(1)
    host, owner, key = terminal.host()
    s1 = terminal.open(host, owner)
    s2 = terminal.open(host, owner)
    base = ws_base(node)

    async def lone(identify, sid):
        side = await Side.open(base, sid, identify)
        assert await side.op() == "waiting"
        start = time.monotonic()
        code = await side.closed(timeout=OPEN_S + 3)
        return code, time.monotonic() - start

    async def go():
        return await asyncio.gather(lone(s1.device_identify(), s1.id), lone(s2.host_identify(), s2.id))
    (dcode, dtook), (hcode, htook) = run(go())
    assert dcode == hcode == 4102
    # the deadline is open_timeout from the identify, met within the sweep
    assert OPEN_S - 0.3 <= dtook <= OPEN_S + 1.0 and OPEN_S - 0.3 <= htook <= OPEN_S + 1.0
    wait_state(terminal, s1.id, ("closed", "open_timeout"))
    wait_state(terminal, s2.id, ("closed", "open_timeout"))
    assert terminal.log(s1.id) == ["session_opened", "session_closed"]
    m = node.metrics()
    assert m['bothy_terminal_relay_unpaired_total{side="device"}'] == 1
    assert m['bothy_terminal_relay_unpaired_total{side="host"}'] == 1
    assert m['bothy_gateway_closes_total{code="4102"}'] == 2
    assert node.http("/readyz")[0] == 200
    assert 'msg="terminal relay side unpaired" side=device code=4102' in node.log


def test_host_closing_with_1000_ends_the_session_closed_by_host(tnodes, terminal):
    node, base, session = one_session(tnodes, terminal)

    async def go():
        device, hostside = await pair(base, base, session)
        await hostside.ws.close(code=1000)
        op = await device.op()
        return op, await device.closed()
    op, code = run(go())
    assert (op, code) == ("waiting", 1000)
    wait_state(terminal, session.id, ("closed", "closed_by_host"))


def test_a_lone_host_closing_with_1000_ends_the_session_too(tnodes, terminal):
    """bothy-host answers waiting with 1000 when it has no shell for the
    session (host.md): the session ends closed_by_host, not open_timeout."""
    node, base, session = one_session(tnodes, terminal)

    async def go():
        hostside = await Side.open(base, session.id, session.host_identify())
        op = await hostside.op()
        await hostside.ws.close(code=1000)
        return op
    assert run(go()) == "waiting"
    wait_state(terminal, session.id, ("closed", "closed_by_host"), timeout=OPEN_S / 2)


def test_a_stopping_node_closes_both_sides_with_1001_and_exits_0(tnodes, terminal):
    node, base, session = one_session(tnodes, terminal)

    async def go():
        device, hostside = await pair(base, base, session)
        node.proc.send_signal(signal.SIGTERM)
        return await asyncio.gather(device.closed(), hostside.closed())
    assert run(go()) == [1001, 1001]
    assert node.proc.wait(timeout=10) == 0


def test_one_node_in_single_mode_relays_the_same(tpg_single, keys):
    """Single mode: the node's terminal.session_paired goes to its own
    handler at once (D-M2-47-4); pairing, bytes, a lone side's 4102 and the
    end it writes are the same."""
    node = Gateway("single", tpg_single, keys).start()
    try:
        terminal = Terminal(tpg_single, keys)
        host, owner, _ = terminal.host()
        paired, lone = terminal.open(host, owner), terminal.open(host, owner)
        base = ws_base(node)

        async def go():
            device, hostside = await pair(base, base, paired)
            await hostside.ws.send(b"single")
            got = await device.bytes(6)
            alone = await Side.open(base, lone.id, lone.device_identify())
            assert await alone.op() == "waiting"
            code = await alone.closed(timeout=OPEN_S + 3)
            await device.close()
            await hostside.close()
            return got, code
        got, code = run(go())
        assert (got, code) == (b"single", 4102)
        wait_state(terminal, lone.id, ("closed", "open_timeout"))
        assert node.metric("bothy_gateway_signals_published_total") == 0
        assert node.metric("bothy_terminal_relay_pairings_total") == 1
    finally:
        node.stop()
