"""What idle means (docs/terminal.md, "Idle"): a relayed session is ended
idle after bothy.terminal_idle_timeout with no keystroke from its device
and no output the device acknowledged reading; output that only passed
the node (held in sockets and the edge, or by a device gone quiet) keeps
nothing alive.  Through the shipped edge, with the idle timeout at its
least, 60 s.

Two sessions on one node, each host writing a clock line every second,
neither device typing: one device reads (and so answers the node's pings,
as every WebSocket client does), the other never reads.  The second is
ended idle after the timeout (before, the bytes passing the node counted
as activity and it lived on, issue 27); the first stays active.  Wall
time: about 70 s.
"""
import asyncio
import time

import pytest

from conftest import Instance, keys  # noqa: F401  (keys is a fixture)
from edge import edge  # noqa: F401  (a fixture)
from slowdevice import SlowDevice
from terminal_streams import TERMINAL_CONF, Side, run, terminal, tnodes, ws_base  # noqa: F401

IDLE_S = 60


@pytest.fixture(scope="module")
def tpg():
    inst = Instance("terminal-idle-pg", TERMINAL_CONF + ["bothy.terminal_idle_timeout = '%ds'" % IDLE_S])
    inst.start()
    yield inst
    inst.close()


def test_output_a_device_never_read_does_not_keep_its_session_alive(tnodes, terminal, edge):
    node, = tnodes(1)
    e = edge([node])
    host, owner, _ = terminal.host()
    reading, quiet = terminal.open(host, owner), terminal.open(host, owner)

    async def go():
        devices, hosts = {}, {}
        try:
            for name, session, rate in (("reading", reading, 100000), ("quiet", quiet, 0)):
                device = SlowDevice(e.port, session, rate)
                devices[name] = device
                device.wait_text("waiting")
                hosts[name] = await Side.open(ws_base(node), session.id, session.host_identify())
                assert await hosts[name].op() == "paired"
                device.wait_text("paired")
                session.started()
                device.start()
            start = time.monotonic()
            ended = None
            while time.monotonic() - start < IDLE_S + 15:
                for name in hosts:
                    if hosts[name].ws.open:
                        await hosts[name].ws.send(b"%.0f\r\n" % time.time())
                if ended is None and terminal.state(quiet.id) != ("active", None):
                    ended = time.monotonic() - start
                    break
                await asyncio.sleep(1)
            quiet_code = await hosts["quiet"].closed(timeout=5) if ended is not None else None
            states = terminal.state(reading.id), terminal.state(quiet.id)
            return ended, quiet_code, states, devices["reading"].read
        finally:
            for d in devices.values():
                d.stop()
            for h in hosts.values():
                if h.ws.open:
                    await h.close(4000)
    ended, quiet_code, states, read = run(go())
    assert states == (("active", None), ("closed", "idle")), states
    # never before the timeout: the pairing's start counts as activity
    assert IDLE_S - 1 <= ended <= IDLE_S + 10, ended
    # the relay ends it with 1000 on both sides (docs/gateway.md)
    assert quiet_code == 1000, quiet_code
    # the reading device was shown output all along
    assert read >= IDLE_S * 10, read
