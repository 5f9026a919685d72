"""The control connection of bothy-host run (docs/host.md, "The control
connection"): hello signed over the challenge, report after every
ready, heartbeats every heartbeat_ms, probes answered, strict parsing (an
unknown op or a malformed message closes with 4002 and the host comes
back), the close codes that stop it with their exit statuses, the
reconnect back-off with jitter, and the refusal to run as root.
"""
import os
import secrets
import shutil
import signal
import subprocess
import time

import pytest


from conftest import AS_ROOT, HOST, SHELL, Host, public_key, poll_until
from fakeserver import Device, b64url, uuid7, verify

BACKOFF_MS = [250, 500, 1000, 2000, 4000]


def test_hello_report_and_heartbeats(fake, paired, running):
    host, path = paired
    h, ctl = running()
    assert ctl.hello["op"] == "hello" and ctl.hello["host"] == host
    assert ctl.hello["version"] == "bothy-host/0.3.0"
    assert verify(public_key(path), ctl.hello["sig"], "bothy-host-hello-v1", host, ctl.nonce)
    assert ctl.next_op("report", skip=()) == {"op": "report", "sessions": []}

    # a heartbeat every heartbeat_ms (1000 here), each acknowledged by the fake
    times = []
    for _ in range(4):
        assert ctl.next_op("heartbeat", timeout=3, skip=()) == {"op": "heartbeat"}
        times.append(time.monotonic())
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert all(0.8 < g < 1.5 for g in gaps), gaps


def test_ready_again_brings_a_report_and_another_conn_is_refused(fake, running):
    h, ctl = running()
    ctl.next_op("report", skip=())
    # the node's confirmation: ready again, same conn, new state
    ctl.send({"op": "ready", "conn": ctl.conn, "state": "active", "heartbeat_ms": 1000})
    assert ctl.next_op("report")["sessions"] == []
    # a ready of another connection is not this one's
    ctl.send({"op": "ready", "conn": uuid7(), "state": "active", "heartbeat_ms": 1000})
    assert ctl.wait_closed() == 4002
    assert "unexpected op on the control connection" in h.log
    fake.control()      # and it came back


def test_probe_is_answered_with_a_signature_over_its_nonce(fake, paired, running):
    host, path = paired
    h, ctl = running()
    ctl.next_op("report", skip=())
    nonce = b64url(secrets.token_bytes(32))
    ctl.send({"op": "probe", "nonce": nonce})
    ack = ctl.next_op("probe_ack")
    assert set(ack) == {"op", "sig"}
    assert verify(public_key(path), ack["sig"], "bothy-host-probe-v1", host, nonce)
    assert not verify(public_key(path), ack["sig"], "bothy-host-hello-v1", host, nonce)


@pytest.mark.parametrize("message, logged", [
    ({"op": "session.resize", "session": "x"}, "unknown op on the control connection"),
    ({"op": "session.open", "session": "not-a-uuid", "grant": "x", "device": "y"},
     "malformed message on the control connection"),
    ({"op": "session.close"}, "malformed message on the control connection"),
    ({"op": "challenge", "nonce": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"},
     "unexpected op on the control connection"),
    (b"binary", "binary message on the control connection"),
    ({"op": "probe", "nonce": "AAAA"}, "malformed message on the control connection"),
])
def test_what_the_host_refuses_closes_with_4002_and_it_comes_back(fake, running, message, logged):
    h, ctl = running()
    ctl.next_op("report", skip=())
    ctl.send(message)
    assert ctl.wait_closed() == 4002
    assert logged in h.log
    again = fake.control()
    assert again.next_op("report", skip=())["sessions"] == []


def test_a_member_the_host_does_not_know_is_ignored(fake, running):
    """protocol.md: the node's messages may gain optional members, which a
    host service ignores; the ones it knows are still checked."""
    h, ctl = running()
    ctl.next_op("report", skip=())
    session, grant = uuid7(), uuid7()
    ctl.send({"op": "session.open", "session": session, "grant": grant, "device": uuid7(),
              "later": {"added": True}})
    assert ctl.next_op("session.started") == {"op": "session.started", "session": session,
                                              "grant": grant}
    stream = fake.stream()
    stream.send({"op": "waiting", "later": 1})
    stream.send({"op": "paired", "later": [1]})
    Device(stream, announce=False)
    ctl.send({"op": "session.close", "session": session, "why": "later"})
    assert stream.wait_closed() == 1000
    assert "malformed" not in h.log


def test_session_open_while_confirming_is_refused(fake, running):
    fake.state = "confirming"
    h, ctl = running()
    ctl.next_op("report", skip=())
    ctl.open_session()
    assert ctl.wait_closed() == 4002
    assert h.children() == [], "no shell for a host that is not active"


def test_unanswered_heartbeats_make_the_host_reconnect(fake, running):
    fake.ack_heartbeats = False
    h, ctl = running()
    start = time.monotonic()
    ctl.next_op("report", skip=())
    assert ctl.wait_closed(timeout=6) == 4009
    # two heartbeats sent unanswered (at 1 s and 2 s), given up at the third
    assert 2.5 < time.monotonic() - start < 4.5
    assert "heartbeats unanswered: reconnecting" in h.log
    fake.control()


@pytest.mark.parametrize("code, status, logged", [
    (4110, 3, "the host must be paired again (bothy-host pair)"),
    (4112, 3, "the host must be paired again (bothy-host pair)"),
    (4111, 4, "the host is disabled"),
    (4001, 5, "the server refused the host's key"),
])
def test_close_codes_that_stop_the_host(fake, running, code, status, logged):
    h, ctl = running()
    ctl.next_op("report", skip=())
    session, grant = ctl.open_session()
    ctl.next_op("session.started")
    stream = fake.stream()
    shells = poll_until(h.children, what="the shell")
    ctl.close(code)
    assert h.wait() == status
    assert logged in h.log
    # its sessions ended with it: the shell is gone, the data connection said 1000
    assert stream.wait_closed() == 1000
    for pid in shells:
        assert not os.path.exists("/proc/%d" % pid)
    assert len(fake.connects) == 2, "no reconnect after %d" % code


def test_reconnects_with_backoff_and_jitter(fake, running):
    """The node closes with 1001 (stopping) at once, five times; the host's
    delays follow the table, each within its 20 % jitter, then it logs in."""
    closes = []

    def close_first_five(conn):
        if len(closes) < 5:
            closes.append(time.monotonic())
            return 1001
        return None
    fake.on_login = close_first_five
    h, ctl = running()
    ctl.next_op("report", skip=())
    assert len(fake.connects) == 7       # the pairing's, five closed, this one
    connects = fake.connects[1:]
    for i, base in enumerate(BACKOFF_MS):
        gap = (connects[i + 1] - closes[i]) * 1000
        # the delay, plus a TCP connect and an upgrade on loopback
        assert base <= gap <= base * 1.2 + 150, (i, gap)
    assert h.log.count('msg="control connection lost" code=1001') == 5


def test_a_dropped_connection_comes_back_and_the_sessions_stay(fake, running):
    h, ctl = running()
    ctl.next_op("report", skip=())
    session, grant = ctl.open_session()
    ctl.next_op("session.started")
    stream = fake.stream()
    ctl.drop()              # the node died: no close frame
    again = fake.control()
    # the new login reports the session; its data connection was never touched
    assert again.next_op("report", skip=())["sessions"] == [session]
    assert not stream.closed.is_set()
    assert 'msg="control connection lost" code=0' in h.log
    # the node sends session.open with the same grant at the login: no new stream
    again.send({"op": "session.open", "session": session, "grant": grant, "device": uuid7()})
    assert again.next_op("session.started") == {"op": "session.started", "session": session,
                                                  "grant": grant}
    with pytest.raises(AssertionError):
        fake.stream(timeout=1)


def test_sigterm_stops_cleanly(fake, running):
    h, ctl = running()
    ctl.next_op("report", skip=())
    ctl.open_session()
    ctl.next_op("session.started")
    stream = fake.stream()
    shells = poll_until(h.children, what="the shell")
    h.proc.send_signal(signal.SIGTERM)
    assert h.wait() == 0
    assert ctl.wait_closed() == 1001
    assert stream.wait_closed() == 1000
    for pid in shells:
        assert not os.path.exists("/proc/%d" % pid)


def test_refuses_to_run_as_root_without_allow_root(fake, paired):
    _, path = paired
    # as a user that is not root, a user namespace makes it uid 0
    prefix = [] if AS_ROOT else [shutil.which("unshare") or "/usr/bin/unshare", "-r"]
    if not AS_ROOT:
        check = subprocess.run(prefix + ["id", "-u"], stdout=subprocess.PIPE, text=True)
        if check.returncode != 0 or check.stdout.strip() != "0":
            pytest.skip("no user namespace to be root in (unshare -r failed)")
    h = Host("run", "--server", fake.url, "--key", path, "--shell", SHELL,
             allow_root=False).start(prefix)
    assert h.wait() == 1
    assert "refusing to run as root" in h.log
    assert len(fake.connects) == 1, "refused before any connection"
    root_key = os.path.join(os.path.dirname(path), "root.key")
    r = subprocess.run(prefix + [HOST, "pair", "--server", fake.url, "--host", uuid7(), "--code",
                                 "0123456789abcdef", "--key", root_key],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=10)
    assert r.returncode == 1 and "refusing to run as root" in r.stderr
    assert not os.path.exists(root_key)

    # with --allow-root it runs (in the namespace the key file is root's own)
    h = Host("run", "--server", fake.url, "--key", path, "--shell", SHELL, "--allow-root",
             allow_root=False).start(prefix)
    try:
        fake.control().next_op("report", skip=())
    finally:
        h.stop()
