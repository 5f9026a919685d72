"""The terminal's signals as a real LISTEN connection hears them, and the
maintenance worker's terminal task, on real instances.

Each transition's signals arrive only after its commit and never after a
rollback; in single mode only what the database and the application decide
is heard; the fan-out worker keeps the highest terminal.log of a batch; the
worker ends an expired opening once, also against a node ending it at the
same time.  "Nothing was sent" is proven with a sentinel committed after
the operation: signals arrive in commit order (test_signals.py).
"""
import json
import os
import signal
import time

import psycopg2
import pytest

from conftest import Instance, new_id, poll_until

# RFC 8032 test 1's public key and its fingerprint (docs/terminal.md, "Hosts")
KEY = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
FINGERPRINT = "SHA256:If4x36FUomFia/hUBG/SJxt77UtqvkWqWId+9H+XIbk"


def one(conn, sql, *args):
    cur = conn.cursor()
    cur.execute(sql, args)
    return cur.fetchone()


def paired_host(inst, person):
    host, code = inst.query("SELECT * FROM bothy.terminal_host_register(%s, 'desk')", person)[0]
    assert inst.query("SELECT bothy.terminal_host_pair(%s, %s, %s)", host, code, psycopg2.Binary(KEY)) == [(True,)]
    return host


def active_host(inst, person):
    host = paired_host(inst, person)
    assert inst.query("SELECT bothy.terminal_host_confirm(%s, %s)", host, FINGERPRINT) == [("active",)]
    return host


def open_session(conn, person, host):
    outcome, session, grant, _ = one(conn, "SELECT * FROM bothy.terminal_session_open(%s, %s, %s)",
                                     person, new_id(), host)
    assert outcome == "opened"
    return session, grant


def heard(listener, inst, timeout=5.0):
    """The signals heard before a sentinel committed now (signals arrive in
    commit order, so everything committed before it comes first)."""
    mark = new_id()
    inst.query("SELECT bothy.publish('terminal.host_close', jsonb_build_object('host_id', %s::text))", mark)
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        s = json.loads(listener.next(timeout=max(deadline - time.monotonic(), 0.01)))
        if s == {"kind": "terminal.host_close", "host_id": mark}:
            return seen
        seen.append(s)


def head(inst):
    return inst.query("SELECT bothy.terminal_log_head()")[0][0]


def log_wake(inst):
    return {"kind": "terminal.log", "seq": head(inst)}


def transition_signals(inst, listener, sql, *args, expect):
    """Runs sql in a transaction: nothing is heard before its commit, then
    expect(result) exactly, and the terminal.log heard carries the newest
    log number."""
    conn = inst.connect(autocommit=False)
    try:
        result = one(conn, sql, *args)
        assert heard(listener, inst) == [], "a signal before the commit"
        conn.commit()
    finally:
        conn.close()
    got = heard(listener, inst)
    assert got == expect(result), sql
    return result


def test_each_transition_is_heard_after_its_commit_only(multi, listener_of):
    listener = listener_of(multi)
    person = new_id()
    host = paired_host(multi, person)
    assert heard(listener, multi) == [log_wake(multi)]        # the pair, a gateway's call, in multi mode
    transition_signals(multi, listener, "SELECT bothy.terminal_host_confirm(%s, %s)", host, FINGERPRINT,
                       expect=lambda r: [log_wake(multi)])
    opened = transition_signals(
        multi, listener, "SELECT * FROM bothy.terminal_session_open(%s, %s, %s)", person, new_id(), host,
        expect=lambda r: [{"kind": "terminal.session_open", "host_id": host, "session_id": r[1]},
                          log_wake(multi)])
    session, grant = opened[1], opened[2]
    # the token's single use and a passing recheck are no transitions: nothing heard
    for sql in ("SELECT bothy.terminal_grant_use(%s, %s)", "SELECT bothy.terminal_session_recheck(%s, %s, true)"):
        transition_signals(multi, listener, sql, session, grant, expect=lambda r: [])
    for sql in ("SELECT bothy.terminal_session_started(%s, %s)", "SELECT bothy.terminal_session_detach(%s, %s)",
                "SELECT bothy.terminal_session_activate(%s, %s)", "SELECT bothy.terminal_session_detach(%s, %s)"):
        assert transition_signals(multi, listener, sql, session, grant, expect=lambda r: [log_wake(multi)]) == (True,)
    attached = transition_signals(
        multi, listener, "SELECT * FROM bothy.terminal_session_attach(%s, %s, %s)", person, new_id(), session,
        expect=lambda r: [{"kind": "terminal.session_open", "host_id": host, "session_id": session},
                          log_wake(multi)])
    assert attached[0] == "attached"
    transition_signals(multi, listener, "SELECT bothy.terminal_session_end(%s, 'closed_by_host')", session,
                       expect=lambda r: [log_wake(multi)])
    # the other ends: at open_timeout, the person's DELETE, a failed recheck
    for sql in ("SELECT bothy.terminal_session_open_timeout(%s, %s)",
                "SELECT bothy.terminal_session_recheck(%s, %s, false)"):
        with multi.connect() as conn:
            s, g = open_session(conn, person, host)
        heard(listener, multi)
        transition_signals(multi, listener, sql, s, g, expect=lambda r: [log_wake(multi)])
    with multi.connect() as conn:
        s, g = open_session(conn, person, host)
    heard(listener, multi)
    transition_signals(multi, listener, "SELECT bothy.terminal_session_close(%s, %s)", person, s,
                       expect=lambda r: [log_wake(multi)])
    # the duplicate verdict, disable and re-pair close the host's connections on every node
    with multi.connect() as conn:
        open_session(conn, person, host)
    heard(listener, multi)
    transition_signals(multi, listener, "SELECT bothy.terminal_host_duplicate(%s)", host,
                       expect=lambda r: [{"kind": "terminal.host_close", "host_id": host}, log_wake(multi)])
    code = transition_signals(multi, listener, "SELECT bothy.terminal_host_repair(%s)", host,
                              expect=lambda r: [])[0]     # it was pairing already: nothing to close
    transition_signals(multi, listener, "SELECT bothy.terminal_host_pair(%s, %s, %s)", host, code,
                       psycopg2.Binary(KEY), expect=lambda r: [log_wake(multi)])
    transition_signals(multi, listener, "SELECT bothy.terminal_host_repair(%s)", host,
                       expect=lambda r: [{"kind": "terminal.host_close", "host_id": host}, log_wake(multi)])
    transition_signals(multi, listener, "SELECT bothy.terminal_host_disable(%s)", host,
                       expect=lambda r: [{"kind": "terminal.host_close", "host_id": host}, log_wake(multi)])
    # every wake-up carried a number the tail then reads: the whole story of the host, in order
    rows = multi.query("SELECT transition FROM bothy.terminal_log WHERE host = %s ORDER BY seq", host)
    assert [r[0] for r in rows][:3] == ["host_paired", "host_confirmed", "session_opened"]
    assert rows[-1] == ("host_disabled",)


def test_a_rolled_back_open_stages_nothing_and_logs_nothing(multi, listener_of):
    listener = listener_of(multi)
    person = new_id()
    host = active_host(multi, person)
    heard(listener, multi)
    logged = multi.query("SELECT count(*) FROM bothy.terminal_log WHERE host = %s", host)[0][0]
    conn = multi.connect(autocommit=False)
    try:
        open_session(conn, person, host)
        conn.rollback()
        cur = conn.cursor()
        cur.execute("SAVEPOINT s")
        open_session(conn, person, host)
        cur.execute("ROLLBACK TO SAVEPOINT s")
        kept, _ = open_session(conn, person, host)
        conn.commit()
    finally:
        conn.close()
    assert heard(listener, multi) == [{"kind": "terminal.session_open", "host_id": host, "session_id": kept},
                                      log_wake(multi)]
    assert multi.query("SELECT count(*) FROM bothy.terminal_log WHERE host = %s", host)[0][0] == logged + 1
    assert multi.query("SELECT count(*) FROM bothy.terminal_log_pending")[0][0] == 0


def test_single_mode_hears_only_what_no_gateway_decided(single, listener_of):
    """In single mode the one node acts on its own calls' results: the
    gateways' calls stage nothing.  The application's calls still reach it
    (host_close, the log's wake-up)."""
    listener = listener_of(single)
    person = new_id()
    host = paired_host(single, person)
    assert heard(listener, single) == []
    assert single.query("SELECT bothy.terminal_host_confirm(%s, %s)", host, FINGERPRINT) == [("active",)]
    assert heard(listener, single) == [log_wake(single)]
    with single.connect() as conn:
        session, grant = open_session(conn, person, host)
        for sql in ("SELECT bothy.terminal_session_started(%s, %s)", "SELECT bothy.terminal_session_detach(%s, %s)"):
            assert one(conn, sql, session, grant) == (True,)
        one(conn, "SELECT * FROM bothy.terminal_session_attach(%s, %s, %s)", person, new_id(), session)
        open_session(conn, person, host)
    assert heard(listener, single) == []
    single.query("SELECT bothy.terminal_host_disable(%s)", host)
    assert heard(listener, single) == [{"kind": "terminal.host_close", "host_id": host}, log_wake(single)]
    other = active_host(single, person)
    heard(listener, single)
    assert single.query("SELECT bothy.terminal_host_duplicate(%s)", other) == [("pairing",)]
    assert heard(listener, single) == []


def coalesced(inst):
    return inst.query("SELECT value FROM bothy.metrics() WHERE metric = 'signals_coalesced'"
                      " AND label = 'terminal.log'")[0][0]


def test_the_fanout_worker_sends_only_the_highest_log_number_of_a_batch(multi, listener_of):
    listener = listener_of(multi)
    person = new_id()
    host = active_host(multi, person)
    heard(listener, multi)
    before = coalesced(multi)
    pid = multi.wait_fanout()
    os.kill(pid, signal.SIGSTOP)               # what commits meanwhile waits in the queue: one batch
    try:
        with multi.connect() as conn:          # five transactions, five wake-ups
            sessions = [open_session(conn, person, host) for _ in range(5)]
    finally:
        os.kill(pid, signal.SIGCONT)
    got = heard(listener, multi)
    assert [s for s in got if s["kind"] == "terminal.log"] == [log_wake(multi)]
    assert [s["session_id"] for s in got if s["kind"] == "terminal.session_open"] == [s for s, _ in sessions]
    assert coalesced(multi) == before + 4


@pytest.fixture(scope="module")
def fast():
    # the worker every 100 ms; grants of 1 s (the rules: 2 x 100 ms and 2 x 100 ms below it)
    inst = Instance("terminal-worker", [
        "bothy.cluster_mode = 'multi'",
        "bothy.presence_ttl = '1s'", "bothy.presence_flush_interval = '100ms'",
        "bothy.terminal_open_timeout = '1s'", "bothy.terminal_host_duplicate_probe_timeout = '100ms'",
        "bothy.terminal_log_poll_interval = '100ms'"])
    inst.start()
    yield inst
    inst.close()


def expired(inst):
    return inst.query("SELECT value FROM bothy.metrics() WHERE metric = 'terminal_sessions_expired'"
                      " AND label = 'open_timeout'")[0][0]


def ends(inst, session):
    return inst.query("SELECT close_detail FROM bothy.terminal_log WHERE session = %s"
                      " AND transition = 'session_closed'", session)


def test_the_worker_ends_an_expired_opening_once(fast, listener_of):
    listener = listener_of(fast)
    person = new_id()
    host = active_host(fast, person)
    before = expired(fast)
    with fast.connect() as conn:
        session, _ = open_session(conn, person, host)
    opened = time.monotonic()
    poll_until(lambda: ends(fast, session) != [], timeout=10, what="the worker's end")
    # grant 1 s, then one open_timeout (1 s) as a lone side's window; a round is 100 ms
    assert time.monotonic() - opened >= 2.0 - 0.1
    assert ends(fast, session) == [("open_timeout",)]
    seq = fast.query("SELECT seq FROM bothy.terminal_log WHERE session = %s AND transition = 'session_closed'",
                     session)[0][0]
    wakes = [s for s in heard(listener, fast) if s["kind"] == "terminal.log"]
    assert wakes and max(s["seq"] for s in wakes) >= seq
    time.sleep(0.5)                            # five more rounds: nothing more
    assert ends(fast, session) == [("open_timeout",)]
    assert expired(fast) == before + 1


def test_a_node_ending_the_opening_meanwhile_makes_the_worker_skip_it(fast):
    """A node's end at open_timeout holds the row while the grant and the
    window pass: the worker's rounds skip it (never wait for it), and the
    end is written once, by the node."""
    person = new_id()
    host = active_host(fast, person)
    before = expired(fast)
    conn = fast.connect(autocommit=False)
    try:
        session, grant = open_session(conn, person, host)
        conn.commit()
        assert one(conn, "SELECT bothy.terminal_session_open_timeout(%s, %s)", session, grant) == (True,)
        time.sleep(2.5)                        # expired, and a window more: the worker's rounds see it
        assert fast.query("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'bothy maintenance'"
                          " AND wait_event_type = 'Lock'") == [(0,)]
        conn.commit()
    finally:
        conn.close()
    time.sleep(0.3)
    assert ends(fast, session) == [("open_timeout",)]
    assert expired(fast) == before
