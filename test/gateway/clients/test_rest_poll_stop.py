"""A stop of the node while REST long polls of agent events wait
(docs/protocol.md, "GET /v1/agent/events"; docs/gateway.md, "Stop:
SIGTERM"): each waiting poll is answered at once, with its whole answer, and
the node exits cleanly, also when the poll's take of the stream is still
waiting for the row (held by a lock here) as the stop begins."""
import asyncio
import signal

from cluster import World, rest_started
from conftest import poll_until, run

PATH = "/v1/agent/events"


def test_a_stop_while_a_poll_takes_the_stream_answers_it_and_exits_cleanly(gateways, keys, pg):
    node = gateways(1)
    w = World(pg)
    agent = w.agent()
    w.q("SELECT bothy.consumer_take(%s, '01890a5d-ac96-774b-bcce-b302099a8057', gen_random_uuid(), "
        "'poll', '30 seconds')", agent)
    lock = pg.connect(autocommit=False)
    try:
        lock.cursor().execute("SELECT * FROM bothy.consumer_holds WHERE agent = %s FOR UPDATE", (agent,))

        async def go():
            waiting = rest_started(node, PATH + "?wait_ms=20000", keys.agent(agent), timeout=30)
            poll_until(lambda: pg.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                                        " AND query LIKE '%%consumer_take%%'")[0][0] == 1,
                       timeout=5, what="the poll's take waiting for the row")
            node.proc.send_signal(signal.SIGTERM)
            await asyncio.sleep(0.3)
            lock.commit()           # the take goes on, into a stopping node
            return await waiting
        status, body, took = run(go())
    finally:
        lock.close()
    assert (status, body["events"]) == (200, [])     # answered at once, not after its wait
    assert took < 5.0
    assert node.proc.wait(10) == 0


def test_a_stop_writes_the_whole_answer_of_every_poll_it_ends(gateways, keys, pg):
    """A stop answers a waiting poll: its headers go at one writeable and its
    body at the next, while the stop's own node_stop call runs.  The stop
    waits for the body (a client once read the headers and then nothing).
    The race is timing's: some stops, each with a poll waiting."""
    w = World(pg)
    for _ in range(12):
        node = gateways(1)
        agent = w.agent()

        async def go():
            waiting = rest_started(node, PATH + "?wait_ms=20000", keys.agent(agent), timeout=30)
            poll_until(lambda: w.holder(agent)[1] == "poll", timeout=5, what="the poll holding the stream")
            node.proc.send_signal(signal.SIGTERM)
            return await waiting
        status, body, took = run(go())     # a cut body raises IncompleteRead here
        assert (status, body["events"]) == (200, [])
        assert took < 5.0
        assert node.proc.wait(10) == 0
