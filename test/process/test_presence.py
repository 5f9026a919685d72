"""Presence across a crash and across time (D-M7-17-6), on real instances."""
import pytest

from conftest import Instance, NODE_A, NODE_B, new_id, poll_until

FLUSH = "SELECT bothy.presence_flush(%s, %s, %s::uuid[], %s::uuid[], %s::uuid[], %s::uuid[], %s::boolean[], %s::uuid[])"


def flush(instance, node, full, rows=(), ended=()):
    sessions = [r[0] for r in rows]
    persons = [r[1] for r in rows]
    devices = [r[2] for r in rows]
    return instance.query(FLUSH, node, full, sessions, persons, devices,
                          [None] * len(rows), [False] * len(rows), list(ended))[0][0]


def fresh_count(instance, persons):
    return len(instance.query("SELECT * FROM bothy.presence_read(%s::uuid[])", persons))


@pytest.fixture
def fast_ttl():
    # the shortest TTL the settings allow, with the flush interval well below half of it
    inst = Instance("ttl", ["bothy.presence_ttl = '1s'", "bothy.presence_flush_interval = '100ms'"])
    inst.start()
    yield inst
    inst.close()


def test_rows_come_back_after_a_crash_truncated_the_table(multi):
    rows = [(new_id(), new_id(), new_id()) for _ in range(50)]
    persons = [r[1] for r in rows]
    assert flush(multi, NODE_A, True, rows) is True
    agent = new_id()
    multi.query("SELECT bothy.consumer_take(%s, %s, %s, 'connection')", agent, NODE_A, new_id())
    assert fresh_count(multi, persons) == 50

    multi.crash()
    multi.restart()

    # the UNLOGGED tables are empty; the logged hold survived
    assert fresh_count(multi, persons) == 0
    assert multi.query("SELECT holder_kind FROM bothy.consumer_holder(%s)", agent) == [("connection",)]
    # the node's next delta is refused, which makes it send everything
    assert flush(multi, NODE_A, False, rows[:1]) is False
    assert multi.query("SELECT count(*) FROM bothy.gateway_presence")[0][0] == 0
    assert flush(multi, NODE_A, True, rows) is True
    assert fresh_count(multi, persons) == 50


def test_a_silent_nodes_rows_disappear_within_the_ttl(fast_ttl):
    silent = [(new_id(), new_id(), new_id()) for _ in range(5)]
    live = [(new_id(), new_id(), new_id())]
    assert flush(fast_ttl, NODE_A, True, silent) is True
    assert flush(fast_ttl, NODE_B, True, live) is True

    def gone():
        flush(fast_ttl, NODE_B, False)          # node B keeps flushing; node A has crashed
        return fast_ttl.query("SELECT count(*) FROM bothy.gateway_presence WHERE node = %s", NODE_A)[0][0] == 0
    elapsed = poll_until(gone, timeout=5.0, interval=0.1, what="expiry of the silent node's rows")
    assert elapsed <= 1.0 + 0.5, "rows of a silent node outlived the 1 s TTL by more than one flush"
    # the live node's row is untouched, and the silent node must send a full flush to come back
    assert fresh_count(fast_ttl, [live[0][1]]) == 1
    assert flush(fast_ttl, NODE_A, False) is False
