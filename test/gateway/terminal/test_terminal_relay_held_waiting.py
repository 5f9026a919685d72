"""A device held by its window is still told `waiting` when its host's
data connection is cut (docs/terminal.md, "Backpressure": its
counterpart is told waiting), at the production sizes.

The node runs --max-message 16384 and --send-queue 65536 (the defaults)
with a --stream-window of 64 KiB, which a device that reads nothing fills
at once; the host writes 16384-byte frames, bothy-host's largest, so the
device's queue goes 49152 -> 65536 before the host is paused (the pause
mark is --send-queue less one message plus a byte, relay/flow.c): the
queue sits at exactly --send-queue.  Then the host's socket is reset and
the device types a key: the node does not read a paused host, so it sees
the cut when it writes the key there, while the device is still held.
Before the fix the 16-byte `waiting` found that queue full and the node
closed the held device 4008 ("send queue full"); now the relay's texts go
outside the queue's bound (core/sendq.h, gw_sendq_push_aside) and the
device, reading again, gets every byte the node took and then `waiting`
(on the old build: no text, the connection ended).
--send-timeout is 20 s so that the held device is not closed for its
silence while the test runs (about 2 s).
"""
import asyncio
import json
import socket
import struct

from conftest import keys, poll_until  # noqa: F401  (keys is a fixture)
from slowdevice import SlowDevice, masked
from terminal_streams import Side, run, terminal, tnodes, tpg, ws_base  # noqa: F401

FRAME = b"z" * 16384            # bothy-host's largest output frame (docs/host.md)
NODE_OPTS = ["--max-message", "16384", "--send-queue", "65536",
             "--stream-window", "65536", "--send-timeout", "20000"]


async def write_without_end(host):
    """Until cancelled or cut: blocks once the node stops reading the host."""
    try:
        while True:
            await host.ws.send(FRAME)
    except Exception:
        pass


async def held_then_cut(node, session):
    """A device held by its window with its queue at --send-queue, whose
    host's socket was then reset and seen gone by the node; the device
    has read nothing since its paired (SlowDevice, not started)."""
    device = SlowDevice(node.port, session, 0)
    device.wait_text("waiting")
    hostside = await Side.open(ws_base(node), session.id, session.host_identify())
    assert await hostside.op() == "paired"
    device.wait_text("paired")
    session.started()
    writer = asyncio.ensure_future(write_without_end(hostside))
    # the window held the device and its queue filled: the host is paused
    await asyncio.get_running_loop().run_in_executor(None, lambda: poll_until(
        lambda: node.metric("bothy_terminal_relay_held_total") >= 1 and
        node.metric("bothy_terminal_relay_paused_total") >= 1, timeout=10, what="the hold"))
    await asyncio.sleep(0.3)
    # cut: a reset, no close frame (a host whose network went away)
    sock = hostside.ws.transport.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    hostside.ws.transport.abort()
    writer.cancel()
    await asyncio.sleep(0.2)        # the loop closes the socket (abort's call_soon)
    # a paused host is not read, so the node sees the cut when it next
    # writes to it: a keystroke of the device
    device.sock.sendall(masked(0x2, b"x"))
    await asyncio.get_running_loop().run_in_executor(None, lambda: poll_until(
        lambda: json.loads(node.http("/status.json")[1])["terminal_relay"]["paired"] == 0,
        timeout=5, what="the node saw the cut"))
    device.texts.clear()
    return device


async def read_until_texts(node, device, n):
    """The device reads again (and answers the marks, so the window opens)
    until n texts came or it was closed: the bytes the node took."""
    device.rate = 10 * 1024 * 1024
    device.start()
    try:
        await asyncio.get_running_loop().run_in_executor(None, lambda: poll_until(
            lambda: len(device.texts) >= n or device.ended is not None, timeout=10,
            what="the texts or the close"))
        took = lambda: node.metric('bothy_terminal_relay_bytes_total{direction="host_to_device"}')
        await asyncio.sleep(0.3)        # the bytes behind the last text
        await asyncio.get_running_loop().run_in_executor(None, lambda: poll_until(
            lambda: device.read >= took() or device.ended is not None, timeout=5, what="every byte read"))
        return took()
    finally:
        device.stop()


def production_session(tnodes, terminal):
    """A node at NODE_OPTS, a session on it and its count of 4008 closes."""
    node, = tnodes(1, extra=NODE_OPTS)
    host, owner, _ = terminal.host()
    return node, terminal.open(host, owner), node.metric('bothy_gateway_closes_total{code="4008"}')


def test_a_held_device_is_told_waiting_when_its_host_is_cut(tnodes, terminal):
    node, session, slow = production_session(tnodes, terminal)

    async def go():
        device = await held_then_cut(node, session)
        return device, await read_until_texts(node, device, 1)

    device, took = run(go())
    assert device.close_code is None and device.texts == ['{"op":"waiting"}'], (device.close_code, device.texts)
    # everything the node took from the host came before waiting
    assert device.read == took and took >= 65536 + 65536, (device.read, took)
    assert node.metric('bothy_gateway_closes_total{code="4008"}') == slow


def test_a_held_device_survives_its_host_coming_back(tnodes, terminal):
    """The host connects again while the device is still held with its
    queue at --send-queue: the node holds the new host back at the pairing
    (relay/flow.c, gw_rflow_paired), so its first frames wait in the host's
    socket instead of finding the device's queue full (4008 before)."""
    node, session, slow = production_session(tnodes, terminal)

    async def go():
        device = await held_then_cut(node, session)
        again = await Side.open(ws_base(node), session.id, session.host_identify())
        assert await again.op() == "paired"
        for _ in range(4):
            await again.ws.send(FRAME)
        await asyncio.sleep(0.3)
        took = await read_until_texts(node, device, 2)
        await again.ws.close()
        return device, took

    device, took = run(go())
    assert device.close_code is None and device.texts == ['{"op":"waiting"}', '{"op":"paired"}'], \
        (device.close_code, device.texts)
    # the new host's four frames came too, after paired
    assert device.read == took and took >= 2 * 65536 + 4 * len(FRAME), (device.read, took)
    assert node.metric('bothy_gateway_closes_total{code="4008"}') == slow
