"""The terminal's control plane across nodes (D-M2-47-1, 3, 5, 6, 7, 12,
13), with two real gateways on one PostgreSQL in multi mode and the fake
host of fakehost.py:

- a host on node A, a device asking node B: 201, then A sends
  session.open (after the connection's probation);
- a host whose node was killed (SIGKILL) counts on the other node until
  its window (heartbeat interval x miss limit) ends, then 409;
- a copied key on node B while the old connection on A does not answer
  A's probe (4009, B's connection goes on), and answers it (the verdict:
  B's connection 4110, A's own 4112, the host back to pairing);
- a newer connection that hears an older one (whose node missed its
  announcement) announcing itself at once, so the older's node probes;
- probation holding a session.open, checked again in the database at
  its end;
- terminal.host_close of a disable and a re-pairing reaching every node;
- a listener terminated while a disable commits (its host_close missed,
  made sure by hiding the server's socket so the listener cannot come
  back), then reconciled: the host's connection closes, another's gets
  its session.open again.
"""
import asyncio
import os
import time

import pytest

from conftest import (active_host, connected_on, terminal_call, new_id, node_base, poll_until, run,
                      terminal_instance)
from fakehost import ControlConnection

SESSIONS = "/v1/terminal/sessions"
WINDOW = 3.0        # heartbeat interval 1 s x miss limit 3 (conftest.TERMINAL_CONF)
PROBATION = 2.0     # twice the probe timeout of 1 s


@pytest.fixture(scope="module")
def pg():
    inst = terminal_instance("terminal-cluster-pg")
    yield inst
    inst.close()



def test_host_on_a_device_on_b_then_a_sends_session_open(gateways, tworld, keys):
    a, b = gateways(2)

    async def go():
        host, owner, conn = await active_host(tworld, a)
        poll_until(lambda: connected_on(b, keys, owner, host), timeout=5, what="B counts the host")
        status, opened = await terminal_call(b, "POST", SESSIONS, keys.person(owner), {"host": host})
        sopen = await conn.expect("session.open", timeout=PROBATION + 3)
        await conn.close()
        return opened, status, sopen
    opened, status, sopen = run(go())
    assert status == 201, opened
    assert sopen["session"] == opened["session"]
    assert a.metric("bothy_terminal_session_opens_sent_total") == 1
    assert b.metric("bothy_terminal_session_opens_sent_total") == 0
    # A heard its own announcements back and ignored them: no probe
    assert a.metric("bothy_gateway_signals_own_total") >= 1
    assert a.metric('bothy_terminal_probes_total{outcome="unanswered"}') == 0
    assert b.metric("bothy_terminal_presence_entries") <= 1


def test_a_killed_nodes_host_counts_until_its_window_ends_then_409(gateways, tworld, keys):
    a, b = gateways(2)

    async def go():
        host, owner, conn = await active_host(tworld, a)
        poll_until(lambda: connected_on(b, keys, owner, host), timeout=5, what="B counts the host")
        a.proc.kill()
        a.proc.wait()
        killed = time.monotonic()
        first = await terminal_call(b, "POST", SESSIONS, keys.person(owner), {"host": host})
        first_at = time.monotonic() - killed
        while True:
            status, body = await terminal_call(b, "POST", SESSIONS, keys.person(owner), {"host": host})
            if status == 409:
                break
            assert status == 201, body
            assert time.monotonic() - killed < WINDOW + 3, "still counted long after its window"
            await asyncio.sleep(0.1)
        gone_at = time.monotonic() - killed
        still = connected_on(b, keys, owner, host)
        await conn.close()
        return first, first_at, (status, body), gone_at, still
    first, first_at, last, gone_at, still = run(go())
    assert first[0] == 201 and first_at < WINDOW - 1, (first, first_at)
    assert last == (409, {"error": "host_unavailable"})
    # the last announcement came at most a heartbeat (1 s) before the kill,
    # and reached B at most the fan-out's delay after it
    assert WINDOW - 1.2 <= gone_at <= WINDOW + 2.0, gone_at
    assert not still


@pytest.mark.parametrize("answers", [False, True], ids=["unanswered", "answered"])
def test_a_copied_key_on_b_and_the_probe_of_the_old_connection_on_a(gateways, tworld, keys, answers):
    a, b = gateways(2)

    async def go():
        host, owner, old = await active_host(tworld, a)
        old.answer_probes = answers
        copy = await ControlConnection(node_base(b), old.key).connect()
        ready = await copy.hello(host)
        await copy.report()
        copy.start_heartbeats()
        old_code = await old.closed(timeout=5)
        if not answers:
            # B's connection goes on, and after its probation gets session.open
            await copy.nothing_for(PROBATION)
            status, opened = await terminal_call(b, "POST", SESSIONS, keys.person(owner), {"host": host})
            assert status == 201, opened
            sopen = await copy.expect("session.open", timeout=3)
            assert sopen["session"] == opened["session"]
            copy_code = None
        else:
            copy_code = await copy.closed(timeout=5)
        await copy.close()
        return host, ready, old, old_code, copy_code
    host, ready, old, old_code, copy_code = run(go())
    assert ready["state"] == "active"
    assert len(old.probes) == 1
    if not answers:
        assert old_code == 4009 and copy_code is None
        assert tworld.host_state(host) == "active"
        assert a.metric('bothy_terminal_probes_total{outcome="unanswered"}') == 1
    else:
        assert (old_code, copy_code) == (4112, 4110)
        assert tworld.host_state(host) == "pairing"
        assert a.metric('bothy_terminal_probes_total{outcome="answered"}') == 1
        assert a.metric('bothy_terminal_duplicate_verdicts_total{result="pairing"}') == 1
    assert a.log.count('msg="terminal duplicate control connection" code=%d' % old_code) == 1
    assert b.metric('bothy_terminal_probes_total{outcome="answered"}') == 0


def test_a_newer_connection_announces_at_once_when_it_hears_an_older_one(gateways, tworld, keys):
    # A missed the newer connection's only announcement (its own connection
    # had not reported yet, so there was nothing to probe); when it then
    # announces the older one, B answers with the newer's at once, and A
    # probes.  Neither host heartbeats: no announcement but these.
    a, b = gateways(2)
    heard = 'bothy_gateway_signals_received_total{kind="terminal.host_present"}'

    async def go():
        host, owner, old = await active_host(tworld, a, report=False, heartbeats=False)
        old.answer_probes = False
        copy = await ControlConnection(node_base(b), old.key).connect()
        newer = await copy.hello(host)
        await copy.report()
        poll_until(lambda: a.metric(heard) == 1, timeout=5, what="A hearing the newer connection")
        before = b.metric("bothy_terminal_presence_announced_total")
        await old.send({"op": "heartbeat"})     # its deadline anew; unannounced, it announces nothing
        await old.report()
        old_code = await old.closed(timeout=5)
        after = b.metric("bothy_terminal_presence_announced_total")
        await copy.close()
        return old, newer, old_code, before, after
    old, newer, old_code, before, after = run(go())
    assert old.ready["conn"] < newer["conn"]        # UUIDv7 in canonical text: ordered as drawn
    assert (before, after) == (1, 2), "B announced the newer connection again on hearing the older"
    assert len(old.probes) == 1 and old_code == 4009
    assert a.metric('bothy_terminal_probes_total{outcome="unanswered"}') == 1
    assert b.metric('bothy_terminal_probes_total{outcome="unanswered"}') == 0


def test_probation_holds_session_open_and_checks_again_at_its_end(gateways, tworld, keys):
    a, b = gateways(2)

    async def go():
        host, owner, conn = await active_host(tworld, a, report=False)
        reported = time.monotonic()
        await conn.report()
        # A counts its own connection at once; the opens wait for the probation
        poll_until(lambda: connected_on(a, keys, owner, host), timeout=5, what="A counts the host")
        status, kept = await terminal_call(a, "POST", SESSIONS, keys.person(owner), {"host": host})
        assert status == 201, kept
        status, dropped = await terminal_call(a, "POST", SESSIONS, keys.person(owner), {"host": host})
        assert status == 201, dropped
        assert (await terminal_call(a, "DELETE", "%s/%s" % (SESSIONS, dropped["session"]),
                           keys.person(owner)))[0] == 204
        # the dropped session's end reaches the host as session.close (the
        # log tail does not know what the host heard); no session.open of it
        close = await conn.expect("session.close", timeout=3)
        sopen = await conn.expect("session.open", timeout=PROBATION + 3)
        arrived = time.monotonic() - reported
        await conn.nothing_for(1.0)
        await conn.close()
        return kept, dropped, close, sopen, arrived
    kept, dropped, close, sopen, arrived = run(go())
    assert close == {"op": "session.close", "session": dropped["session"]}
    assert sopen["session"] == kept["session"]
    assert arrived >= PROBATION - 0.05, arrived
    assert arrived < PROBATION + 2, arrived


def test_host_close_of_a_disable_and_a_repair_reaches_every_node(gateways, tworld, keys):
    a, b = gateways(2)

    async def go():
        owner = new_id()
        h1, _, on_a = await active_host(tworld, a, owner=owner)
        h2, _, on_b = await active_host(tworld, b, owner=owner)
        h3, _, repaired = await active_host(tworld, b, owner=owner)
        tworld.disable(h1, h2)
        codes = [await on_a.closed(), await on_b.closed()]
        tworld.repair(h3)
        codes.append(await repaired.closed())
        return codes
    assert run(go()) == [4111, 4111, 4110]


def test_a_listener_terminated_and_reconciled(gateways, tworld, keys, pg):
    node = gateways(1)
    socket = os.path.join(pg.dir, ".s.PGSQL.%s" % os.environ.get("BOTHY_TEST_PGPORT", "54329"))

    async def go():
        owner = new_id()
        h1, _, doomed = await active_host(tworld, node, owner=owner)
        h2, _, kept = await active_host(tworld, node, owner=owner)
        status, opened = await terminal_call(node, "POST", SESSIONS, keys.person(owner), {"host": h2})
        assert status == 201, opened
        first = await kept.expect("session.open", timeout=PROBATION + 3)
        admin = pg.connect()
        try:
            # no new connection while the socket is hidden: the listener stays down
            os.rename(socket, socket + ".hidden")
            try:
                admin.cursor().execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                       "WHERE application_name = 'bothy-ephemeral'")
                poll_until(lambda: node.metric("bothy_gateway_listener_up") == 0, timeout=5,
                           what="listener down")
                admin.cursor().execute("SELECT bothy.terminal_host_disable(%s)", (h1,))
                # its terminal.host_close is gone unheard: the connection stays
                await doomed.send({"op": "heartbeat"})
                await asyncio.sleep(1.0)
                still_open = doomed.close_code is None
            finally:
                os.rename(socket + ".hidden", socket)
        finally:
            admin.close()
        code = await doomed.closed(timeout=5)
        again = await kept.expect("session.open", timeout=5)
        await kept.close()
        return still_open, code, first, again
    still_open, code, first, again = run(go())
    assert still_open and code == 4111
    assert again == first
    assert node.metric('bothy_gateway_route_reconciles_total{route="terminal"}') == 1
    assert node.log.count('msg="terminal route reconciling"') == 1


def test_a_stopping_node_closes_with_1001_and_the_other_stops_counting_at_once(gateways, tworld, keys):
    a, b = gateways(2)

    async def go():
        host, owner, conn = await active_host(tworld, a)
        poll_until(lambda: connected_on(b, keys, owner, host), timeout=5, what="B counts the host")
        stopping = asyncio.get_running_loop().run_in_executor(None, a.stop)
        code = await conn.closed(timeout=10)
        # terminal.host_gone: B does not wait for the window to end
        gone = poll_until(lambda: not connected_on(b, keys, owner, host), timeout=WINDOW,
                          what="B no longer counts the host")
        return code, await stopping, gone
    code, status, gone = run(go())
    assert code == 1001 and status == 0
    assert gone < WINDOW - 1.0, gone


def test_an_announcement_heard_after_its_gone_is_ignored(gateways, tworld, keys, pg):
    # the two signals of one connection, published from SQL in the order a
    # node's two calls may commit: gone first, then its last present
    node = gateways(1)
    host, _, owner = tworld.register()
    sentinel_host, _, _ = tworld.register(owner)

    def publish(kind, of, conn):
        pg.query("SELECT bothy.publish(%s, jsonb_build_object('host_id', %s::text, 'conn_id', %s::text))",
                 kind, of, conn)

    def counted(of):
        return connected_on(node, keys, owner, of)

    late, other, sentinel = (pg.query("SELECT bothy.uuidv7()::text")[0][0] for _ in range(3))
    publish("terminal.host_present", host, other)
    poll_until(lambda: counted(host), timeout=5, what="another connection counted")
    publish("terminal.host_gone", host, other)
    poll_until(lambda: not counted(host), timeout=1, what="gone at once, not at the window's end")
    publish("terminal.host_gone", host, late)
    publish("terminal.host_present", host, late)
    publish("terminal.host_present", host, other)
    # heard after those, well within their window (3 s) had they counted
    publish("terminal.host_present", sentinel_host, sentinel)
    took = poll_until(lambda: counted(sentinel_host), timeout=2, what="the sentinel counted")
    assert not counted(host) and took < 2
    assert node.metric("bothy_terminal_presence_entries") == 1
