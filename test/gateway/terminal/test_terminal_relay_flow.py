"""The relay's backpressure on a real node (docs/terminal.md,
"Backpressure"): a host producing tens of megabytes as fast as it can
through one session does not starve a second session on the same node
(its keystroke round trip stays near what it was before) and does not grow
the node's memory; a device that stops reading entirely holds its host
back (the host's reading paused) and is closed after --send-timeout
(4008), and the host then waits alone.

The flood runs in a process of its own (both sides of the first session),
so the test's own event loop measures the second session's keystrokes
without sharing a CPU loop with 30 MB of frames.
"""
import asyncio
import json
import statistics
import subprocess
import sys
import threading
import time

from conftest import keys, poll_until  # noqa: F401  (keys is a fixture)
from terminal_streams import Side, pair, run, terminal, tnodes, tpg, ws_base  # noqa: F401

FLOOD_BYTES = 32 * 1024 * 1024
FRAME = 2048                    # the test nodes' --max-message

# Both sides of one session in a process of its own: the host sends
# FLOOD_BYTES in FRAME-byte binary messages as fast as the relay takes
# them; the device reads them all (or, with "stall", reads nothing at all).
FLOOD = r"""
import asyncio, json, sys, time
import websockets

async def main(url, device_id, host_id, total, frame, stall):
    device = await websockets.connect(url, max_size=None, subprotocols=["bothy-terminal-stream"])
    await device.send(device_id)
    assert json.loads(await device.recv())["op"] == "waiting"
    host = await websockets.connect(url, max_size=None, subprotocols=["bothy-terminal-stream"])
    await host.send(host_id)
    assert json.loads(await host.recv())["op"] == "paired"
    assert json.loads(await device.recv())["op"] == "paired"
    print("paired", flush=True)
    chunk = bytes(range(256)) * (frame // 256)

    async def produce():
        sent = 0
        try:
            while sent < total:
                await host.send(chunk)
                sent += len(chunk)
        except websockets.ConnectionClosed:
            pass
        return sent

    async def consume():
        got = 0
        while got < total:
            got += len(await device.recv())
        return got

    start = time.monotonic()
    if stall:
        sent = await produce()
        print(json.dumps({"sent": sent, "host_op": json.loads(await host.recv())["op"]}), flush=True)
        return
    sent, got = await asyncio.gather(produce(), consume())
    print(json.dumps({"sent": sent, "got": got, "seconds": time.monotonic() - start}), flush=True)

asyncio.run(main(*sys.argv[1:4], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == "stall"))
"""


def start_flood(node, session, stall=False):
    proc = subprocess.Popen(
        [sys.executable, "-c", FLOOD, ws_base(node) + "/terminal/stream/" + session.id,
         json.dumps(session.device_identify()), json.dumps(session.host_identify()),
         str(FLOOD_BYTES), str(FRAME), "stall" if stall else "read"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "paired", proc.stderr.read()
    return proc


class RssWatch:
    """The node's largest RSS while it runs (sampled every 20 ms)."""

    def __init__(self, node):
        self.node = node
        self.most = node.rss_kib()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        while not self.stop.wait(0.02):
            self.most = max(self.most, self.node.rss_kib())

    def end(self):
        self.stop.set()
        self.thread.join()
        return self.most


async def keystrokes(device, host, until):
    """Round trips of one byte device -> host -> device (the host echoes),
    every 10 ms until until() says stop, at least 30: seconds each."""
    async def echo():
        try:
            while True:
                await host.ws.send(await host.ws.recv())
        except Exception:
            pass
    echoing = asyncio.ensure_future(echo())
    rtts = []
    while len(rtts) < 30 or not until():
        start = time.perf_counter()
        await device.ws.send(b"k")
        assert await asyncio.wait_for(device.ws.recv(), 5) == b"k"
        rtts.append(time.perf_counter() - start)
        await asyncio.sleep(0.01)
    echoing.cancel()
    return rtts


def p(values, q):
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def test_a_fast_producer_starves_no_other_session_and_grows_no_memory(tnodes, terminal):
    node, = tnodes(1)
    host, owner, _ = terminal.host()
    flood_session, typing_session = terminal.open(host, owner), terminal.open(host, owner)

    async def go():
        device, hostside = await pair(ws_base(node), ws_base(node), typing_session)
        # each started once paired, as a host's control connection says: the
        # flood outlasts open_timeout, and the log tail would end an opening
        typing_session.started()
        before = await keystrokes(device, hostside, lambda: True)
        rss = node.rss_kib()
        watch = RssWatch(node)
        flood = start_flood(node, flood_session)
        poll_until(lambda: json.loads(node.http("/status.json")[1])["terminal_relay"]["paired"] == 2,
                   timeout=10, what="the flood's pairing")
        flood_session.started()
        during = await keystrokes(device, hostside, lambda: flood.poll() is not None)
        most = watch.end()
        out, err = flood.communicate(timeout=120)
        await device.close()
        await hostside.close()
        return before, during, rss, most, json.loads(out), err
    before, during, rss, most, flood, err = run(go())
    assert flood["got"] == flood["sent"] == FLOOD_BYTES, err
    # the second session's keystrokes went on all along, near their quiet round trip
    assert len(during) >= 30
    assert statistics.median(during) < statistics.median(before) + 0.010, (p(before, .5), p(during, .5))
    assert p(during, .99) < p(before, .99) + 0.050, (p(before, .99), p(during, .99))
    # 32 MB through the node without its memory growing (bounded queues)
    assert most - rss < 4096, (rss, most)
    assert node.metric("bothy_terminal_relay_paused_total") > 0
    print("keystroke p50/p99 ms before %.2f/%.2f during %.2f/%.2f; flood %.1f MB/s; rss +%d KiB" % (
        p(before, .5) * 1e3, p(before, .99) * 1e3, p(during, .5) * 1e3, p(during, .99) * 1e3,
        FLOOD_BYTES / flood["seconds"] / 1e6, most - rss))


def test_a_device_that_stops_reading_is_closed_after_send_timeout(tnodes, terminal):
    node, = tnodes(1)
    host, owner, _ = terminal.host()
    session = terminal.open(host, owner)
    rss = node.rss_kib()
    watch = RssWatch(node)
    slow = node.metric('bothy_gateway_closes_total{code="4008"}')
    started = time.monotonic()
    flood = start_flood(node, session, stall=True)
    out, err = flood.communicate(timeout=60)
    most = watch.end()
    result = json.loads(out)
    # the device was closed for not reading (--send-timeout 1000 ms); its host
    # was told waiting, and what it sent after that never left the node
    assert result["host_op"] == "waiting", (result, err)
    assert node.metric('bothy_gateway_closes_total{code="4008"}') == slow + 1
    assert node.metric("bothy_terminal_relay_paused_total") > 0
    assert node.metric("bothy_terminal_relay_dropped_total") > 0
    assert most - rss < 4096, (rss, most)
    assert time.monotonic() - started < 30
