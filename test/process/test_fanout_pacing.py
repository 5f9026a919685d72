"""Fan-out pacing (bothy.fanout_linger): batches start at least the linger
apart, so a steady stream of single-signal commits is sent in a few
transactions instead of one per commit, in commit order; a signal after a
quiet spell is sent at once, not after the linger."""
import json
import math
import threading
import time

import pytest

from conftest import Instance, new_id, poll_until

LINGER_S = 0.1          # the largest linger the setting allows: timing margins stay wide
PUBLISH = "SELECT bothy.publish('terminal.host_close', jsonb_build_object('host_id', %s::text))"
STREAM_GAP_S = 0.01     # 20 commits over some 200 ms: two lingers and more
BATCHES = "SELECT value FROM bothy.metrics() WHERE metric = 'fanout_batches'"
SENT_AND_BATCHES = ("SELECT sum(value) FILTER (WHERE metric = 'signals_sent')::bigint, "
                    "sum(value) FILTER (WHERE metric = 'fanout_batches')::bigint FROM bothy.metrics()")


@pytest.fixture(scope="module")
def paced():
    inst = Instance("paced", ["bothy.fanout_linger = '100ms'"])
    inst.start()
    inst.wait_fanout()
    yield inst
    inst.close()


def host_of(payload):
    return json.loads(payload)["host_id"]


def test_a_steady_stream_is_sent_in_few_batches_in_commit_order(paced, listener_of):
    listener = listener_of(paced)
    hosts = [new_id() for _ in range(20)]
    before = paced.query(BATCHES)[0][0]
    # autocommit, and no "with conn:" (psycopg2 makes that one transaction):
    # one transaction per signal
    conn = paced.connect()
    cur = conn.cursor()
    started = time.monotonic()
    for host in hosts:
        cur.execute(PUBLISH, (host,))
        time.sleep(STREAM_GAP_S)            # the stream's pace: the workload, not a wait
    burst = time.monotonic() - started
    conn.close()
    received = [host_of(listener.next()) for _ in hosts]
    assert received == hosts
    batches = paced.query(BATCHES)[0][0] - before
    # one batch at once, then at most one per linger the burst lasted
    # (plus one for the tail); unpaced, nearly every commit is a batch
    assert 1 <= batches <= 2 + math.ceil(burst / LINGER_S), (batches, burst)
    assert batches < len(hosts)


def test_a_signal_after_a_quiet_spell_is_sent_at_once(paced, listener_of):
    listener = listener_of(paced)
    latencies = []
    conn = paced.connect()
    for _ in range(3):
        # a quiet spell just longer than the linger (the precondition, not a
        # wait for an outcome): the worker's last batch began more than one
        # ago.  Just longer, so that a worker that wrongly paced from its
        # last empty look (some 100 ms after the batch) would hold this
        # signal back some 80 ms, well over the bound below.
        time.sleep(LINGER_S * 1.2)
        host = new_id()
        started = time.monotonic()
        conn.cursor().execute(PUBLISH, (host,))
        assert host_of(listener.next()) == host
        latencies.append(time.monotonic() - started)
    conn.close()
    # a worker that always waited out the linger would take 100 ms or more
    # every time; the best of three rides over a noisy machine's stalls
    assert min(latencies) < LINGER_S / 2, latencies


def test_a_reload_reaches_the_worker_under_a_stream_that_never_lets_it_idle(paced):
    """Commits 10 ms apart against a 100 ms linger: every paced look finds
    signals, so the worker never reaches its idle wait.  A reload to a
    linger of 0 must still reach it, between batches: then the batches
    follow the commits (about one signal each) instead of some ten a batch."""
    stop = threading.Event()

    def stream():
        conn = paced.connect()
        cur = conn.cursor()
        while not stop.is_set():
            cur.execute(PUBLISH, (new_id(),))
            time.sleep(STREAM_GAP_S)
        conn.close()

    def batches_follow_commits():
        sent, batches = paced.query(SENT_AND_BATCHES)[0]
        time.sleep(0.3)                     # a measuring window of the stream
        sent2, batches2 = paced.query(SENT_AND_BATCHES)[0]
        return sent2 - sent >= 10 and (batches2 - batches) * 2 >= sent2 - sent

    streamer = threading.Thread(target=stream)
    streamer.start()
    try:
        assert not batches_follow_commits()  # paced: some ten signals a batch
        paced.reload_with("bothy.fanout_linger = '0'")
        poll_until(batches_follow_commits, timeout=10, what="the worker on the reloaded linger")
    finally:
        stop.set()
        streamer.join()
        paced.reload_with("bothy.fanout_linger = '100ms'")
