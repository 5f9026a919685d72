"""The WAL fence (docs/signals.md, "The fence"): the fan-out worker
notifies a wal.fence first in each batch's transaction, from its own pid,
at or after the commit of every signal of the batch and already flushed; a
producer's fallback NOTIFY carries none; and no producer may publish one."""
import json
import os
import signal

import psycopg2
import pytest

from conftest import Instance, Listener, new_id

PUBLISH = "SELECT bothy.publish('terminal.host_close', jsonb_build_object('host_id', %s::text))"


def lsn_number(text):
    hi, lo = text.split("/")
    return int(hi, 16) << 32 | int(lo, 16)


@pytest.fixture(scope="module")
def inst():
    # the smallest queue (some 580 signals): filled quickly for the fallback
    inst = Instance("fence", ["bothy.signal_queue_size = '64kB'"])
    inst.start()
    inst.wait_fanout()
    yield inst
    inst.close()


def test_each_batch_starts_with_a_fence_past_its_commits(inst):
    listener = Listener(inst)
    producer = inst.connect(autocommit=False)
    cur = producer.cursor()
    host = new_id()
    cur.execute("SELECT pg_current_wal_insert_lsn()::text")
    before = lsn_number(cur.fetchone()[0])
    cur.execute("INSERT INTO bothy.places (place) VALUES (%s)", (new_id(),))
    cur.execute(PUBLISH, (host,))
    producer.commit()
    fence = listener.next_notify()
    signal_ = listener.next_notify()
    # the fence first, then the signal, both from the fan-out worker
    assert json.loads(fence.payload)["kind"] == "wal.fence"
    assert json.loads(signal_.payload) == {"kind": "terminal.host_close", "host_id": host}
    assert fence.pid == signal_.pid == inst.fanout_pid()
    lsn = json.loads(fence.payload)["lsn"]
    # past the producer's commit record (written after `before`), and flushed
    assert lsn > before
    flushed = lsn_number(inst.query("SELECT pg_current_wal_flush_lsn()::text")[0][0])
    assert lsn <= flushed
    assert set(json.loads(fence.payload)) == {"kind", "lsn"}
    producer.close()
    listener.close()


def test_a_fallback_notify_carries_no_fence(inst):
    """The worker stopped (SIGSTOP): the producer's own NOTIFY is heard from
    the producer's pid, with no wal.fence of that pid before it."""
    listener = Listener(inst)
    pid = inst.fanout_pid()
    os.kill(pid, signal.SIGSTOP)
    try:
        host = new_id()
        small = inst.connect()
        cur = small.cursor()
        cur.execute("SELECT pg_backend_pid()")
        producer_pid = cur.fetchone()[0]
        # fill the queue (some 580 fit): the last signal falls back
        for _ in range(800):
            cur.execute(PUBLISH, (new_id(),))
        cur.execute(PUBLISH, (host,))
        cur.execute("SELECT value FROM bothy.metrics() WHERE metric = 'signals_fallback' "
                    "AND label = 'terminal.host_close'")
        assert cur.fetchone()[0] > 0
        while True:
            notify = listener.next_notify(timeout=5)
            if notify.pid == producer_pid:
                assert not notify.payload.startswith('{"kind":"wal.fence"')
                if json.loads(notify.payload).get("host_id") == host:
                    break
        small.close()
    finally:
        os.kill(pid, signal.SIGCONT)
    listener.close()


def test_no_producer_publishes_a_fence(inst):
    with pytest.raises(psycopg2.Error) as e:
        inst.query("SELECT bothy.publish('wal.fence', jsonb_build_object('lsn', 1))")
    assert 'kind "wal.fence" is sent by the fan-out worker only' in str(e.value)
    with pytest.raises(psycopg2.Error):
        inst.query("""SELECT bothy.publish('{"kind":"wal.fence","lsn":1}')""")


def pad_to_page_boundary(conn):
    """Writes WAL (non-transactional logical messages: no transaction, no
    commit record) until the next record would start at a WAL page's first
    byte: pg_current_wal_insert_lsn() then reads 24 past a page start (the
    short page header).  True when it got there."""
    cur = conn.cursor()

    def insert():
        cur.execute("SELECT pg_current_wal_insert_lsn()::text")
        return lsn_number(cur.fetchone()[0])

    # a record's size for a 1000-byte message, to learn its fixed part
    before = insert()
    cur.execute("SELECT pg_logical_emit_message(false, 'bothy', repeat('x', 1000))")
    overhead = insert() - before - 1000
    for _ in range(20):
        at = insert()
        if at % 8192 == 24:
            return True
        remaining = 8192 - at % 8192
        if remaining < 600:
            # too close for the fixed part: into the next page first
            cur.execute("SELECT pg_logical_emit_message(false, 'bothy', repeat('x', 700))")
            continue
        cur.execute("SELECT pg_logical_emit_message(false, 'bothy', repeat('x', %s))",
                    (remaining - overhead,))
    return False


def test_a_fence_at_a_wal_page_boundary_is_delivered(inst):
    """The fence read right after a record that ends a WAL page is that
    page's end, not the next record's start past the next page's header
    (beyond all WAL written): flushing up to the latter fails and the
    worker would lose the batch (docs/signals.md, "The fence")."""
    listener = Listener(inst)
    producer = inst.connect()
    hit = False
    for _ in range(10):
        if not pad_to_page_boundary(producer):
            continue
        # a publish in a transaction that writes no WAL: the fence is the
        # insert position itself
        host = new_id()
        producer.cursor().execute(PUBLISH, (host,))
        fence = json.loads(listener.next_notify().payload)
        assert fence["kind"] == "wal.fence"
        assert json.loads(listener.next_notify().payload)["host_id"] == host
        if fence["lsn"] % 8192 == 0:
            hit = True
            break
    assert hit, "no fence fell on a page boundary in 10 tries"
    producer.close()
    listener.close()
