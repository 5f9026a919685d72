"""Sessions of bothy-host run (docs/host.md, "Sessions", "The stream's
frames"): session.open starts /bin/sh on a PTY and opens the data
connection with identify signed over "bothy-host-data-v1\\n<session>\\n<grant>",
session.started once the shell runs; the device's frames (resume, input,
resize) and the host's (begin, output); the shell's exit ending the
session with 1000 after its last output; session.close and the server's
1000 ending it; an attach with a new grant superseding the old data
connection (1001) and continuing the same shell; the limits.
"""
import hashlib
import os
import secrets
import time

import pytest

from conftest import attach, public_key, open_session, poll_until, reconnected
from fakeserver import Device, input_frame, parse_host_frame, resize, resume, uuid7, verify


def test_echo_and_stty_size_round_trips(fake, paired, running):
    host, path = paired
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    # identify: every member, signed over the data context
    ident = stream.identify
    assert ident["op"] == "identify" and ident["side"] == "host" and ident["host"] == host
    assert verify(public_key(path), ident["sig"], "bothy-host-data-v1", session, grant)

    d = Device(stream)
    assert d.stream_id != 0 and d.offset == 0 and d.skipped == 0
    word = "bothy-%d" % secrets.randbelow(10 ** 9)
    d.send(("echo %s-$((6*7))\n" % word).encode())
    d.read_until(("%s-42" % word).encode())
    d.resize(37, 111)
    d.send(b"stty size\n")
    d.read_until(b"37 111\r\n")
    d.resize(4096, 1)
    d.send(b"stty size\n")
    d.read_until(b"4096 1\r\n")
    # every output frame continued exactly where the last ended (Device checks)
    assert d.offset == len(d.data)
    # the report of a new login names the session
    ctl.send({"op": "ready", "conn": ctl.conn, "state": "active", "heartbeat_ms": 1000})
    assert ctl.next_op("report")["sessions"] == [session]
    for secret in (host, session, grant, word):
        assert secret not in h.log


def test_the_shell_exit_ends_the_session_after_its_last_output(fake, running):
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    d = Device(stream)
    d.send(b"seq 1 20000; exit 3\n")
    assert stream.wait_closed(timeout=10) == 1000
    # everything the shell wrote arrived before the close
    while not stream.inbox.empty():
        d.read_frame()
    assert b"\r\n19999\r\n20000\r\n" in d.data
    assert 'msg="shell exited" status=3' in h.log
    poll_until(lambda: h.children() == [], what="the shell reaped")
    # the session is over: a late session.open for it gets no new shell
    ctl.send({"op": "session.open", "session": session, "grant": uuid7(), "device": uuid7()})
    late = fake.stream()
    late.send({"op": "waiting"})
    assert late.wait_closed() == 1000
    assert h.children() == []
    ctl.send({"op": "ready", "conn": ctl.conn, "state": "active", "heartbeat_ms": 1000})
    assert ctl.next_op("report")["sessions"] == []


@pytest.mark.parametrize("how, logged", [
    ("session.close", "session closed by the server"),
    ("1000 on the data connection", "session ended by the server"),
])
def test_the_server_ends_the_session_with_its_shell_and_job(fake, running, how, logged):
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    d = Device(stream)
    # a foreground job that ignores nothing: SIGHUP ends it with its shell
    d.send(b"sleep 1000\n")
    shell = poll_until(h.children, what="the shell")[0]
    poll_until(lambda: any("sleep" in cmdline(p) for p in all_pids() if ppid(p) == shell),
               what="the job")
    if how == "session.close":
        ctl.send({"op": "session.close", "session": session})
        assert stream.wait_closed() == 1000
    else:
        stream.close(1000)
    poll_until(lambda: h.children() == [], what="the shell gone")
    assert not [p for p in all_pids() if ppid(p) == shell]
    assert logged in h.log


def test_a_job_that_ignores_sighup_is_killed_after_the_grace(fake, running):
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    d = Device(stream)
    # (quoted, so that the terminal's echo of the line never matches)
    d.send(b"trap '' HUP; echo tr''apped; sleep 1000\n")
    d.read_until(b"trapped\r\n")
    shell = h.children()[0]
    # the job in the foreground: the hang-up names the terminal's foreground
    # group as it is then (a job not started yet is not that group)
    job = poll_until(lambda: [p for p in all_pids() if ppid(p) == shell and "sleep" in cmdline(p)],
                     what="the job")[0]
    start = time.monotonic()
    ctl.send({"op": "session.close", "session": session})
    poll_until(lambda: state(job) in (None, "Z") and state(shell) in (None, "Z"),
               timeout=5, what="the shell and its job killed")
    assert time.monotonic() - start > 1.5, "SIGKILL only after the grace"


def test_an_attach_continues_the_same_shell(fake, running):
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    d = Device(stream)
    d.send(b"X=remembered\n")
    d.read_until(b"X=remembered\r\n")
    shell = h.children()
    # the relay node dies: the data connection drops, the shell stays, and
    # the host connects it again with the same identify (no device there)
    stream.drop()
    again = reconnected(fake, stream)
    assert h.children() == shell
    # the device attaches again: a new grant, a new data connection; the
    # reconnected one of the old grant is done
    stream2 = attach(fake, ctl, session)
    assert again.wait_closed() == 1001
    d2 = Device(stream2, d.stream_id, d.offset)
    assert (d2.stream_id, d2.offset, d2.skipped) == (d.stream_id, d.offset, 0)
    d2.send(b"echo $X\n")
    d2.read_until(b"remembered\r\n")

    # another attach while this connection lives: the old one is closed with 1001
    stream3 = attach(fake, ctl, session)
    assert stream2.wait_closed() == 1001
    d3 = Device(stream3, d2.stream_id, d2.offset)
    assert d3.skipped == 0
    d3.send(b"echo still $X\n")
    d3.read_until(b"still remembered\r\n")
    assert h.children() == shell


def test_a_device_of_another_shell_starts_from_the_rings_start(fake, running):
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    d = Device(stream)
    d.send(b"echo o''ne\n")
    d.read_until(b"one\r\n")
    # a stream ID this shell never had, at an offset past its end
    d2 = Device(attach(fake, ctl, session), stream_id=12345, offset=10 ** 9)
    assert d2.stream_id == d.stream_id and d2.offset == 0 and d2.skipped == 0
    d2.read_until(b"one\r\n")


def test_waiting_then_paired(fake, running):
    """The host's data connection may arrive before the device (waiting);
    the shell's output meanwhile is kept for it."""
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    stream.send({"op": "waiting"})
    time.sleep(0.3)
    d = Device(stream)
    # the prompt, written while nobody was there ("#" for root)
    assert d.read_frame() in (b"$ ", b"# ")


@pytest.mark.parametrize("frame", [
    input_frame(b"ls\n"),           # input before resume
    resize(24, 80),                 # resize before resume
    b"x",                           # an unknown type
    b"r" + b"\0" * 15,              # a resume one byte short
])
def test_a_malformed_device_frame_closes_the_data_connection_with_4002(fake, running, frame):
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    stream.send({"op": "paired"})
    stream.send(frame)
    assert stream.wait_closed() == 4002
    assert "malformed frame from the device" in h.log
    # the session lives on for an attach
    assert ctl.next_op("heartbeat", skip=()) and h.children()


def test_strict_text_on_the_data_connection(fake, running):
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    stream.send('{"op":"paired","op":"paired"}')     # a duplicate member
    assert stream.wait_closed() == 4002
    assert "malformed message on a data connection" in h.log
    stream2 = attach(fake, ctl, session)
    stream2.send(b"o" + bytes(9))       # terminal bytes before paired
    assert stream2.wait_closed() == 4002
    assert "terminal bytes before paired" in h.log
    stream3 = attach(fake, ctl, session)
    stream3.send({"op": "session.open"})
    assert stream3.wait_closed() == 4002
    stream4 = attach(fake, ctl, session)
    stream4.send({"op": "paired"})
    stream4.send(resume())
    parse_host_frame(stream4.recv())
    stream4.send(resume())              # a second resume on one pairing
    assert stream4.wait_closed() == 4002


def test_input_larger_than_the_pty_takes_at_once(fake, running):
    """300 kB pasted in the largest input frames (16384 bytes whole): the
    PTY's input buffer fills, the host holds the rest and stops reading the
    socket until the shell read it."""
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    d = Device(stream)
    d.send(b"stty raw -echo; head -c 300000 | md5sum; stty sane\n")
    time.sleep(0.5)
    data = bytes(0x21 + secrets.randbelow(94) for _ in range(300000))
    for i in range(0, len(data), 16383):
        d.send(data[i:i + 16383])
    d.read_until(hashlib.md5(data).hexdigest().encode(), timeout=20)


def test_max_sessions(fake, running):
    h, ctl = running("--max-sessions", "2")
    for _ in range(2):
        open_session(fake, ctl)
    session3, grant3 = ctl.open_session()
    refused = fake.stream()
    refused.send({"op": "waiting"})
    assert refused.wait_closed() == 1000
    assert "session refused: --max-sessions shells run already" in h.log
    assert len(h.children()) == 2


def test_a_lost_data_connection_comes_back_with_the_same_identify(fake, running):
    """protocol.md: a data connection that went away without 1000 (dropped,
    the node stopping, 4008) is connected again with the same identify, and
    the device that waited on its node pairs with it again and resumes
    exactly; after 4102, 4001, 4002 or 1009 the host waits for a
    session.open instead."""
    h, ctl = running()
    session, grant, stream = open_session(fake, ctl)
    d = Device(stream)
    d.send(b"X=kept\n")
    d.read_until(b"X=kept\r\n")
    for lose in (stream.drop, lambda: stream.close(1001), lambda: stream.close(4008)):
        lose()
        start = time.monotonic()
        again = reconnected(fake, stream)
        # the back-off table's first delay, 250 ms and its jitter
        assert 0.2 < time.monotonic() - start < 3
        # the same device, paired again on the same grant: resume where it was
        d2 = Device(again, d.stream_id, d.offset)
        assert (d2.stream_id, d2.offset, d2.skipped) == (d.stream_id, d.offset, 0)
        d2.send(b"echo $X-$((1+1))\n")
        d2.read_until(b"kept-2\r\n")
        stream, d = again, d2
    assert h.log.count("data connection lost") == 3
    for final in (4102, 4001, 4002, 1009):
        stream.close(final)
        try:
            extra = fake.stream(timeout=2)
        except AssertionError:
            extra = None
        assert extra is None, "connected again after %d" % final
        stream = attach(fake, ctl, session)
        Device(stream, d.stream_id, d.offset)
    assert h.log.count("data connection lost") == 3
    # each of those four ends is logged with its code, once
    for final in (4102, 4001, 4002, 1009):
        assert h.log.count('msg="data connection ended by the server, not connected again" code=%d'
                           % final) == 1, h.log


def test_a_detached_session_ends_after_the_detach_timeout(fake, running):
    """--detach-timeout at its least (60 s): without a data connection that
    long, the shell ends; one that comes back in time resets it."""
    h, ctl = running("--detach-timeout", "60000")
    session, grant, stream = open_session(fake, ctl)
    Device(stream)
    shell = poll_until(h.children, what="the shell")
    stream.drop()
    # the host connects it again; a node with nothing to relay for the
    # grant says 4102, after which the host waits for a session.open
    reconnected(fake, stream).close(4102)
    time.sleep(30)
    # back within the timeout: the clock starts again when this one goes
    stream2 = attach(fake, ctl, session)
    Device(stream2)
    stream2.drop()
    reconnected(fake, stream2).close(4102)
    time.sleep(40)
    assert h.children() == shell, "70 s detached in all, but never 60 s at once"
    poll_until(lambda: h.children() == [], timeout=30, what="the detached shell ended")
    assert "session ended: no data connection for --detach-timeout" in h.log


def all_pids():
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def ppid(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid) as f:
            return f.read()
    except OSError:
        return ""


def state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None
