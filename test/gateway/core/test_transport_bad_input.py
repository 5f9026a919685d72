"""Bad input from one socket gets its close code and never affects another
connection on the same node; a client that does not read is closed and the
node's memory stays bounded."""
import asyncio
import json
import socket
import time

import websockets

from cluster import World
from conftest import closed_with, heartbeat, identify, new_id, poll_until, run
from rawsock import frame, raw_ws

# (name, messages sent after identify or None for before, close code)
CASES = [
    ("malformed JSON", False, ['{"op":"heartbeat"'], 4002),
    ("not an object", False, ['["identify"]'], 4002),
    ("unknown op", True, ['{"op":"dance"}'], 4002),
    ("unknown field", True, ['{"op":"heartbeat","x":1}'], 4002),
    ("bad field", True, ['{"op":"focus","thread":"not-a-uuid"}'], 4002),
    ("missing field", True, ['{"op":"typing"}'], 4002),
    ("duplicate member", True, ['{"op":"idle","idle":true,"idle":false}'], 4002),
    ("op before identify", False, ['{"op":"heartbeat"}'], 4002),
    ("identify twice", True, ["IDENTIFY"], 4002),
    ("ack from a person", True, ['{"op":"ack","event":1}'], 4002),
    ("oversized frame", True, ['{"op":"heartbeat","pad":"' + "x" * 3000 + '"}'], 1009),
    # the last fragment passes the limit, so the client sends nothing after the close
    ("oversized fragmented message", True, [["{", "x" * 1000, "y" * 1100 + "}"]], 1009),
    ("binary frame", True, [b'{"op":"heartbeat"}'], 4002),
]


def test_each_bad_input_gets_its_code_and_spares_the_bystander(gateways, keys):
    node = gateways(1)

    async def go():
        bystander, ready = await identify(node.url, keys.person())
        assert ready["op"] == "ready"
        codes = {}
        for name, after_identify, messages, _ in CASES:
            token = keys.person()
            if after_identify:
                ws, ready = await identify(node.url, token)
                assert ready["op"] == "ready", name
            else:
                ws = await websockets.connect(node.url)
            for m in messages:
                await ws.send(json.dumps({"op": "identify", "token": token}) if m == "IDENTIFY" else m)
            codes[name] = await closed_with(ws)
            # the other connection still works after each
            assert await heartbeat(bystander) == {"op": "heartbeat_ack"}, name
        await bystander.close()
        return codes
    codes = run(go())
    assert codes == {name: code for name, _, _, code in CASES}


def test_fragmented_message_is_reassembled(gateways, keys):
    node = gateways(1)
    token = keys.person()

    async def go():
        ws = await websockets.connect(node.url)
        identify = json.dumps({"op": "identify", "token": token})
        # one message in five fragments (continuation frames)
        await ws.send([identify[i:i + 70] for i in range(0, len(identify), 70)])
        ready = json.loads(await asyncio.wait_for(ws.recv(), 5))
        await ws.send(['{"op":', '"heart', 'beat"}'])
        ack = json.loads(await asyncio.wait_for(ws.recv(), 5))
        await ws.close()
        return ready, ack
    ready, ack = run(go())
    assert ready["op"] == "ready" and ack == {"op": "heartbeat_ack"}


def test_no_identify_in_time_closes_4002(gateways):
    node = gateways(1)      # --identify-timeout 1500

    async def go():
        ws = await websockets.connect(node.url)
        start = time.monotonic()
        code = await closed_with(ws, timeout=10)
        return code, time.monotonic() - start
    code, elapsed = run(go())
    assert code == 4002
    assert 1.0 < elapsed < 5.0


def test_silence_after_ready_closes_4009_and_heartbeats_keep_it(gateways, keys):
    node = gateways(1, extra=["--heartbeat", "1000"])   # silence of 2 s closes

    async def go():
        quiet, ready = await identify(node.url, keys.person())
        assert ready["heartbeat_ms"] == 1000
        beating, _ = await identify(node.url, keys.person())
        start = time.monotonic()
        code = None
        # one heartbeat every 600 ms on one connection, nothing on the other
        while code is None and time.monotonic() - start < 8:
            assert await heartbeat(beating) == {"op": "heartbeat_ack"}
            try:
                await asyncio.wait_for(quiet.recv(), 0.6)
            except asyncio.TimeoutError:
                pass
            except websockets.ConnectionClosed as e:
                code = e.code
        elapsed = time.monotonic() - start
        alive = await heartbeat(beating) == {"op": "heartbeat_ack"}
        await beating.close()
        return code, elapsed, alive
    code, elapsed, alive = run(go())
    assert code == 4009
    assert 1.8 < elapsed < 4.0
    assert alive
    assert node.metric("bothy_gateway_heartbeats_missed_total") == 1
    assert node.metric('bothy_gateway_closes_total{code="4009"}') == 1
    assert "client closed: no heartbeat in time" in node.log


def test_client_that_does_not_read_is_closed_and_memory_stays_bounded(gateways, keys):
    node = gateways(1)      # --send-queue 4096
    before = node.rss_kib()

    async def bystander_connect():
        return await identify(node.url, keys.person())

    s = raw_ws(node.port)
    s.sendall(frame(json.dumps({"op": "identify", "token": keys.person()})))
    # ready first: a heartbeat before it would close the connection ("op before ready")
    s.settimeout(5)
    seen = b""
    while b'"op":"ready"' not in seen:
        chunk = s.recv(4096)
        assert chunk, "closed before ready"
        seen += chunk
    batch = frame('{"op":"heartbeat"}') * 2000
    s.settimeout(0.2)
    unsent = b""
    sent = 0
    deadline = time.monotonic() + 30
    # Send heartbeats and never read their acknowledgements.  The node's
    # metrics are read only when a send waits 0.2 s for room (the node
    # stopped reading us), not per batch: on a loaded machine a metrics
    # request takes tens of milliseconds, and the node's own socket buffer
    # (up to tcp_wmem's 4 MB of acknowledgements) must fill first.
    while True:
        assert time.monotonic() < deadline, "the node kept a client that never reads (%d bytes sent)" % sent
        if not unsent:
            unsent = batch
        try:
            # send(), not sendall(): a timeout must not cut a frame in two,
            # which would turn the rest of the stream into garbage
            n = s.send(unsent)
            unsent = unsent[n:]
            sent += n
            continue
        except socket.timeout:
            pass                # the node stopped reading us: its stall timer runs
        except (BrokenPipeError, ConnectionResetError):
            break
        if node.metric("bothy_gateway_send_queue_overflows_total") != 0:
            break
    s.close()
    poll_until(lambda: node.metric('bothy_gateway_closes_total{code="4008"}') == 1, timeout=10,
               what="close 4008 counted")
    assert node.metric("bothy_gateway_send_queue_overflows_total") == 1
    # far below what the unread acknowledgements would have taken
    assert node.rss_kib() - before < 16 * 1024
    assert "client closed: send queue full" in node.log

    async def still_serving():
        ws, ready = await bystander_connect()
        ok = ready["op"] == "ready" and await heartbeat(ws) == {"op": "heartbeat_ack"}
        await ws.close()
        return ok
    assert run(still_serving())


def test_client_stalled_on_its_last_message_is_closed_by_the_send_timeout(gateways, keys, pg):
    """The message the client stops taking is the last one queued: the
    node's own queue is empty while libwebsockets holds the rest of it, and
    the client sends nothing that would queue more.  The send timeout (1 s)
    closes it with 4008, not the heartbeat deadline a minute later."""
    node = gateways(1, extra=["--send-queue", "16777216"])
    w = World(pg)
    member = new_id()
    _, thread = w.room(member)
    s = raw_ws(node.port)
    s.sendall(frame(json.dumps({"op": "identify", "token": keys.person(member)})))
    poll_until(lambda: node.metric('bothy_gateway_connections{kind="person"}') == 1, timeout=5,
               what="the client identified")
    # one run document of 6 MB: more than the node's socket buffer (at most
    # 4 MB, tcp_wmem) and the client's together take
    assert w.run_changed(new_id(), thread, w.agent(), 1, {"blob": "x" * 6_000_000}) is True
    poll_until(lambda: node.metric('bothy_gateway_events_delivered_total{type="run.updated"}') == 1,
               timeout=5, what="the run document handed to the socket")
    poll_until(lambda: node.metric('bothy_gateway_closes_total{code="4008"}') == 1, timeout=6,
               what="close 4008 of the stalled client")
    s.close()
    assert "client closed: send queue full" in node.log
    assert "client closed: no heartbeat in time" not in node.log
