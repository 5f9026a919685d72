"""The WAL fence (docs/signals.md, "The fence"): the fan-out worker
notifies a wal.fence first in each batch's transaction, from its own pid,
at or after the commit of every signal of the batch and already flushed; a
producer's fallback NOTIFY carries none; and no producer may publish one."""
import json
import os
import signal

import psycopg2
import pytest

from conftest import Instance, Listener, new_id, poll_until
from test_fanout import worker_pid

PUBLISH = "SELECT bothy.publish('terminal.host_close', jsonb_build_object('host_id', %s::text))"


def lsn_number(text):
    hi, lo = text.split("/")
    return int(hi, 16) << 32 | int(lo, 16)


@pytest.fixture(scope="module")
def inst():
    # the smallest queue (some 580 signals): filled quickly for the fallback
    inst = Instance("fence", ["bothy.signal_queue_size = '64kB'"])
    inst.start()
    poll_until(lambda: worker_pid(inst) is not None, timeout=10, what="the fan-out worker")
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
    assert fence.pid == signal_.pid == worker_pid(inst)
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
    pid = worker_pid(inst)
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
