"""No session stuck active (docs/terminal.md, "Streams"): every way a session
loses a side without its end leaves it detached, so that it can be
attached again, through the real edge (nginx running the shipped
deploy/nginx/bothy-edge.conf).

The race of a host whose data connection reached the relaying node before
that node heard of session.started: the node read the session while it
was still opening (the read of terminal.session_open), the host's side
waited as an opening's does, and once session.started committed the node
only stopped that side's timer, so a device that never came left the
session active with one lone side for good (attach answered 409
not_detached).  The test makes the race happen: a second database
connection holds the session's row, so session.started, sent first as
bothy-host sends it, commits only after the host's side joined.
"""
import threading

import pytest

from conftest import keys, poll_until  # noqa: F401  (keys is a fixture)
from edge import edge  # noqa: F401  (a fixture)
from terminal_streams import OPEN_S, Side, pair, run, terminal, tnodes, tpg, wait_state  # noqa: F401


def hold_row(pg, session_id):
    """A transaction holding the session's row (FOR UPDATE): every
    transition of it waits until the returned connection commits."""
    conn = pg.connect(autocommit=False)
    cur = conn.cursor()
    cur.execute("SELECT 1 FROM bothy.terminal_sessions WHERE session = %s FOR UPDATE", (session_id,))
    assert cur.fetchall() == [(1,)]
    return conn


def one_session_behind_the_edge(tnodes, terminal, edge):
    """One node behind the edge and a session opened on a new host: (node, edge, session)."""
    node, = tnodes(1)
    e = edge([node])
    host, owner, _ = terminal.host()
    return node, e, terminal.open(host, owner)


def waiting_for_lock(pg, pid):
    """Whether the backend pid waits for a lock."""
    rows = pg.query("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", pid)
    return rows == [("Lock",)]


def test_a_host_side_that_came_before_session_started_committed_is_detached(tpg, tnodes, terminal, edge):
    node, e, session = one_session_behind_the_edge(tnodes, terminal, edge)
    starter = tpg.connect()

    def started():
        starter.cursor().execute("SELECT bothy.terminal_session_started(%s, %s)",
                                 (session.id, session.grant))

    async def go():
        holder = hold_row(tpg, session.id)
        try:
            # session.started, sent first as bothy-host does, waits on the row
            starting = threading.Thread(target=started)
            starting.start()
            poll_until(lambda: waiting_for_lock(tpg, starter.get_backend_pid()), timeout=10,
                       what="session.started waiting on the row")
            hostside = await Side.open(e.ws_base, session.id, session.host_identify())
            assert await hostside.op() == "waiting"
            assert terminal.state(session.id) == ("opening", None)
        finally:
            holder.commit()
            holder.close()
        starting.join(10)
        assert not starting.is_alive()
        # no device comes: active, then detached at once (well within the
        # lone timer's open_timeout that a side of an opening had)
        wait_state(terminal, session.id, ("detached", None), timeout=OPEN_S * 0.8)
        assert terminal.log(session.id) == ["session_opened", "session_started", "session_detached"]
        await hostside.close(4000)
    run(go())
    starter.close()
    # attachable again (attach answered 409 not_detached while it stayed active)
    terminal.attach(session)


STARTED_READ = 'bothy_terminal_log_rows_total{transition="session_started"}'


@pytest.mark.parametrize("started_first", [True, False], ids=["started-known", "started-after"])
def test_a_host_side_that_leaves_a_pairing_detaches_the_session_at_once(tnodes, terminal, edge,
                                                                       started_first):
    """bothy-host drops its data connection (4002) for a device's bad frame
    and does not come back with it (host.md): the session is attachable at
    once, not open_timeout later when the waiting device is closed; both
    orders of the node hearing session.started and the host leaving."""
    node, e, session = one_session_behind_the_edge(tnodes, terminal, edge)

    async def go():
        device, hostside = await pair(e.ws_base, e.ws_base, session)
        if started_first:
            seen = node.metric(STARTED_READ)
            session.started()
            poll_until(lambda: node.metric(STARTED_READ) > seen, timeout=10,
                       what="the node's tail read session_started")
        await hostside.close(4002)
        assert await device.op() == "waiting"
        if not started_first:
            assert terminal.state(session.id) == ("opening", None)
            session.started()
        wait_state(terminal, session.id, ("detached", None), timeout=OPEN_S * 0.8)
        assert terminal.log(session.id) == ["session_opened", "session_started", "session_detached"]
        await device.close()
    run(go())
    terminal.attach(session)


def test_a_host_side_back_with_the_same_identify_makes_its_session_active_again(tnodes, terminal, edge):
    """A network break of the host's data connection: detached at once, and
    the host's reconnect with the same identify pairs again with the waiting
    device (docs/terminal.md, "How a pairing ends") and activates it."""
    node, e, session = one_session_behind_the_edge(tnodes, terminal, edge)

    async def go():
        device, hostside = await pair(e.ws_base, e.ws_base, session)
        session.started()
        hostside.ws.transport.abort()
        assert await device.op() == "waiting"
        wait_state(terminal, session.id, ("detached", None), timeout=OPEN_S * 0.8)
        hostside = await Side.open(e.ws_base, session.id, session.host_identify())
        assert await hostside.op() == "paired"
        assert await device.op() == "paired"
        wait_state(terminal, session.id, ("active", None), timeout=OPEN_S * 0.8)
        await hostside.ws.send(b"back")
        assert await device.bytes(4) == b"back"
        await device.close()
        await hostside.close(4000)
    run(go())
