"""The stream pings and the stall timer (docs/protocol.md, "Pings" and
"Close codes"): a device that reads nothing is closed 4008 --send-timeout
after its output began to wait, pings or not.  A ping is sent only when no
output waits, so it never sits behind the part of a message lws holds and
never arms the timer again.

Three raw devices that never read (a 4 KiB receive window), each paired,
established a third of the ping interval apart, so that the node's pings
come at three phases; each host then sends one message of 1 MiB at the same
moment, which the node cannot hand to its device's socket whole.  With the
ping interval equal to the send timeout, a ping that armed the timer again
would keep at least two of the three open at least a third of the interval
longer than the send timeout.
"""
import asyncio
import base64
import json
import os
import socket
import time

from conftest import keys  # noqa: F401  (keys is a fixture)
from rawsock import frame
from terminal_streams import STREAM, Side, run, terminal, tnodes, tpg, ws_base  # noqa: F401

SEND_TIMEOUT_MS = 2000
SWEEP_MS = 200              # src/gateway/core/conn.h: GW_SWEEP_MS
MESSAGE = 1 << 20


def raw_device(port, session):
    """A device on a bare socket with a tiny receive buffer and small
    segments that never reads after the handshake: its identify sent."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    # a small segment: the node's send buffer grows by segments (loopback's
    # 64 KiB ones would let it take the whole message)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 1024)
    s.connect(("127.0.0.1", port))
    s.sendall(("GET %s%s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
               % (STREAM, session.id, base64.b64encode(os.urandom(16)).decode())).encode())
    reply = b""
    s.settimeout(5)
    while b"\r\n\r\n" not in reply:
        chunk = s.recv(1)               # the head only: nothing of the stream is read
        assert chunk, "handshake refused"
        reply += chunk
    assert reply.startswith(b"HTTP/1.1 101"), reply
    s.sendall(frame(json.dumps(session.device_identify())))
    return s


def test_a_device_that_reads_nothing_is_closed_after_the_send_timeout_pings_or_not(tnodes, terminal):
    interval = SEND_TIMEOUT_MS
    node, = tnodes(1, extra=["--stream-ping-interval", str(interval),
                             "--send-timeout", str(SEND_TIMEOUT_MS),
                             "--max-message", str(MESSAGE), "--send-queue", str(2 * MESSAGE)])
    base = ws_base(node)
    host, owner, _ = terminal.host()
    sessions = [terminal.open(host, owner) for _ in range(3)]

    async def go():
        devices, hosts = [], []
        for i, session in enumerate(sessions):
            if i:
                await asyncio.sleep(interval / 3 / 1000)
            devices.append(raw_device(node.port, session))
            side = await Side.open(base, session.id, session.host_identify())
            # the device's identify may still be checked when the host's is
            op = await side.op()
            assert op in ("waiting", "paired"), op
            if op == "waiting":
                assert await side.op(timeout=10) == "paired"
            session.started()
            hosts.append(side)
        assert node.metric('bothy_gateway_closes_total{code="4008"}') == 0
        await asyncio.gather(*(h.ws.send(b"x" * MESSAGE) for h in hosts))
        sent = time.monotonic()
        times = []
        while len(times) < 3 and time.monotonic() - sent < 3 * SEND_TIMEOUT_MS / 1000:
            n = node.metric('bothy_gateway_closes_total{code="4008"}')
            times += [time.monotonic() - sent] * (int(n) - len(times))
            await asyncio.sleep(0.02)
        for d in devices:
            d.close()
        for h in hosts:
            await h.ws.close()
        return times
    times = run(go())
    assert len(times) == 3, times
    # never before the send timeout, and within a sweep and a margin after it
    late = (SEND_TIMEOUT_MS + SWEEP_MS + 300) / 1000
    assert all(SEND_TIMEOUT_MS / 1000 - 0.1 <= t <= late for t in times), (times, late)
