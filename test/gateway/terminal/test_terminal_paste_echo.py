"""A large paste into a program that reads its input slowly while it
writes (an echo) completes: the device's window does not hold its output
while the node stops reading the device (docs/terminal.md, "Slow
networks"; relay/ack.c, gw_rack_held).

The real chain, so that the lock can happen: the real bothy-host (paired
with `bothy-host pair`, the session opened by the REST call, its smallest
--ring-size) runs, as its shell, a program in raw mode that reads its
input 4 KiB at a time and writes each byte ECHO times; the device pastes
32 MiB in input frames and reads its stream at RATE bytes a second,
answering every ping from a writer of its own, as a browser does
(slowdevice.py), so its pongs go out behind the paste.  The program takes
the paste at half the device's reading rate, so the host's queue fills
and the node stops reading the device, with the pongs unread behind the
paste's rest.  Were the device's output held by the window meanwhile
(the rule before the fix: only `out - acked >= window`), the host would
be paused, the program would block writing and read no more, and the
node would never read the device again: locked, then 4008.

Asserted: every echoed byte arrives (counted: the 64 MiB and the markers,
each output frame at its offset) within BOUND_S, the device is never
closed, the node paused a side (bothy_terminal_relay_paused_total counts
both), for at least --send-timeout the device had read more than the
window and a message past the last pong it sent (the old rule would have
held it unacknowledged all that time, whatever the buffers: 4008), and a
second into the paste more than a MiB of it still waited in the device's
writer: the paste did not
fit into the sockets' buffers, so the pongs did wait behind it (on
loopback those buffers hold some MiB: a 4 MiB paste passes on the old
rule, 8 MiB fails; without this check a host with larger buffers would
pass a test that cannot bite).  The paste is twice what the lock needs:
the pongs wait only behind the part of the paste that does not fit into
the buffers between the device and the program (the node's receive and
send, the host's receive), which the kernel grows as they fill; with
16 MiB a CI run saw them stuck 1.7 s, under --send-timeout, so about
11 MiB had fitted (the program takes RATE / ECHO, 3 MB a second), and
the check below failed.  Wall time: about 11 s on two cores (64 MiB at RATE)
and 20 s with the module's start.  On the old rule: 4008 after 2.4 s,
64 KiB shown.

Direct to the node, not through the edge: the lock is between the node's
window and its pause of the device, which the edge does not change;
nginx's buffers would only add megabytes the paste must pass (the edge's
own slow readers are edge/test_edge_terminal_slow_reader.py's).
"""
import os
import socket
import stat
import struct
import time

from conftest import WORK, connected_on, poll_until, terminal_rest
from conftest import keys  # noqa: F401  (keys is a fixture)
from realhost import RealHost
from slowdevice import SlowDevice
from terminal_streams import terminal, tnodes, tpg  # noqa: F401  (fixtures)

# The node's options, in one list, after the test nodes' own (conftest's
# GATEWAY_OPTS, with --stream-window 4096): the last of a repeated option
# wins, so the window is WINDOW here.  bothy-host's frames need
# --max-message 16384 (docs/host.md); --send-timeout 2 s closes a locked
# device soon.
WINDOW = 65536
SEND_TIMEOUT_S = 2.0
NODE_OPTS = ["--max-message", "16384", "--send-queue", "65536", "--stream-window", str(WINDOW),
             "--send-timeout", str(int(SEND_TIMEOUT_S * 1000))]

PASTE = 32 * 1024 * 1024
ECHO = 2                    # each pasted byte written this many times
RATE = 6000000              # bytes a second the device reads
BOUND_S = 60
READY, DONE = b"paste-ready\n", b"\npaste-done\n"
RING = 262144               # bothy-host's smallest --ring-size: less output held there
SNDBUF = 16384              # the device's send buffer: the paste waits in its writer
INPUT_MAX = 16383           # an input frame's bytes (docs/host.md)

# The session's shell: raw mode (no echo by the terminal, no line
# discipline, no signal keys), 4 KiB read at a time, each byte written
# ECHO times; once PASTE bytes came, DONE, then it waits for the hangup.
PROGRAM = """#!/usr/bin/python3
import os, tty
tty.setraw(0)
os.write(1, %(ready)r)
got = 0
while got < %(paste)d:
    data = os.read(0, 4096)
    got += len(data)
    out = bytearray(len(data) * %(echo)d)
    for k in range(%(echo)d):
        out[k::%(echo)d] = data
    while out:
        out = out[os.write(1, out):]
os.write(1, %(done)r)
os.read(0, 1)
"""


class EchoDevice(SlowDevice):
    """A slow device that reads the stream's frames (docs/host.md, "The
    stream's frames"): output counted from its begin on, the stream's
    first bytes kept to find READY, the last ones to find DONE; a frame
    out of its place goes to bad_frames (its reader is a thread of its
    own: an assertion there would only stop it)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.begin = None
        self.output = 0
        self.head = b""
        self.tail = b""
        self.bad_frames = []

    def binary(self, payload):
        if payload[:1] == b"b" and len(payload) == 25 and self.begin is None:
            self.begin = struct.unpack(">QQQ", payload[1:])
            return
        offset = struct.unpack(">Q", payload[1:9])[0] if len(payload) > 9 else None
        if payload[:1] != b"o" or self.begin is None or offset != self.output:
            self.bad_frames.append((payload[:9], self.output))
            return
        data = payload[9:]
        self.output += len(data)
        if len(self.head) < len(READY):
            self.head += data[:len(READY)]
        self.tail = (self.tail + data)[-len(DONE):]

    def queued(self):
        """Messages (paste frames, a few pongs) the writer has not sent yet."""
        return self._out.qsize()

    def frame(self, data):
        """One binary message, after what waits (the writer's order)."""
        self.send(data, piece=len(data))


def echo_host(node, terminal):
    """bothy-host paired with the node and running the echo program as its shell."""
    directory = os.path.join(WORK, "paste-program-%d" % os.getpid())
    os.makedirs(directory, exist_ok=True)
    program = os.path.join(directory, "echo-program")
    with open(program, "w") as f:
        f.write(PROGRAM % {"ready": READY, "done": DONE, "paste": PASTE, "echo": ECHO})
    os.chmod(program, stat.S_IRWXU)
    return RealHost(node, terminal, "paste", program, ["--ring-size", str(RING)])


class Opened:
    """What SlowDevice needs of a session: its ID (the identify is given)."""

    def __init__(self, body):
        self.id = body["session"]


def test_a_paste_into_a_program_that_reads_slowly_while_it_writes_completes(tnodes, terminal, keys):
    node, = tnodes(1, extra=NODE_OPTS)
    host = echo_host(node, terminal)
    device = None
    try:
        token = keys.person(host.owner)
        poll_until(lambda: connected_on(node, keys, host.owner, host.host), timeout=15,
                   what="the host connected")
        status, body = terminal_rest(node, "POST", "/v1/terminal/sessions", token, {"host": host.host})
        assert status == 201, (status, body)
        device = EchoDevice(node.port, Opened(body), RATE,
                            identify={"op": "identify", "side": "device", "token": body["token"]})
        device.wait_text("paired", timeout=15)
        device.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
        device.frame(b"r" + struct.pack(">QQ", 0, 0))      # a new device: stream 0, offset 0
        device.start()
        poll_until(lambda: device.head == READY or device.ended, timeout=10, what="the program ready")
        assert device.head == READY, (device.head, device.close_code)
        paste = (b"abcdefghijklmnopqrstuvwxyz" * (PASTE // 26 + 1))[:PASTE]
        start = time.monotonic()
        for at in range(0, PASTE, INPUT_MAX):
            device.frame(b"i" + paste[at:at + INPUT_MAX])
        want = len(READY) + PASTE * ECHO + len(DONE)
        deadline = start + BOUND_S
        waiting = None      # the paste's bytes in the device's writer a second in
        # the longest stretch in which the device had read more than a window
        # and a message past its last pong sent: the old rule held such a
        # device, unacknowledged, for all of it
        stuck_since, stuck_most = None, 0.0
        while (device.output < want and device.ended is None and not device.bad_frames and
               time.monotonic() < deadline):
            now = time.monotonic()
            if waiting is None and now - start >= 1.0:
                waiting = device.queued() * INPUT_MAX
            if device.read - device.pong_sent > WINDOW + 16384:
                stuck_since = now if stuck_since is None else stuck_since
                stuck_most = max(stuck_most, now - stuck_since)
            else:
                stuck_since = None
            time.sleep(0.05)
        took = time.monotonic() - start
        paused = node.metric("bothy_terminal_relay_paused_total")
        assert device.ended is None, ("closed", device.close_code, device.output, want, took)
        assert device.bad_frames == []
        assert device.output == want, ("stuck", device.output, want, took)
        assert device.tail == DONE
        assert device.begin[0] != 0 and device.begin[1:] == (0, 0)     # a new screen at 0
        assert device.bad_marks == []
        # the metric counts a pause of either side; the stretch below is what
        # shows the device's pongs stuck behind its paste
        assert paused > 0, "the node never stopped reading a side: no lock to avoid"
        assert waiting is not None and waiting > 1024 * 1024, \
            ("the paste fit into the sockets: the pongs did not wait behind it; a larger PASTE", waiting)
        # the pongs stayed stuck for at least --send-timeout: the old rule
        # (out - acked >= window) would have held the device that long with no
        # acknowledgement and closed it 4008, whatever the sockets' buffers
        assert stuck_most >= SEND_TIMEOUT_S, ("the pongs were not stuck long enough to bite", stuck_most)
        print("paste of %d bytes echoed %d times in %.1f s; %d bytes of it waited in the "
              "device a second in; pongs stuck %.1f s" % (PASTE, ECHO, took, waiting, stuck_most))
    finally:
        if device is not None:
            device.stop()
        host.stop()
