"""Nothing lost on a reattach, and nothing buffered without bound (docs/host.md,
"The stream's frames", "Backpressure"): a device that drops in the middle
of 10 MB of output attaches again with the offset it showed and receives
every byte after it exactly once; when the ring no longer holds them, the
begin frame says exactly how many were skipped and the rest is exact; a
device that stops reading stops the shell (the PTY is not read) instead of
growing the host's memory, and then receives everything.
"""
import os
import sys
import tempfile
import time

from conftest import WORK, attach, open_session, poll_until, reconnected
from fakeserver import STREAM_SUBPROTOCOL, Device

LINES = 1111111                     # "%07d\r\n" each: 9,999,999 bytes


def seq_bytes(n):
    return b"".join(b"%07d\r\n" % i for i in range(1, n + 1))


def start_output(fake, ctl, lines, until, fmt=b"-w", then=b""):
    """A session whose shell writes `lines` numbered lines, touches a flag
    file and runs `then`, read by a device up to offset `until`: (session,
    stream, device, flag).  (All on the first line: a line typed later
    would be echoed in the middle of the output.)"""
    session, grant, stream = open_session(fake, ctl)
    d = Device(stream)
    flag = os.path.join(tempfile.mkdtemp(prefix="flag-", dir=WORK), "done")
    d.send(b"seq %s 1 %d; touch %s%s\n" % (fmt, lines, flag.encode(), then))
    while d.offset < until:
        d.read_frame(timeout=10)
    return session, stream, d, flag


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_the_data_connection_asks_for_the_streams_subprotocol(fake, running):
    # a node reads a stream that names it 4 KiB at a time (protocol.md, "The
    # path"): without it a shell's bulk output passes at half the edge's speed
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    assert (stream.ws.subprotocol, ctl.ws.subprotocol) == (STREAM_SUBPROTOCOL, None)
    d = Device(stream)
    d.send(b"echo sub-$((6 * 7))\n")
    d.read_until(b"sub-42", timeout=10)


def test_10_mb_with_a_drop_in_the_middle_resumes_exactly_once(fake, running):
    # the ring holds what the shell writes while the device is away
    h, ctl = running("--ring-size", str(16 * 1024 * 1024))
    session, stream, d, flag = start_output(fake, ctl, LINES, 3000000)
    shown = d.offset
    stream.drop()                   # the relay node dies mid-output
    again = reconnected(fake, stream)   # and the host's data connection comes back, unpaired
    poll_until(lambda: os.path.exists(flag), timeout=60, what="the output written to the ring")

    d2 = Device(attach(fake, ctl, session), d.stream_id, shown)
    assert again.wait_closed() == 1001
    assert (d2.stream_id, d2.offset, d2.skipped) == (d.stream_id, shown, 0)
    d2.read_until(b"%07d\r\n" % LINES, timeout=60)

    whole = bytes(d.data[:shown]) + bytes(d2.data)
    start = whole.index(b"0000001\r\n")
    expected = seq_bytes(LINES)
    assert whole[start:start + len(expected)] == expected, "every line exactly once, in order"
    assert whole.count(b"0555555\r\n") == 1


def test_what_the_ring_no_longer_holds_is_counted_as_skipped(fake, running):
    ring = 262144
    h, ctl = running("--ring-size", str(ring))
    lines = 333333                  # 3 MB, 7 digits a line as the others
    session, stream, d, flag = start_output(fake, ctl, lines, 100000, b"-f %07g")
    shown = d.offset
    seq_start = bytes(d.data).index(b"0000001\r\n")
    stream.drop()
    reconnected(fake, stream).close(4102)   # nothing to relay: it waits for an attach
    poll_until(lambda: os.path.exists(flag), timeout=60, what="the output written to the ring")
    time.sleep(0.5)                 # the prompt after it

    d2 = Device(attach(fake, ctl, session), d.stream_id, shown)
    # the ring holds exactly its last `ring` bytes: what came before them is skipped
    assert d2.skipped == d2.begin - shown and d2.skipped > 2000000
    d2.read_until(b"%07d\r\n" % lines, timeout=30)
    d2.read_until(b"$ " if os.geteuid() else b"# ", timeout=5)
    assert len(d2.data) == ring
    expected = seq_bytes(lines)
    tail = bytes(d2.data)[:bytes(d2.data).index(b"%07d\r\n" % lines) + 9]
    assert tail == expected[d2.begin - seq_start:], "after the gap every byte is exact"
    assert "reattach missed output the ring no longer holds" in h.log


def test_a_device_that_stops_reading_stops_the_shell_not_the_hosts_memory(fake, running):
    ring = 262144
    h, ctl = running("--ring-size", str(ring))
    session, stream, d, flag = start_output(fake, ctl, LINES, 1000000)
    rss_before = rss_kib(h.proc.pid)
    stream.pause()
    time.sleep(3)
    # the shell waits: its output goes nowhere while the device does not read
    assert not os.path.exists(flag), "10 MB written while the device read nothing"
    assert rss_kib(h.proc.pid) - rss_before < 4096, "the host buffered what the device did not read"
    stream.unpause()
    d.read_until(b"%07d\r\n" % LINES, timeout=60)
    poll_until(lambda: os.path.exists(flag), timeout=10, what="the shell went on")
    # no byte was skipped or overtaken (the host would have closed the stream)
    whole = bytes(d.data)
    start = whole.index(b"0000001\r\n")
    assert whole[start:start + 9 * LINES] == seq_bytes(LINES)
    assert not stream.closed.is_set()


# Writes to the terminal without blocking for 3 s, counting exactly what the
# terminal took and how often it was full, then saves both: in raw mode the
# bytes arrive as written.
WRITER = """import os, sys, time
os.set_blocking(1, False)
n, full, end = 0, 0, time.monotonic() + 3
while time.monotonic() < end:
    try:
        n += os.write(1, b"x" * 4096)
    except BlockingIOError:
        full += 1
        time.sleep(0.01)
with open(sys.argv[1], "w") as f:
    f.write("%d %d" % (n, full))
"""


def test_what_the_terminal_holds_when_the_shell_ends_behind_a_slow_device_arrives(fake, running):
    """The device stops reading; a writer fills the host's socket and the
    PTY's buffer, and the shell exits while the PTY is not being read (the
    host is behind): the PTY hangs up with bytes in it.  They are read at its
    close and reach the device, every one, before the data connection's 1000."""
    d_ = tempfile.mkdtemp(prefix="writer-", dir=WORK)
    writer, count = os.path.join(d_, "writer.py"), os.path.join(d_, "count")
    with open(writer, "w") as f:
        f.write(WRITER)
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    d = Device(stream)
    d.send(b"stty raw -echo; echo go''ing; %s %s %s; exit 7\n" % (
        sys.executable.encode(), writer.encode(), count.encode()))
    d.read_until(b"going")
    stream.pause()
    poll_until(lambda: 'msg="shell exited" status=7' in h.log, timeout=20,
               what="the shell exited while the device was behind")
    written, full = (int(v) for v in open(count).read().split())
    assert full > 0, "the terminal never filled up: the host was not behind"
    stream.unpause()
    assert stream.wait_closed(timeout=60) == 1000
    while not stream.inbox.empty():
        d.read_frame()
    whole = bytes(d.data)
    after = whole[whole.index(b"going") + 5:]     # the echo of the line had x's too
    assert after.count(b"x") == written, "every byte the terminal took, exactly once"
