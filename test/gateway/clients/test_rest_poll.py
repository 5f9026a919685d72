"""The REST long poll of agent events, GET /v1/agent/events, on real
gateways (docs/protocol.md, D-M7-17-4): it answers at once when events are
there, waits for one to be appended (past libwebsockets' own 10 s timeout
too), and answers empty at wait_ms; `after` reports events done; bad
arguments (an empty query argument too) are 400 and bad tokens 401; each
poll is a new holder of the agent's stream, so a WebSocket consumer of the
agent on either node is fenced (4015), and a consumer's identify on either
node while a poll waits makes the poll answer 409."""
import asyncio
import time

from cluster import FOREIGN_NODE, Client, World, rest, rest_started
from conftest import poll_until, run

PATH = "/v1/agent/events"
CONSUMER = 'bothy_gateway_signals_received_total{kind="gateway.consumer"}'


def heard(node, count):
    """Until node heard count takeovers of other nodes: a poll that starts
    waiting there before an earlier takeover's signal came would be fenced
    by it (reported as a bug; these tests wait so that they show the rest)."""
    poll_until(lambda: node.metric(CONSUMER) >= count, timeout=5, what="takeover heard")


def brief(body):
    return [(e["id"], e["type"], e["data"]) for e in body["events"]], body["acked"]


def test_poll_answers_at_once_waits_for_an_append_and_ends_empty(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    agent = w.agent()
    token = keys.agent(agent)
    w.append(agent, "task.created", {"n": 1})
    w.append(agent, "task.created", {"n": 2})

    async def go():
        heard_on_a, heard_on_b = a.metric(CONSUMER), b.metric(CONSUMER)
        start = time.monotonic()
        status, body = rest(a, PATH + "?wait_ms=10000", token)
        at_once = (status, brief(body), time.monotonic() - start)
        heard(b, heard_on_b + 1)
        # report both done; the poll on the other node waits for the next
        waiting = rest_started(b, PATH + "?after=2&wait_ms=10000", token)
        poll_until(lambda: w.holder(agent)[1:] == ("poll", 2), timeout=5, what="poll holds")
        await asyncio.sleep(0.3)         # it waits: the answer comes with the append
        appended_at = time.monotonic()
        w.append(agent, "task.updated", {"n": 3})
        status, body, _ = await waiting
        woke = (status, brief(body), time.monotonic() - appended_at)
        heard(a, heard_on_a + 1)
        empty = await rest_started(a, PATH + "?after=3&wait_ms=600", token)
        return at_once, woke, empty
    at_once, woke, empty = run(go())
    assert at_once[:2] == (200, ([(1, "task.created", {"n": 1}), (2, "task.created", {"n": 2})], 0))
    assert at_once[2] < 2.0
    assert woke[:2] == (200, ([(3, "task.updated", {"n": 3})], 2))
    assert woke[2] < 2.0                 # well before wait_ms
    status, body, took = empty
    holder = body.pop("holder")
    assert (status, body) == (200, {"events": [], "acked": 3})
    assert w.holder(agent)[0] == holder      # the window's holder ID, what run_start takes
    assert 0.5 <= took < 3.0
    assert w.holder(agent)[1:] == ("poll", 3)


def test_after_moves_the_held_acknowledgement_and_max_bounds_the_answer(gateways, keys, pg):
    node = gateways(1)
    w = World(pg)
    agent = w.agent()
    token = keys.agent(agent)
    for n in range(5):
        w.append(agent, data={"n": n})
    status, body = rest(node, PATH + "?wait_ms=0&max=2", token)
    assert (status, [e["id"] for e in body["events"]], body["acked"]) == (200, [1, 2], 0)
    status, body = rest(node, PATH + "?after=2&wait_ms=0&max=2", token)
    assert (status, [e["id"] for e in body["events"]], body["acked"]) == (200, [3, 4], 2)
    assert w.holder(agent)[1:] == ("poll", 2)
    # a lower after never moves it back; without after: from the held one
    status, body = rest(node, PATH + "?after=1&wait_ms=0", token)
    assert (status, [e["id"] for e in body["events"]], body["acked"]) == (200, [3, 4, 5], 2)
    status, body = rest(node, PATH + "?after=5&wait_ms=0", token)
    holder = body.pop("holder")
    assert (status, body) == (200, {"events": [], "acked": 5})
    assert w.holder(agent) == (holder, "poll", 5)


def test_bad_arguments_are_400(gateways, keys, pg):
    node = gateways(1)
    w = World(pg)
    agent = w.agent()
    w.append(agent)
    for query in ("?wait_ms=60001", "?wait_ms=-1", "?max=0", "?max=1001", "?after=x",
                  "?after=1&after=2", "?limit=5", "?wait_ms", "?after=2"):   # 2: beyond the last event
        assert rest(node, PATH + query, keys.agent(agent)) == (400, {"error": "bad_request"}), query
    assert w.holder(agent)[2] in (None, 0)          # nothing moved


def test_bad_tokens_are_401(gateways, keys):
    node = gateways(1)
    for token in (None, keys.person(), "bothy1.garbage.x.y"):
        assert rest(node, PATH + "?wait_ms=0", token) == (401, {"error": "token_refused"})


def test_a_poll_fences_websocket_consumers_on_either_node(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    agent = w.agent()
    token = keys.agent(agent)

    async def go():
        codes = []
        for consumer_node in (a, b):                # the poll is on B
            c = await Client.open(consumer_node.url, keys.agent(agent))
            status, _, _ = await rest_started(b, PATH + "?wait_ms=0", token)
            assert status == 200
            codes.append((await c.closed())[0])
        return codes
    assert run(go()) == [4015, 4015]
    assert a.metric('bothy_gateway_closes_total{code="4015"}') == 1
    assert b.metric('bothy_gateway_closes_total{code="4015"}') == 1


def test_an_identify_while_a_poll_waits_answers_409(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    agent = w.agent()
    token = keys.agent(agent)

    async def go():
        answers = []
        for consumer_node in (b, a):                # the poll waits on A
            waiting = rest_started(a, PATH + "?wait_ms=20000", token)
            poll_until(lambda: w.holder(agent)[1] == "poll", timeout=5, what="poll holds")
            c = await Client.open(consumer_node.url, keys.agent(agent))
            answers.append(await waiting)
            assert await c.before_ack() == []       # the consumer holds and stays
            assert w.holder(agent)[:2] == (c.ready["bind"], "connection")
            await c.close()
        return answers
    for status, body, took in run(go()):
        assert (status, body) == (409, {"error": "fenced"})
        assert took < 5.0


def test_a_stale_consumer_signal_does_not_fence_the_poll_that_holds(gateways, keys, pg):
    # A late signal of an earlier takeover (a poll on another node a moment
    # before, say) names another holder; the waiting poll asks the hold row
    # and, still holding, goes on waiting (a takeover after its own: 409).
    node = gateways(1)
    w = World(pg)
    agent = w.agent()
    token = keys.agent(agent)

    async def go():
        waiting = rest_started(node, "/v1/agent/events?wait_ms=3000", token)
        poll_until(lambda: w.holder(agent)[1] == "poll", timeout=5, what="poll holds")
        held = w.holder(agent)
        w.q("SELECT bothy.publish('gateway.consumer', jsonb_build_object('node', %s::text, "
            "'agent', %s::text, 'gateway_session', gen_random_uuid()))", FOREIGN_NODE, agent)
        await asyncio.sleep(0.5)
        w.append(agent)
        status, body, _ = await waiting
        return held, w.holder(agent), status, body
    held, after, status, body = run(go())
    assert held == after                # the poll still holds in the database ...
    assert status == 200 and [e["id"] for e in body["events"]] == [1]


def test_a_long_poll_waits_past_ten_seconds(gateways, keys, pg):
    node = gateways(1)
    agent = World(pg).agent()
    start = time.monotonic()
    status, body = rest(node, PATH + "?wait_ms=11000", keys.agent(agent), timeout=20)
    took = time.monotonic() - start
    assert (status, body["events"]) == (200, [])
    assert 10.9 < took < 14.0


def test_an_empty_query_argument_is_refused(gateways, keys, pg):
    node = gateways(1)
    token = keys.agent(World(pg).agent())
    for query in ("?wait_ms=0&&bogus=1", "?&bogus=1&wait_ms=0", "?wait_ms=0&&max=1", "?wait_ms=0&"):
        assert rest(node, PATH + query, token) == (400, {"error": "bad_request"}), query
    assert rest(node, PATH + "?wait_ms=0&max=1", token)[0] == 200
