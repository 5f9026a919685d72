"""A device whose input the node stopped reading (a large paste into a
program that reads its input slowly while it writes) is not held by its
window and keeps reading its output (docs/terminal.md, "Slow networks").

The host here reads its data connection 16 kB a second through small
socket buffers and writes without end; the device pastes 4 MiB and reads
its stream at 1 MB a second, answering pings as a browser does, its pongs
behind the input it sent before them.  The node stops reading the device
(the host's queue is full), so its pongs wait behind the paste: the
window must not hold its output meanwhile.  Asserted: the device is never
closed within three times --send-timeout and reads at least half its
rate.  Wall time: about 8 s.
"""
import asyncio
import os
import socket
import time

from conftest import keys  # noqa: F401  (keys is a fixture)
from slowdevice import SlowDevice
from terminal_streams import Side, run, terminal, tnodes, tpg, ws_base  # noqa: F401

SEND_QUEUE = 65536
MAX_MESSAGE = 16384
SEND_TIMEOUT_MS = 2000
PASTE = 4 * 1024 * 1024
HOST_READS = 16384          # bytes a second: a program reading its input slowly
RATE = 1000000
CHUNK = b"y" * 4096
RUN_S = 3 * SEND_TIMEOUT_MS / 1000


def small_socket(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    return s


async def read_slowly(host):
    """A 4 KiB message every quarter second: never still for --send-timeout."""
    while True:
        await host.ws.recv()
        await asyncio.sleep(4096 / HOST_READS)


async def write_without_end(host):
    while True:
        await host.ws.send(CHUNK)
        await asyncio.sleep(0)


def test_a_paste_into_a_program_that_reads_slowly_while_it_writes_is_not_locked(tnodes, terminal):
    node, = tnodes(1, extra=["--max-message", str(MAX_MESSAGE), "--send-queue", str(SEND_QUEUE),
                             "--send-timeout", str(SEND_TIMEOUT_MS)])
    host, owner, _ = terminal.host()
    session = terminal.open(host, owner)
    paste = os.urandom(PASTE)

    async def go():
        device = SlowDevice(node.port, session, RATE)
        hostside = None
        tasks = []
        try:
            device.wait_text("waiting")
            hostside = await Side.open(ws_base(node), session.id, session.host_identify(),
                                       sock=small_socket(node.port), max_queue=1, read_limit=4096)
            assert await hostside.op() == "paired"
            device.wait_text("paired")
            session.started()
            tasks = [asyncio.ensure_future(read_slowly(hostside)),
                     asyncio.ensure_future(write_without_end(hostside))]
            device.start()
            device.send(paste)
            start = time.monotonic()
            while time.monotonic() - start < RUN_S:
                assert device.ended is None, ("closed", device.close_code, device.read)
                await asyncio.sleep(0.1)
            paused = node.metric("bothy_terminal_relay_paused_total")
            return device.read, device.bad_marks, device.pongs, paused
        finally:
            for t in tasks:
                t.cancel()
            device.stop()
            if hostside is not None:
                hostside.ws.transport.abort()
    read, bad_marks, pongs, paused = run(go())
    assert paused > 0                       # the device's input was held back
    assert read >= 0.5 * RATE * RUN_S, read  # and it read all the while
    assert pongs > 0
    assert bad_marks == []                  # each ping counted the binary bytes before it
