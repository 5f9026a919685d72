"""The presence writer (D-M7-17-6): a node's ready person connections reach
bothy.presence_read within about one flush interval (500 ms here), with
their focus and idle; closed connections leave; rows come back after the
UNLOGGED tables were emptied; a failed write is logged once, counted and
retried, never closing a client; a stopped node deletes its rows and a
killed one's go stale within the TTL (3 s here)."""
import json
import signal

import pytest

from conftest import PG_CONF, Instance, closed_with, heartbeat, identify, new_id, poll_until, run

# This module's own instance, so that its crash and outages and its short
# intervals touch no other test (the session's instance keeps the defaults:
# a 500 ms maintenance cadence would change the timing of consumer holds).
PRESENCE_INTERVAL = 0.5
PRESENCE_TTL = 3.0

FAILED = "gateway presence not written, retrying at the next interval"
FAILURES = "bothy_gateway_presence_write_failures_total"
DELTAS = 'bothy_gateway_presence_flushes_total{kind="delta"}'
FULLS = 'bothy_gateway_presence_flushes_total{kind="full"}'
ROWS = "bothy_gateway_presence_rows"

# "Within one interval", with room for a loaded two-core machine.
SOON = 4 * PRESENCE_INTERVAL


@pytest.fixture(scope="module")
def pg():
    inst = Instance("presence-pg", PG_CONF + ["bothy.presence_flush_interval = '500ms'",
                                              "bothy.presence_ttl = '3s'"])
    inst.start()
    yield inst
    inst.close()


def rows(pg, *persons):
    """The fresh rows of the persons: (person, device, node, session, focus, idle)."""
    return [list(r) for r in pg.query(
        "SELECT person::text, device::text, node::text, gateway_session::text, focus::text, idle "
        "FROM bothy.presence_read(%s::uuid[]) ORDER BY node, device", list(persons))]


def row_is(pg, person, expected):
    return rows(pg, person) == expected


def node_rows(pg, node_id):
    """Every stored row of a node, fresh or not."""
    return pg.query("SELECT count(*) FROM bothy.gateway_presence WHERE node = %s", node_id)[0][0]


def flushed_after(node, count):
    """Bounded wait for count more applied flushes of node (any kind)."""
    start = node.metric(DELTAS) + node.metric(FULLS)
    poll_until(lambda: node.metric(DELTAS) + node.metric(FULLS) >= start + count,
               timeout=count * SOON + 2, what="%d flushes" % count)


async def send(ws, op):
    await ws.send(json.dumps(op))
    # an answer to a later heartbeat proves the op was read before it
    assert await heartbeat(ws) == {"op": "heartbeat_ack"}


def test_row_follows_the_connection(node, keys, pg):
    person, device, thread = new_id(), new_id(), new_id()
    poll_until(lambda: node.metric(FULLS) >= 1, timeout=SOON, what="the full flush at start")

    async def go():
        ws, ready = await identify(node.url, keys.person(person, device))
        row = [person, device, ready["node"], ready["session"], None, False]
        waited = poll_until(lambda: row_is(pg, person, [row]), timeout=SOON, what="row written")
        assert node.metric(ROWS) == 1
        await send(ws, {"op": "focus", "thread": thread})
        row[4] = thread
        poll_until(lambda: row_is(pg, person, [row]), timeout=SOON, what="focus written")
        await send(ws, {"op": "idle", "idle": True})
        row[5] = True
        poll_until(lambda: row_is(pg, person, [row]), timeout=SOON, what="idle written")
        await send(ws, {"op": "focus", "thread": None})
        row[4] = None
        poll_until(lambda: row_is(pg, person, [row]), timeout=SOON, what="no focus written")
        await ws.close()
        poll_until(lambda: rows(pg, person) == [], timeout=SOON, what="closed connection's row gone")
        return ready["node"], waited
    node_id, waited = run(go())
    assert waited < SOON
    assert node_rows(pg, node_id) == 0
    assert node.metric(ROWS) == 0
    assert node.metric(DELTAS) >= 4
    assert node.metric(FAILURES) == 0 and FAILED not in node.log


def test_agent_writes_no_row(node, keys, pg):
    agent = new_id()

    async def go():
        ws, ready = await identify(node.url, keys.agent(agent))
        assert ready["op"] == "ready"
        flushed_after(node, 2)
        await ws.close()
        return ready["node"]
    node_id = run(go())
    assert node_rows(pg, node_id) == 0
    assert pg.query("SELECT count(*) FROM bothy.gateway_presence WHERE person = %s", agent)[0][0] == 0
    assert node.metric(ROWS) == 0


def test_a_resume_on_the_same_node_keeps_the_sessions_one_row(node, keys, pg):
    """A resume on the same node while the old connection is still open: the
    old connection is stale and closes (4017, one connection per device),
    and the session keeps one row, the newer connection's, with no gap."""
    person, device, thread = new_id(), new_id(), new_id()

    async def go():
        old, ready = await identify(node.url, keys.person(person, device))
        row = [person, device, ready["node"], ready["session"], None, False]
        poll_until(lambda: row_is(pg, person, [row]), timeout=SOON, what="the first connection's row")
        new, again = await identify(node.url, ready["resume"], op="resume")
        assert again["session"] == ready["session"] and again["bind"] > ready["bind"]
        assert await closed_with(old) == 4017
        await send(new, {"op": "focus", "thread": thread})
        row[4] = thread
        poll_until(lambda: row_is(pg, person, [row]), timeout=SOON, what="the newer connection's row")
        flushed_after(node, 2)
        assert rows(pg, person) == [row]       # the old one's end did not end the session
        assert node.metric(ROWS) == 1
        await new.close()
        poll_until(lambda: rows(pg, person) == [], timeout=SOON, what="session ended")
    run(go())
    assert node.metric(ROWS) == 0
    assert node.metric(FAILURES) == 0


def test_rows_of_two_nodes_and_a_stopped_node(gateways, keys, pg):
    a, b = gateways(2)
    person, phone, laptop = new_id(), new_id(), new_id()

    async def go():
        on_a, ready_a = await identify(a.url, keys.person(person, phone))
        on_b, ready_b = await identify(b.url, keys.person(person, laptop))
        expected = sorted([[person, phone, ready_a["node"], ready_a["session"], None, False],
                           [person, laptop, ready_b["node"], ready_b["session"], None, False]],
                          key=lambda r: (r[2], r[1]))
        poll_until(lambda: rows(pg, person) == expected, timeout=SOON, what="rows of both nodes")
        # SIGTERM: the node's rows go with its stop (bothy.node_stop), the other's stay
        a.proc.send_signal(signal.SIGTERM)
        assert a.proc.wait(10) == 0
        assert node_rows(pg, ready_a["node"]) == 0
        assert pg.query("SELECT count(*) FROM bothy.gateway_presence_nodes WHERE node = %s",
                        ready_a["node"])[0][0] == 0
        assert rows(pg, person) == [r for r in expected if r[2] == ready_b["node"]]
        await on_b.close()
    run(go())


def test_rows_back_after_a_database_crash(node, keys, pg):
    person, device = new_id(), new_id()

    async def go():
        ws, ready = await identify(node.url, keys.person(person, device))
        row = [person, device, ready["node"], ready["session"], None, False]
        poll_until(lambda: row_is(pg, person, [row]), timeout=SOON, what="row written")
        fulls = node.metric(FULLS)
        pg.crash()                      # the UNLOGGED tables are emptied by the restart
        pg.restart()
        poll_until(lambda: row_is(pg, person, [row]), timeout=SOON + 5, what="row back")
        # the delta after the crash was refused, and a full flush brought the row back
        assert node.metric(FULLS) >= fulls + 1
        assert await heartbeat(ws) == {"op": "heartbeat_ack"}
        await ws.close()
    run(go())
    assert "gateway presence missing in the database, sending every row" in node.log


FLUSH = "bothy.presence_flush(uuid, boolean, uuid[], uuid[], uuid[], uuid[], boolean[], uuid[])"


def test_failed_write_is_logged_counted_and_retried(node, keys, pg):
    """Flushes fail while bothy.presence_flush is missing: one record, a count
    per failure, the client stays, and the change made meanwhile is written
    by the next delta once the function is back."""
    person, device, thread = new_id(), new_id(), new_id()
    # a TTL that outlasts the outage: the node's marker stays, so the kept
    # changes must come in a delta (a full flush would hide a lost change)
    pg.reload_with("bothy.presence_ttl = '10s'")

    async def go():
        ws, ready = await identify(node.url, keys.person(person, device))
        row = [person, device, ready["node"], ready["session"], None, False]
        poll_until(lambda: row_is(pg, person, [row]), timeout=SOON, what="row written")
        fulls = node.metric(FULLS)
        pg.query("ALTER FUNCTION " + FLUSH + " RENAME TO presence_flush_away")
        try:
            await send(ws, {"op": "focus", "thread": thread})
            failures = node.metric(FAILURES)
            poll_until(lambda: node.metric(FAILURES) >= failures + 2, timeout=10, what="failed writes")
            assert await heartbeat(ws) == {"op": "heartbeat_ack"}
            assert rows(pg, person) == [row]
        finally:
            pg.query("ALTER FUNCTION " + FLUSH.replace("presence_flush", "presence_flush_away")
                     + " RENAME TO presence_flush")
        row[4] = thread
        poll_until(lambda: row_is(pg, person, [row]), timeout=SOON, what="the kept change written")
        assert node.metric(FULLS) == fulls
        assert await heartbeat(ws) == {"op": "heartbeat_ack"}
        await ws.close()
    try:
        run(go())
    finally:
        pg.reload_with("bothy.presence_ttl = '3s'")       # as the module's instance started
    log = node.log
    assert log.count(FAILED) == 1
    assert 'level=warn msg="%s" kind=delta reason=error sqlstate=42883' % FAILED in log
    assert "gateway presence written again" in log
    assert node.metric('bothy_gateway_closes_total{code="1006"}') == 0


def test_failed_write_while_the_database_is_down(node, keys, pg):
    person, device, thread = new_id(), new_id(), new_id()

    async def go():
        ws, ready = await identify(node.url, keys.person(person, device))
        row = [person, device, ready["node"], ready["session"], None, False]
        poll_until(lambda: row_is(pg, person, [row]), timeout=SOON, what="row written")
        failures = node.metric(FAILURES)
        pg.stop()
        try:
            poll_until(lambda: node.metric(FAILURES) >= failures + 3, timeout=10, what="failed writes")
            await send(ws, {"op": "focus", "thread": thread})
        finally:
            pg.restart()
        row[4] = thread
        poll_until(lambda: row_is(pg, person, [row]), timeout=SOON + 5, what="rows written again")
        assert await heartbeat(ws) == {"op": "heartbeat_ack"}
        await ws.close()
    run(go())
    assert node.log.count(FAILED) == 1
    assert node.metric('bothy_gateway_closes_total{code="1006"}') == 0


def test_killed_node_rows_go_stale_within_the_ttl(gateways, keys, pg):
    node = gateways(1)
    person = new_id()

    async def go():
        ws, ready = await identify(node.url, keys.person(person))
        poll_until(lambda: len(rows(pg, person)) == 1, timeout=SOON, what="row written")
        node.proc.send_signal(signal.SIGKILL)
        node.proc.wait(10)
        waited = poll_until(lambda: rows(pg, person) == [], timeout=PRESENCE_TTL + SOON,
                            what="a killed node's row stale")
        # and expiry (the maintenance worker or any flush) deletes the rows themselves
        poll_until(lambda: node_rows(pg, ready["node"]) == 0, timeout=2 * SOON, what="rows expired")
        try:
            await ws.close()
        except Exception:
            pass
        return waited
    waited = run(go())
    # the row was fresh until the TTL after the last flush, not deleted at once
    assert waited > PRESENCE_TTL - 2 * PRESENCE_INTERVAL - 0.5
    node.logfile.close()

