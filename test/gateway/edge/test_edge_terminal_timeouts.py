"""Only the node's own rules end a stream, never the edge's timeouts
(docs/operations.md, "The edge for terminals"): the shipped edge with its
stream location's timeouts cut to a test-sized 2 s, in front of a node
that pings every stream side every 500 ms (--stream-ping-interval).

What nginx 1.22 does (ngx_http_upstream_process_upgraded): every event
on either connection of an upgraded pair (a read from the client, a read
from the node, a write that completes) runs the same handler, which arms
the read timer of the node's connection again (proxy_read_timeout); the
write timers run only while a write is blocked and are armed again the
same way.  So nginx cuts a stream once its pair had no event at all for
proxy_read_timeout, whichever direction was silent: bytes one way keep it
(sessions A and B), and a pairing with nothing to say or a host data
connection waiting on a detached session is cut unless the node speaks
(the same node with pings that never come in time shows the cut: the
trap is real).
"""
import asyncio
import json
import time

import websockets

from conftest import keys, poll_until  # noqa: F401  (keys is a fixture)
from edge import edge  # noqa: F401  (a fixture)
from terminal_streams import Side, pair, run, terminal, tnodes, tpg, wait_state  # noqa: F401

EDGE_TIMEOUT_S = 2
PAST_S = 3 * EDGE_TIMEOUT_S + 0.5       # three times the edge's timeout, and a margin


def short_stream_timeouts(text):
    """The shipped edge with the stream location's three timeouts at EDGE_TIMEOUT_S."""
    assert text.count("_timeout 1830s;") == 3, "the shipped stream timeouts moved"
    return text.replace("_timeout 1830s;", "_timeout %ds;" % EDGE_TIMEOUT_S)


def waiting_hosts(node):
    return node.metric('bothy_terminal_relay_streams{state="waiting",side="host"}')


async def every(period, until, action):
    while time.monotonic() < until:
        await action()
        await asyncio.sleep(period)


async def round_trip(device, hostside):
    """Bytes both ways through a pairing that must still be there."""
    await device.ws.send(b"k")
    assert await hostside.bytes(1, timeout=5) == b"k"
    await hostside.ws.send(b"o")
    assert await device.bytes(1, timeout=5) == b"o"


def test_no_stream_is_cut_by_the_edge_one_way_or_silent(tnodes, terminal, edge):
    node, = tnodes(1, extra=["--stream-ping-interval", "500"])
    e = edge([node], change=short_stream_timeouts)
    host, owner, _ = terminal.host()
    a, b, c, d = (terminal.open(host, owner) for _ in range(4))

    async def go():
        pairs = {}
        for name, s in (("a", a), ("b", b), ("c", c), ("d", d)):
            pairs[name] = await pair(e.ws_base, e.ws_base, s)
            s.started()
        # d: the device leaves, the session is detached, its host's data connection waits silent
        await pairs["d"][0].close()
        wait_state(terminal, d.id, ("detached", None))
        until = time.monotonic() + PAST_S
        # a: output only (the device never writes); b: keystrokes only; c: silent
        await asyncio.gather(
            every(0.5, until, lambda: pairs["a"][1].ws.send(b"line\r\n")),
            every(0.5, until, lambda: pairs["b"][0].ws.send(b"x")),
            asyncio.sleep(PAST_S))
        # each pairing still relays, both ways (a's and b's backlog read first)
        await pairs["a"][0].bytes(len(b"line\r\n") * int(PAST_S / 0.5), timeout=5)
        await pairs["b"][1].bytes(int(PAST_S / 0.5), timeout=5)
        for name in "abc":
            await round_trip(*pairs[name])
        assert pairs["d"][1].ws.open and waiting_hosts(node) == 1
        assert [terminal.state(s.id) for s in (a, b, c, d)] == [("active", None)] * 3 + [("detached", None)]
        for name in "abc":
            await pairs[name][0].close()
        await pairs["d"][1].close(4000)
    run(go())


def test_without_the_nodes_pings_in_time_the_edge_cuts_a_silent_pairing(tnodes, terminal, edge):
    """The trap the pings close: the same pairing with the node's pings
    further apart than the edge's timeout is cut by nginx after it."""
    node, = tnodes(1, extra=["--stream-ping-interval", str(int(PAST_S * 10 * 1000))])
    e = edge([node], change=short_stream_timeouts)
    host, owner, _ = terminal.host()
    session = terminal.open(host, owner)

    async def go():
        device, hostside = await pair(e.ws_base, e.ws_base, session)
        start = time.monotonic()
        code = await device.closed(timeout=PAST_S)
        return code, time.monotonic() - start
    code, after = run(go())
    # no close frame: nginx ends the TCP connection; not before its timeout
    assert code == 1006 and after >= EDGE_TIMEOUT_S - 0.3, (code, after)
