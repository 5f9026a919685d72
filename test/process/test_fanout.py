"""The fan-out path: signals staged by committed transactions reach a real
LISTEN connection through the fan-out worker, in commit order, never after a
rollback; a full queue falls back to NOTIFY, and so does a producer that
finds no fan-out worker running; a killed worker comes back."""
import contextlib
import json
import os
import signal
import time

import psycopg2
import pytest

from conftest import Instance, Listener, new_id, poll_until

PUBLISH = "SELECT bothy.publish('terminal.host_close', jsonb_build_object('host_id', %s::text))"
FALLBACK = "SELECT value FROM bothy.metrics() WHERE metric = 'signals_fallback' AND label = 'terminal.host_close'"


def host_close(host):
    return json.dumps({"kind": "terminal.host_close", "host_id": host}, separators=(",", ":"))


@pytest.fixture(scope="module")
def small_queue():
    # the smallest queue: 64 kB hold some 580 signals of this size (113 bytes each)
    inst = Instance("fanout", ["bothy.signal_queue_size = '64kB'"])
    inst.start()
    yield inst
    inst.close()


def test_the_worker_is_visible_by_name(small_queue):
    small_queue.wait_fanout()


def test_commit_order_across_transactions(small_queue, listener_of):
    listener = listener_of(small_queue)
    first, second = small_queue.connect(autocommit=False), small_queue.connect(autocommit=False)
    a, b = new_id(), new_id()
    first.cursor().execute(PUBLISH, (a,))       # staged first ...
    second.cursor().execute(PUBLISH, (b,))
    second.commit()                             # ... committed last
    first.commit()
    assert [listener.next(), listener.next()] == [host_close(b), host_close(a)]
    first.close()
    second.close()


def test_a_full_queue_falls_back_to_notify_and_loses_nothing(small_queue, listener_of):
    listener = listener_of(small_queue)
    fallback_before = small_queue.query(FALLBACK)[0][0]
    pid = small_queue.fanout_pid()
    os.kill(pid, signal.SIGSTOP)                # the worker stops draining the queue
    try:
        hosts = [new_id() for _ in range(3000)]   # some 340 kB: the queue fills
        with small_queue.connect() as conn:
            cur = conn.cursor()
            for h in hosts:
                cur.execute(PUBLISH, (h,))
        # only the producers' own NOTIFY can deliver while the worker is stopped
        received = {json.loads(listener.next())["host_id"]}
    finally:
        os.kill(pid, signal.SIGCONT)
    while len(received) < len(hosts):
        received.add(json.loads(listener.next(timeout=20))["host_id"])
    assert received == set(hosts)
    assert small_queue.query(FALLBACK)[0][0] > fallback_before     # counted, never silent


def postmaster_pid(inst):
    with open(os.path.join(inst.dir, "data", "postmaster.pid")) as f:
        return int(f.readline())


@contextlib.contextmanager
def no_worker_running(inst):
    """The worker gone and the postmaster, stopped, unable to start another."""
    before = inst.fanout_pid()
    inst.query("SELECT pg_terminate_backend(%s)", before)
    poll_until(lambda: inst.fanout_pid() is None, timeout=10, what="the worker's exit")
    postmaster = postmaster_pid(inst)
    os.kill(postmaster, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(postmaster, signal.SIGCONT)
    poll_until(lambda: inst.fanout_pid() not in (None, before), timeout=10, what="a new fan-out worker")


def test_a_signal_committed_while_no_worker_runs_is_sent_by_its_producer(small_queue, listener_of):
    """A queued signal would wait for a worker; the producer's NOTIFY sends it now."""
    listener = listener_of(small_queue)
    producer = small_queue.connect()            # opened while the postmaster answers
    fallback_before = small_queue.query(FALLBACK)[0][0]
    with no_worker_running(small_queue):
        host = new_id()
        producer.cursor().execute(PUBLISH, (host,))
        assert listener.next(timeout=5) == host_close(host)
    producer.close()
    assert small_queue.query(FALLBACK)[0][0] == fallback_before + 1
    host = new_id()                             # and the queue serves again
    small_queue.query(PUBLISH, host)
    assert listener.next() == host_close(host)
    assert small_queue.query(FALLBACK)[0][0] == fallback_before + 1


def test_the_fallback_coalesces_as_the_worker_does(small_queue, listener_of):
    """One transaction's terminal.log wake-ups sent by its own NOTIFY: only
    the highest number goes out (a host's disable appends a row per ended
    session, and this was three wake-ups in single mode's CI run)."""
    listener = listener_of(small_queue)
    producer = small_queue.connect(autocommit=False)
    log = "SELECT bothy.publish('terminal.log', jsonb_build_object('seq', %s::bigint))"
    with no_worker_running(small_queue):
        cur = producer.cursor()
        for seq in (41, 43, 42):
            cur.execute(log, (seq,))
        host = new_id()
        cur.execute(PUBLISH, (host,))
        producer.commit()
        mark = new_id()                         # committed after: everything before it comes first
        cur.execute(PUBLISH, (mark,))
        producer.commit()
        got = []
        while not got or got[-1] != host_close(mark):
            got.append(listener.next(timeout=5))
    producer.close()
    assert [json.loads(g) for g in got[:-1]] == [{"kind": "terminal.log", "seq": 43},
                                                 {"kind": "terminal.host_close", "host_id": host}]


def test_the_first_signals_of_a_new_database_are_not_held_for_the_worker():
    """At a server's start the worker fails until bothy.database exists and
    is tried again a second later; signals of a database created meanwhile
    (pg-temp creates it at once) went out only then, 0.6 to 0.75 s late."""
    inst = Instance("fresh", [])
    inst.start()
    try:
        listener = Listener(inst)
        producer = inst.connect()
        for _ in range(5):
            host = new_id()
            started = time.monotonic()
            producer.cursor().execute(PUBLISH, (host,))
            assert listener.next(timeout=5) == host_close(host)
            assert time.monotonic() - started < 0.3
        producer.close()
        listener.close()
    finally:
        inst.close()


def test_a_killed_worker_comes_back_and_the_cluster_keeps_working(small_queue, listener_of):
    before = small_queue.fanout_pid()
    os.kill(before, signal.SIGKILL)             # the postmaster restarts the cluster's processes
    poll_until(lambda: _new_worker(small_queue, before), timeout=30, what="a new fan-out worker")
    listener = listener_of(small_queue)
    host = new_id()
    small_queue.query(PUBLISH, host)
    assert listener.next(timeout=10) == host_close(host)
    # the maintenance worker came back with it and works again
    poll_until(lambda: small_queue.query("SELECT count(*) FROM pg_stat_activity"
                                         " WHERE backend_type = 'bothy maintenance'")[0][0] == 1,
               timeout=10, what="the maintenance worker")
    poll_until(lambda: small_queue.log.count("bothy maintenance is working") >= 2, timeout=10,
               what="the maintenance worker working after the restart")


def _new_worker(inst, before):
    """True once the restarted server answers with a new worker; the server
    refuses connections while it restarts and recovers."""
    try:
        return inst.fanout_pid() not in (None, before)
    except psycopg2.Error:             # refused, or cut while the server restarts
        return False
