"""The maintenance worker on a real instance: a silent node's presence rows
go within the TTL with nobody flushing, an agent goes offline exactly once
for the cluster, a lapsed REST poll window releases its hold and fences,
a notification becomes a hint or a push, every counter moves, a failing
task is counted and the others still run, the worker yields to a lock it
waits for (the deadlock that cancelled DROP EXTENSION in regress runs),
and the worker waits for the extension and survives DROP and CREATE
EXTENSION."""
import json
import time

import psycopg2
import pytest

from conftest import Instance, NODE_A, NODE_B, new_id, poll_until
from test_presence import flush

NIL = "00000000-0000-0000-0000-000000000000"
HEARTBEAT = "SELECT bothy.agent_heartbeat_persist(%s, %s, now() - %s::interval, 'online')"


@pytest.fixture(scope="module")
def fast():
    # the shortest intervals the settings allow, multi mode
    inst = Instance("maintenance", [
        "bothy.cluster_mode = 'multi'",
        "bothy.presence_ttl = '1s'", "bothy.presence_flush_interval = '100ms'",
        "bothy.agent_presence_timeout = '1s'", "bothy.agent_heartbeat_persist_interval = '1s'"])
    inst.start()
    yield inst
    inst.close()


def metric(inst, name, label=None):
    rows = inst.query("SELECT value FROM bothy.stat_metrics WHERE metric = %s AND label IS NOT DISTINCT FROM %s",
                      name, label)
    assert len(rows) == 1, "no counter %s{%s}" % (name, label)
    return rows[0][0]


def cluster_node(inst):
    return inst.query("SELECT node::text FROM bothy.cluster_identity")[0][0]


def worker_pid(inst):
    rows = inst.query("SELECT pid FROM pg_stat_activity WHERE backend_type = 'bothy maintenance'"
                      " AND application_name = 'bothy maintenance'")
    return rows[0][0] if rows else None


def signals_until(listener, predicate, timeout=5.0):
    """Signals received until one satisfies predicate (it is the last)."""
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        seen.append(json.loads(listener.next(timeout=max(deadline - time.monotonic(), 0.01))))
        if predicate(seen[-1]):
            return seen


def test_the_worker_is_visible_by_name(fast):
    poll_until(lambda: worker_pid(fast) is not None, timeout=10, what="the maintenance worker")


def test_a_silent_nodes_rows_go_with_nobody_flushing(fast):
    before = metric(fast, "presence_rows_expired")
    rows = [(new_id(), new_id(), new_id()) for _ in range(4)]
    assert flush(fast, NODE_A, True, rows) is True
    start = time.monotonic()
    poll_until(lambda: fast.query("SELECT count(*) FROM bothy.gateway_presence WHERE node = %s",
                                  NODE_A)[0][0] == 0, timeout=5, what="expiry by the worker")
    # TTL 1 s, checked every 100 ms: gone within the TTL plus one interval and some slack
    assert time.monotonic() - start < 1.0 + 0.1 + 0.5
    assert metric(fast, "presence_rows_expired") >= before + 4


def test_an_agent_goes_offline_exactly_once_although_two_nodes_stored_heartbeats(fast, listener_of):
    listener = listener_of(fast)
    agent = new_id()
    before = metric(fast, "agents_offline")
    fast.query(HEARTBEAT, agent, NODE_A, "0.5 seconds")    # node A saw it first ...
    fast.query(HEARTBEAT, agent, NODE_B, "0 seconds")      # ... node B has the newest heartbeat
    stored_at = time.monotonic()
    seen = signals_until(listener, lambda s: s.get("agent") == agent, timeout=6)
    # timeout 1 s plus one persist interval of grace, from the newest heartbeat
    assert time.monotonic() - stored_at >= 2.0 - 0.2
    assert seen[-1] == {"kind": "gateway.agent_presence", "node": cluster_node(fast),
                        "agent": agent, "state": "offline"}
    assert fast.query("SELECT state FROM bothy.agent_status(%s::uuid[])", [agent]) == [("offline",)]
    # several more rounds of the worker: nothing more about this agent
    sentinel_after_rounds(fast, listener, rounds=5, forbidden=lambda s: s.get("agent") == agent)
    assert metric(fast, "agents_offline") == before + 1


def sentinel_after_rounds(inst, listener, rounds, forbidden):
    """Waits for several worker rounds, then proves with a sentinel that no
    signal matching forbidden was sent meanwhile (signals arrive in order)."""
    time.sleep(rounds * 0.1)   # worker rounds to pass; the sentinel below bounds the check
    host = new_id()
    inst.query("SELECT bothy.publish('terminal.host_close', jsonb_build_object('host_id', %s::text))", host)
    for s in signals_until(listener, lambda s: s.get("host_id") == host):
        assert not forbidden(s), "unexpected signal %r" % s


def test_a_fresh_heartbeat_keeps_an_agent_online(fast, listener_of):
    listener = listener_of(fast)
    agent = new_id()
    for _ in range(25):        # 2.5 s of heartbeats, each stored at once
        fast.query(HEARTBEAT, agent, NODE_A, "0 seconds")
        time.sleep(0.1)
    sentinel_after_rounds(fast, listener, rounds=1, forbidden=lambda s: s.get("agent") == agent)
    assert fast.query("SELECT state FROM bothy.agent_status(%s::uuid[])", [agent]) == [("online",)]


def test_a_lapsed_poll_window_releases_the_hold_and_fences(fast, listener_of):
    listener = listener_of(fast)
    agent, poller = new_id(), new_id()
    before = metric(fast, "holds_released")
    fast.query("SELECT bothy.agent_put(%s)", agent)
    fast.query("SELECT bothy.consumer_take(%s, %s, %s, 'poll', '1 second')", agent, NODE_A, poller)
    assert json.loads(listener.next())["gateway_session"] == poller   # the takeover
    taken = time.monotonic()
    released = signals_until(listener, lambda s: s["kind"] == "gateway.consumer" and s["agent"] == agent)[-1]
    assert time.monotonic() - taken >= 1.0 - 0.2
    assert released == {"kind": "gateway.consumer", "node": cluster_node(fast), "agent": agent,
                        "gateway_session": NIL}
    assert fast.query("SELECT holder_session FROM bothy.consumer_holder(%s)", agent) == [(None,)]
    assert fast.query("SELECT bothy.consumer_save(%s, %s, 0)", agent, poller) == [(False,)]
    assert metric(fast, "holds_released") == before + 1


def test_a_lapsed_lease_fences_before_the_worker_releases_it(fast):
    """Between the end of a lease and the worker's release, the holder
    can neither save nor start a run: the lease itself is the fence."""
    agent, poller, run = new_id(), new_id(), new_id()
    fast.query("SELECT bothy.agent_put(%s)", agent)
    fast.query("SELECT bothy.run_changed(%s, %s, %s, 1, '{}')", run, new_id(), agent)
    with fast.connect(autocommit=False) as conn:
        cur = conn.cursor()
        cur.execute("SELECT bothy.consumer_take(%s, %s, %s, 'poll', '1 second')", (agent, NODE_A, poller))
        conn.commit()
        # one transaction: now() stays at its start, so the worker's release
        # cannot be told apart; lease_until is moved into the past instead
        cur.execute("UPDATE bothy.consumer_holds SET lease_until = now() - interval '1 ms' WHERE agent = %s",
                    (agent,))
        cur.execute("SELECT bothy.consumer_save(%s, %s, 0), bothy.run_start(%s, %s)", (agent, poller, run, poller))
        assert cur.fetchone() == (False, False)
        conn.rollback()


def test_a_takeover_racing_the_release_wins(fast, listener_of):
    """The race of D-M7-17-4 made to happen with the real worker: a takeover
    holds the hold row while the old lease lapses.  The worker's rounds
    meanwhile skip that row (and still release another lapsed hold), never
    wait for it, and after the commit the new holder stays."""
    listener = listener_of(fast)
    agent, other, poller, taker = new_id(), new_id(), new_id(), new_id()
    for a in (agent, other):
        fast.query("SELECT bothy.agent_put(%s)", a)
        fast.query("SELECT bothy.consumer_take(%s, %s, %s, 'poll', '1 second')", a, NODE_A, poller)
    conn = fast.connect(autocommit=False)
    try:
        conn.cursor().execute("SELECT bothy.consumer_take(%s, %s, %s, 'poll', '30 seconds')",
                              (agent, NODE_B, taker))
        # both old leases lapse; the worker releases the other hold meanwhile
        released = signals_until(listener, lambda s: s.get("agent") == other and s.get("gateway_session") == NIL,
                                 timeout=5)
        assert not [s for s in released if s.get("agent") == agent and s.get("gateway_session") == NIL]
        assert fast.query("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'bothy maintenance'"
                          " AND wait_event_type = 'Lock'") == [(0,)]
        conn.commit()
    finally:
        conn.close()
    sentinel_after_rounds(fast, listener, rounds=3,
                          forbidden=lambda s: s.get("agent") == agent and s.get("gateway_session") == NIL)
    assert fast.query("SELECT holder_session::text FROM bothy.consumer_holder(%s)", agent) == [(taker,)]


def present(inst, node, person):
    assert flush(inst, node, True, [(new_id(), person, new_id())]) is True


def test_a_connected_recipient_gets_a_hint_and_another_a_push(fast, listener_of):
    listener = listener_of(fast)
    here, away = new_id(), new_id()
    hints, pushes = metric(fast, "hints_sent"), metric(fast, "pushes_queued")
    present(fast, NODE_A, here)
    with fast.connect() as conn:
        cur = conn.cursor()
        thread = new_id()
        cur.execute("SELECT bothy.notification_created(%s, 'mention', false, 2, %s)", (here, thread))
        hinted = cur.fetchone()[0]
        cur.execute("SELECT bothy.notification_created(%s, 'direct', true, 1)", (away,))
        pushed = cur.fetchone()[0]
    hint = signals_until(listener, lambda s: s["kind"] == "gateway.hint")[-1]
    assert hint == {"kind": "gateway.hint", "node": cluster_node(fast), "recipient": here, "nid": hinted,
                    "hint_kind": "mention", "quiet": False, "count": 2, "thread": thread}
    poll_until(lambda: fast.query("SELECT count(*) FROM bothy.push_outbox WHERE nid = %s", pushed)[0][0] == 1,
               timeout=5, what="the push queued")
    assert fast.query("SELECT count(*) FROM bothy.hints_pending WHERE nid IN (%s, %s)", hinted, pushed) == [(0,)]
    assert fast.query("SELECT count(*) FROM bothy.push_outbox WHERE nid = %s", hinted) == [(0,)]
    assert metric(fast, "hints_sent") == hints + 1
    assert metric(fast, "pushes_queued") == pushes + 1


def test_two_push_senders_claim_disjoint_rows_and_a_rollback_loses_nothing(fast):
    away = new_id()
    nids = {fast.query("SELECT bothy.notification_created(%s, 'system', true, 0)", away)[0][0] for _ in range(6)}
    poll_until(lambda: fast.query("SELECT count(*) FROM bothy.push_outbox o JOIN bothy.notifications n"
                                  " USING (nid) WHERE n.recipient = %s", away)[0][0] == 6,
               timeout=5, what="six pushes queued")
    claimed_before = metric(fast, "pushes_claimed")
    first, second = fast.connect(autocommit=False), fast.connect(autocommit=False)
    try:
        a, b = first.cursor(), second.cursor()
        a.execute("SELECT nid FROM bothy.push_claim(4) WHERE recipient = %s", (away,))
        mine = {r[0] for r in a.fetchall()}
        b.execute("SELECT nid FROM bothy.push_claim(1000) WHERE recipient = %s", (away,))  # does not wait
        theirs = {r[0] for r in b.fetchall()}
        assert mine and theirs and not (mine & theirs)
        assert mine | theirs <= nids
        first.rollback()                 # the first sender failed: its rows go back
        second.commit()
    finally:
        first.close()
        second.close()
    left = {r[0] for r in fast.query("SELECT nid FROM bothy.push_claim(1000) WHERE recipient = %s", away)}
    assert left == nids - theirs
    assert metric(fast, "pushes_claimed") >= claimed_before + len(nids)


def test_signal_counters_move_per_kind(fast, listener_of):
    listener = listener_of(fast)
    kind = "terminal.host_close"
    staged, sent = metric(fast, "signals_staged", kind), metric(fast, "signals_sent", kind)
    coalesced = metric(fast, "signals_coalesced", "gateway.run")
    agent_coalesced = metric(fast, "signals_coalesced", "gateway.agent_event")
    host = new_id()
    with fast.connect(autocommit=False) as conn:
        cur = conn.cursor()
        for _ in range(3):   # three identical payloads in one commit: one is sent
            cur.execute("SELECT bothy.publish('terminal.host_close', jsonb_build_object('host_id', %s::text))",
                        (host,))
        run, thread = new_id(), new_id()
        for version in (1, 2):   # the same run twice in one batch: the older one coalesced
            cur.execute("SELECT bothy.publish('gateway.run', jsonb_build_object('node', %s::text, 'run', %s::text,"
                        " 'thread', %s::text, 'version', %s))", (NODE_A, run, thread, version))
        agent, other = new_id(), new_id()
        for who, event in ((agent, 1), (other, 1), (agent, 2)):   # per agent, the highest event is sent
            cur.execute("SELECT bothy.publish('gateway.agent_event', jsonb_build_object('node', %s::text, "
                        "'agent', %s::text, 'event', %s))", (NODE_A, who, event))
        conn.commit()
    received = signals_until(listener, lambda s: s.get("run") == run)
    received += signals_until(listener, lambda s: s.get("agent") == agent)
    events = [(s["agent"], s["event"]) for s in received if s["kind"] == "gateway.agent_event"]
    assert sorted(events) == sorted([(agent, 2), (other, 1)])
    assert [s["version"] for s in received if s.get("run") == run] == [2]   # the newer version only
    assert metric(fast, "signals_staged", kind) == staged + 3
    poll_until(lambda: metric(fast, "signals_sent", kind) == sent + 1, timeout=5, what="the sent counter")
    assert metric(fast, "signals_coalesced", "gateway.run") == coalesced + 1
    assert metric(fast, "signals_coalesced", "gateway.agent_event") == agent_coalesced + 1


def test_a_failing_task_is_counted_and_the_others_still_run(fast):
    errors = metric(fast, "worker_errors", "maintenance")
    fast.query("ALTER FUNCTION bothy._agents_expire() RENAME TO _agents_expire_saved")
    try:
        poll_until(lambda: metric(fast, "worker_errors", "maintenance") >= errors + 2, timeout=5,
                   what="the failing task counted")
        # presence expiry, a task after... and before it, still works
        rows = [(new_id(), new_id(), new_id())]
        assert flush(fast, NODE_A, True, rows) is True
        poll_until(lambda: fast.query("SELECT count(*) FROM bothy.gateway_presence WHERE person = %s",
                                      rows[0][1])[0][0] == 0, timeout=5, what="expiry while a task fails")
        assert worker_pid(fast) is not None
    finally:
        fast.query("ALTER FUNCTION bothy._agents_expire_saved() RENAME TO _agents_expire")
    assert "bothy maintenance could not finish the agent offline task" in fast.log


def test_the_worker_waits_for_the_extension_and_survives_drop_and_create(fast, listener_of):
    pid = worker_pid(fast)
    errors = metric(fast, "worker_errors", "maintenance")
    fast.query("DROP EXTENSION bothy")
    poll_until(lambda: "bothy maintenance waits for CREATE EXTENSION bothy" in fast.log, timeout=5,
               what="the worker noticing")
    time.sleep(0.3)            # a few rounds with no extension
    fast.query("CREATE EXTENSION bothy")
    poll_until(lambda: fast.log.count("bothy maintenance is working") >= 2, timeout=5, what="the worker resuming")
    assert worker_pid(fast) == pid              # the same process: it never failed
    assert metric(fast, "worker_errors", "maintenance") == errors
    listener = listener_of(fast)
    agent = new_id()
    fast.query(HEARTBEAT, agent, NODE_A, "3 seconds")
    assert signals_until(listener, lambda s: s.get("agent") == agent)[-1]["state"] == "offline"


def test_a_drop_during_a_round_is_no_task_failure(fast):
    """DROP EXTENSION between the round's check and a task: the tasks after
    it find nothing to call, which is the extension going away, not a
    failure to count or log."""
    errors = metric(fast, "worker_errors", "maintenance")
    working = fast.log.count("bothy maintenance is working")
    waiting = fast.log.count("bothy maintenance waits for CREATE EXTENSION bothy")
    failed = fast.log.count("could not finish the")
    # the agent task sleeps, so the drop lands in the middle of a round
    fast.query("CREATE OR REPLACE FUNCTION bothy._agents_expire() RETURNS integer "
               "LANGUAGE sql AS 'SELECT 0 FROM pg_sleep(1)'")
    poll_until(lambda: fast.query("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'bothy maintenance'"
                                  " AND query LIKE '%%_agents_expire%%' AND state = 'active'")[0][0] == 1,
               timeout=5, what="the round in its slow task")
    fast.query("DROP EXTENSION bothy")
    poll_until(lambda: fast.log.count("bothy maintenance waits for CREATE EXTENSION bothy") > waiting,
               timeout=5, what="the worker noticing")
    fast.query("CREATE EXTENSION bothy")
    poll_until(lambda: fast.log.count("bothy maintenance is working") > working, timeout=5,
               what="the worker resuming")
    assert metric(fast, "worker_errors", "maintenance") == errors
    assert fast.log.count("could not finish the") == failed


def test_the_extension_is_refused_outside_bothy_database(fast):
    fast.query("CREATE DATABASE elsewhere")
    conn = fast.connect(dbname="elsewhere")
    try:
        with pytest.raises(psycopg2.Error) as refused:
            conn.cursor().execute("CREATE EXTENSION bothy")
        assert "bothy must be installed in the database named by bothy.database" in str(refused.value)
    finally:
        conn.close()


def test_a_reload_pauses_and_resumes_the_worker(fast):
    """SIGHUP: the worker reads the new settings; an inconsistent pair
    pauses it with one log record, a fix resumes it."""
    working = fast.log.count("bothy maintenance is working")
    fast.reload_with("bothy.presence_flush_interval = '600ms'")     # 1 s is not more than twice 600 ms
    poll_until(lambda: "bothy maintenance is paused" in fast.log, timeout=5, what="the pause")
    rows = [(new_id(), new_id(), new_id())]
    fast.reload_with("bothy.presence_flush_interval = '100ms'")
    poll_until(lambda: fast.log.count("bothy maintenance is working") > working, timeout=5, what="the resume")
    assert flush(fast, NODE_A, True, rows) is True
    poll_until(lambda: fast.query("SELECT count(*) FROM bothy.gateway_presence WHERE person = %s",
                                  rows[0][1])[0][0] == 0, timeout=5, what="expiry after the resume")
    assert fast.log.count("bothy maintenance is paused") == 1


def test_a_terminated_worker_is_restarted_without_restarting_the_server(fast):
    fanout = fast.wait_fanout()
    before = worker_pid(fast)
    fast.query("SELECT pg_terminate_backend(%s)", before)
    poll_until(lambda: worker_pid(fast) not in (None, before), timeout=10, what="a new maintenance worker")
    # SIGTERM is a clean exit: the postmaster restarted only this worker
    assert fast.fanout_pid() == fanout
    assert "terminated by signal" not in fast.log


def worker_waits_for_a_lock(inst):
    pid = worker_pid(inst)
    return pid is not None and inst.query("SELECT count(*) FROM pg_locks WHERE pid = %s AND NOT granted",
                                          pid)[0][0] > 0


def test_the_worker_is_the_one_that_yields_in_a_deadlock(fast):
    """An operator (or DROP EXTENSION) locks the schema's tables in its own
    order: here gateway_presence first, then gateway_presence_nodes, the
    reverse of the presence expiry task.  The worker waits for the first
    lock past its own deadlock check (a second by default); the operator's
    second lock then closes the cycle.  With PostgreSQL's defaults the
    operator's check found it and the operator was cancelled; the worker
    gives up any lock wait after lock_timeout 1 s, so the operator wins."""
    errors = metric(fast, "worker_errors", "maintenance")
    operator = fast.connect(autocommit=False)
    try:
        cur = operator.cursor()
        cur.execute("LOCK TABLE bothy.gateway_presence IN ACCESS EXCLUSIVE MODE")
        poll_until(lambda: worker_waits_for_a_lock(fast), timeout=5, what="the worker waiting for the lock")
        time.sleep(1.5)                     # past the worker's own check at deadlock_timeout
        cur.execute("SET lock_timeout = '10s'")
        cur.execute("LOCK TABLE bothy.gateway_presence_nodes IN ACCESS EXCLUSIVE MODE")   # no deadlock error
        operator.commit()
    finally:
        operator.close()
    assert metric(fast, "worker_errors", "maintenance") > errors       # the worker's task gave up, counted
    assert "could not finish the presence expiry task" in fast.log


def test_a_lock_held_past_the_workers_patience_costs_no_notification_an_attempt(fast):
    """The push path waits for push_outbox, locked by an operator for longer
    than the worker's lock_timeout (1 s) over and over: each of those runs
    of the task gives up as a whole, and no attempt of the notification is
    used (five would have abandoned it).  Released, the push is queued."""
    away = new_id()
    operator = fast.connect(autocommit=False)
    try:
        operator.cursor().execute("LOCK TABLE bothy.push_outbox IN ACCESS EXCLUSIVE MODE")
        nid = fast.query("SELECT bothy.notification_created(%s, 'direct', true, 1)", away)[0][0]
        time.sleep(6.5)                     # six runs of the task, at least, each giving up
        assert fast.query("SELECT attempts FROM bothy.hints_pending WHERE nid = %s", nid) == [(0,)]
    finally:
        operator.rollback()
        operator.close()
    poll_until(lambda: fast.query("SELECT count(*) FROM bothy.push_outbox WHERE nid = %s", nid)[0][0] == 1,
               timeout=5, what="the push queued after the lock")
