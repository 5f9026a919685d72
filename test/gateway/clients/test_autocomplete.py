"""Autocomplete stays on its node (D-M7-17-5, R-AG-14), on real gateways: a
person's request reaches the agent's consumer on the same node as
command.autocomplete_requested and its autocomplete_answer comes back as
autocomplete_result; with the consumer only on the other node the result is
empty at once; without an answer it is empty after --autocomplete-timeout;
an answer of another agent's connection, or one after the deadline, is
ignored; and one person cannot crowd autocomplete (a request beyond the
four in flight ends empty at once)."""
import time

from cluster import Client, World
from conftest import new_id, poll_until, run

REQUESTED = "command.autocomplete_requested"
LATE = 'bothy_gateway_autocomplete_total{outcome="late"}'


def ask(agent, ref="r-1", query="sum"):
    return {"op": "autocomplete", "agent": agent, "ref": ref, "query": query}


def answer(request, items):
    return {"op": "autocomplete_answer", "request": request, "items": items}


def test_request_and_answer_on_one_node(gateways, keys, pg):
    node = gateways(1)
    agent, person = World(pg).agent(), new_id()
    items = [{"label": "summarise", "insert": "/summarise"}, {"label": "sum", "n": 2}]

    async def go():
        p = await Client.open(node.url, keys.person(person))
        c = await Client.open(node.url, keys.agent(agent))
        await p.send(ask(agent, "ref-é", "su m"))
        request = await c.event(REQUESTED)
        await c.send(answer(request["request"], items))
        result = await p.recv()
        await p.close()
        await c.close()
        return request, result
    request, result = run(go())
    assert sorted(request) == ["principal", "query", "request"]
    assert (request["principal"], request["query"]) == (person, "su m")
    assert result == {"op": "autocomplete_result", "ref": "ref-é", "items": items}
    assert node.metric('bothy_gateway_autocomplete_total{outcome="answered"}') == 1


def test_consumer_only_on_the_other_node_gives_an_empty_result_at_once(gateways, keys, pg):
    a, b = gateways(2)          # the default --autocomplete-timeout: 3000 ms
    agent = World(pg).agent()

    async def go():
        c = await Client.open(b.url, keys.agent(agent))
        p = await Client.open(a.url, keys.person())
        start = time.monotonic()
        await p.send(ask(agent))
        result = await p.recv()
        took = time.monotonic() - start
        on_b = await c.before_ack()
        await p.close()
        await c.close()
        return result, took, on_b
    result, took, on_b = run(go())
    assert result == {"op": "autocomplete_result", "ref": "r-1", "items": []}
    assert took < 1.0
    assert on_b == []
    assert a.metric('bothy_gateway_autocomplete_total{outcome="no_consumer"}') == 1
    assert b.metric('bothy_gateway_autocomplete_total{outcome="forwarded"}') == 0


def test_no_answer_ends_empty_at_the_timeout_and_a_late_answer_is_ignored(gateways, keys, pg):
    node = gateways(1, extra=["--autocomplete-timeout", "600"])
    agent = World(pg).agent()

    async def go():
        p = await Client.open(node.url, keys.person())
        c = await Client.open(node.url, keys.agent(agent))
        start = time.monotonic()
        await p.send(ask(agent))
        request = await c.event(REQUESTED)
        result = await p.recv()
        took = time.monotonic() - start
        await c.send(answer(request["request"], [{"label": "late"}]))
        poll_until(lambda: node.metric(LATE) == 1, timeout=5, what="late answer counted")
        after = await p.before_ack()
        await p.close()
        await c.close()
        return result, took, after
    result, took, after = run(go())
    assert result == {"op": "autocomplete_result", "ref": "r-1", "items": []}
    assert 0.55 <= took < 2.5, took
    assert after == []
    assert node.metric('bothy_gateway_autocomplete_total{outcome="timeout"}') == 1


def test_an_answer_from_another_agents_connection_is_ignored(gateways, keys, pg):
    node = gateways(1)
    w = World(pg)
    agent, other = w.agent(), w.agent()

    async def go():
        p = await Client.open(node.url, keys.person())
        c = await Client.open(node.url, keys.agent(agent))
        o = await Client.open(node.url, keys.agent(other))
        await p.send(ask(agent, "mine"))
        request = (await c.event(REQUESTED))["request"]
        await o.send(answer(request, [{"label": "forged"}]))
        poll_until(lambda: node.metric(LATE) == 1, timeout=5, what="foreign answer ignored")
        assert await p.before_ack() == []
        await c.send(answer(request, [{"label": "real"}]))
        result = await p.recv()
        for x in (p, c, o):
            await x.close()
        return result
    assert run(go()) == {"op": "autocomplete_result", "ref": "mine", "items": [{"label": "real"}]}


def test_one_person_cannot_crowd_autocomplete(gateways, keys, pg):
    node = gateways(1, extra=["--autocomplete-timeout", "3000"])
    w = World(pg)
    agent = w.agent()

    async def go():
        consumer = await Client.open(node.url, keys.agent(agent), watch=[agent])
        person = await Client.open(node.url, keys.person())
        for i in range(5):                      # the consumer never answers
            await person.send({"op": "autocomplete", "agent": agent, "ref": "r%d" % i, "query": "q"})
        start = time.monotonic()
        fifth = await person.recv()             # the fifth ends at once, empty
        took = time.monotonic() - start
        for c in (consumer, person):
            await c.close()
        return fifth, took
    fifth, took = run(go())
    assert fifth == {"op": "autocomplete_result", "ref": "r4", "items": []}
    assert took < 2.0
    assert node.metric('bothy_gateway_autocomplete_total{outcome="forwarded"}') == 4
    assert node.metric('bothy_gateway_autocomplete_total{outcome="no_consumer"}') == 1
