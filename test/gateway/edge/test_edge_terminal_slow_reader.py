"""A device that keeps reading (above the minimum rate) is never closed,
and a device that reads nothing still is (docs/terminal.md, "Slow
networks"; docs/protocol.md, "Close codes"), through the shipped edge.

Two devices read steadily through real nginx, one 60 kB a second and one
8 kB a second, each paired with a host that writes without end, with the
node at the production sizes (--max-message 16384, --send-queue 65536,
--stream-window 524288: the test nodes' default window is 4096, conftest).
Before the device's acknowledgement (terminal/relay/ack.c), nginx held
megabytes and read the node's socket only every 20 s or so, and the node
closed the steady reader 4008 (issue 27); now neither is closed, and the
bytes that passed the node toward the devices and were not read yet stay
within the node's queue and one window each (at most --send-queue,
--stream-window and one message), where before they were megabytes; the
node counted holds of the window (the faster device's) and
acknowledgements, at least one a 16 KiB mark.  Wall time: 30 s.
"""
import asyncio
import time

from conftest import keys  # noqa: F401  (keys is a fixture)
from edge import edge  # noqa: F401  (a fixture)
from slowdevice import SlowDevice
from terminal_streams import Side, run, terminal, tnodes, tpg, ws_base  # noqa: F401

SEND_QUEUE = 65536
STREAM_WINDOW = 524288
MAX_MESSAGE = 16384
SEND_TIMEOUT_MS = 5000
RUN_S = 30
RATES = (60000, 8000)
CHUNK = b"y" * 4096


def production_node(tnodes):
    node, = tnodes(1, extra=["--max-message", str(MAX_MESSAGE), "--send-queue", str(SEND_QUEUE),
                             "--stream-window", str(STREAM_WINDOW), "--send-timeout", str(SEND_TIMEOUT_MS)])
    return node


async def paired_host(node, session, device):
    """The host's side, straight to the node, once the device waits."""
    device.wait_text("waiting")
    host = await Side.open(ws_base(node), session.id, session.host_identify())
    assert await host.op() == "paired"
    device.wait_text("paired")
    session.started()
    return host


async def write_without_end(host):
    """Until cancelled; a send that does not block yields all the same."""
    while True:
        await host.ws.send(CHUNK)
        await asyncio.sleep(0)


def held(node, devices):
    """Bytes the node took from the hosts that no device read yet."""
    return node.metric('bothy_terminal_relay_bytes_total{direction="host_to_device"}') - \
        sum(d.read for d in devices)


def test_a_device_that_reads_slowly_through_the_edge_is_never_closed(tnodes, terminal, edge):
    node = production_node(tnodes)
    e = edge([node])
    host, owner, _ = terminal.host()

    async def go():
        devices, hosts, writers = [], [], []
        try:
            for rate in RATES:
                session = terminal.open(host, owner)
                device = SlowDevice(e.port, session, rate)
                devices.append(device)
                hosts.append(await paired_host(node, session, device))
            for d in devices:
                d.start()
            until = time.monotonic() + RUN_S
            most = 0
            writers = [asyncio.ensure_future(write_without_end(h)) for h in hosts]
            while time.monotonic() < until:
                await asyncio.sleep(0.5)
                most = max(most, held(node, devices))
                assert all(d.ended is None for d in devices), [(d.rate, d.close_code) for d in devices]
            return devices, most
        finally:
            for w in writers:
                w.cancel()
            for d in devices:
                d.stop()
            for h in hosts:
                h.ws.transport.abort()      # its send buffer is full: no close frame goes
    devices, most = run(go())
    assert node.metric('bothy_gateway_closes_total{code="4008"}') == 0
    for d in devices:
        # each read at its rate all the time (the queue never ran dry), pongs included
        assert d.read >= 0.8 * d.rate * RUN_S, (d.rate, d.read)
        assert d.pongs > 0
        # each ping's payload: the binary payload bytes written before it
        assert d.bad_marks == [], (d.rate, d.bad_marks[:3])
    bound = len(RATES) * (SEND_QUEUE + STREAM_WINDOW + MAX_MESSAGE + 16384)
    assert most <= bound, (most, bound)
    # the hosts write without end: the 60 kB/s device's window filled and
    # was held (the 8 kB/s one reads about 240 KB in RUN_S, less than one
    # 512 KiB window, so it never is: it shows the slowest rate is not closed)
    assert node.metric("bothy_terminal_relay_held_total") >= 1
    for d in devices:
        # a mark at least every 16 KiB whatever the window (GW_RWINDOW_MARK_MAX),
        # plus one CHUNK: the device answered each one it read
        assert d.pongs >= d.read // (16384 + len(CHUNK)) - 2, (d.rate, d.read, d.pongs)
    # every acknowledgement is a pong of a device (the last ones may still be on their way)
    acks = node.metric("bothy_terminal_relay_acks_total")
    assert 0 < acks <= sum(d.pongs for d in devices), (acks, [d.pongs for d in devices])


def test_a_device_that_reads_nothing_through_the_edge_is_closed_4008(tnodes, terminal, edge):
    """Held back by its window, a device that reads nothing (and so
    answers no ping) is still closed about --send-timeout after its
    output began to wait."""
    node = production_node(tnodes)
    e = edge([node])
    host, owner, _ = terminal.host()
    session = terminal.open(host, owner)

    async def go():
        device = SlowDevice(e.port, session, 0)
        hostside = writer = None
        try:
            hostside = await paired_host(node, session, device)
            start = time.monotonic()
            writer = asyncio.ensure_future(write_without_end(hostside))
            while node.metric('bothy_gateway_closes_total{code="4008"}') == 0:
                assert time.monotonic() - start < 3 * SEND_TIMEOUT_MS / 1000, "not closed"
                await asyncio.sleep(0.1)
            return time.monotonic() - start
        finally:
            if writer is not None:
                writer.cancel()
            device.sock.close()
            if hostside is not None:
                hostside.ws.transport.abort()
    after = run(go())
    assert SEND_TIMEOUT_MS / 1000 - 0.2 <= after <= SEND_TIMEOUT_MS / 1000 + 2, after
