"""Admission at every delivery, asked by naming the node (D-M7-17-5): one
call of bothy.thread_audience_on per delivery, whatever the number of
persons here, every member here admitted, outsiders and removed members
not; the sender of a typing op checked in the same call.  And the reach of
a signal (docs/signals.md, "Reach"): a node that holds no member of the
thread makes no call at all, while the members elsewhere get the event,
and once a member connects there the next event is asked and delivered.

The persons are spread over the hub's buckets (the last three hex digits
of their UUIDs, clients/hub.c), as a large node has them."""
import asyncio
import resource
import time

from cluster import Client, World
from conftest import new_id, poll_until, run

PERSONS = 150
FIRST = 64
QUERIES = "bothy_gateway_audience_queries_total"
UNREACHED = "bothy_gateway_signals_unreached_total"


def person(bucket):
    return new_id()[:-3] + "%03x" % bucket


def room(w, members):
    """A place with one thread and these members, in one statement (World.room
    makes one connection per member)."""
    place, thread = w.room()
    w.q("SELECT bothy.membership_added(%s, p) FROM unnest(%s::uuid[]) AS p", place, members)
    return place, thread


def open_all(node, keys, ids):
    """A ready connection of each person (tokens signed here: one CLI run
    per token would take most of the test)."""
    exp = int(time.time()) + 600

    async def one(p):
        return await Client.open(node.url, keys.forge(
            {"kind": "person-device", "person": p, "device": new_id(), "exp": exp}))

    async def go():
        clients = []
        for i in range(0, len(ids), 50):
            clients += await asyncio.gather(*(one(p) for p in ids[i:i + 50]))
        return clients
    return go()


async def receivers(clients, type, members, outsiders):
    """Every member gets the event (its data, by person); every outsider
    gets nothing before its heartbeat's answer (the node decided every
    part once every member has it)."""
    got = {}
    for p in members:
        got[p] = await clients[p].event(type)
    for p in outsiders:
        assert await clients[p].before_ack() == [], "an outsider got the event"
    return got


async def after_removal(w, clients, place, thread, agent, run_id, members, removed, outsiders):
    """Version 2 of the run once `removed` left the place: every other member
    gets it, the removed and the outsiders nothing (data by person)."""
    for p in removed:
        assert w.leave(place, p) is True
    assert w.run_changed(run_id, thread, agent, 2, {"step": 2}) is True
    stay = [p for p in members if p not in removed]
    got = await receivers(clients, "run.updated", stay, outsiders + removed)
    for c in clients.values():
        await c.close()
    return got


def test_one_call_admits_every_member_here(gateways, keys, pg):
    node = gateways(1)
    w = World(pg)
    ids = [person(b) for b in range(1, PERSONS + 1)]
    sender = person(0xfff)
    outsiders = [ids[4], ids[99], ids[139]]
    members = [p for p in ids if p not in outsiders]
    place, thread = room(w, [sender] + members)
    agent, run_id = w.agent(), new_id()

    async def go():
        clients = dict(zip(ids + [sender], await open_all(node, keys, ids + [sender])))
        asked = node.metric(QUERIES)
        await clients[sender].send({"op": "typing", "thread": thread})
        typing = await receivers(clients, "typing.started", members, outsiders)
        assert await clients[sender].before_ack() == []
        typing_calls = node.metric(QUERIES) - asked
        assert w.run_changed(run_id, thread, agent, 1, {"step": 1}) is True
        first = await receivers(clients, "run.updated", members + [sender], outsiders)
        runs = node.metric(QUERIES)
        second = await after_removal(w, clients, place, thread, agent, run_id, members,
                                     [ids[9], ids[119]], outsiders)
        return typing, typing_calls, first, second, node.metric(QUERIES) - runs
    typing, typing_calls, first, second, run_calls = run(go())
    assert {d["principal"] for d in typing.values()} == {sender}
    # one call: the place, the sender's right and the 147 members here
    assert typing_calls == 1
    assert run_calls == 1
    assert {d["version"] for d in first.values()} == {1}
    assert {d["version"] for d in second.values()} == {2}


def test_a_sender_refused_costs_one_call(gateways, keys, pg):
    node = gateways(1)
    w = World(pg)
    ids = [person(b) for b in range(1, PERSONS + 1)]
    sender = person(0xfff)                           # connected, not a member
    place, thread = room(w, ids)

    async def go():
        clients = dict(zip(ids + [sender], await open_all(node, keys, ids + [sender])))
        asked = node.metric(QUERIES)
        await clients[sender].send({"op": "typing", "thread": thread})
        answer = await clients[sender].recv()
        calls = node.metric(QUERIES) - asked
        nothing = [await clients[p].before_ack() for p in (ids[0], ids[-1])]
        for c in clients.values():
            await c.close()
        return answer, calls, nothing
    answer, calls, nothing = run(go())
    assert answer.get("op") == "error" and answer.get("code") == "rejected", answer
    assert calls == 1
    assert nothing == [[], []]


def test_a_large_delivery_in_one_call(gateways, keys, pg):
    """2,100 persons here (until 0.3.0: four calls in parts); outsiders and
    removed members spread over them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))   # the node inherits it
    node = gateways(1)
    w = World(pg)
    ids = [person(b) for b in range(1, 2101)]
    outsiders = [ids[10], ids[700], ids[1400], ids[2090]]
    members = [p for p in ids if p not in outsiders]
    place, thread = room(w, members)
    agent, run_id = w.agent(), new_id()

    async def go():
        clients = dict(zip(ids, await open_all(node, keys, ids)))
        asked = node.metric(QUERIES)
        assert w.run_changed(run_id, thread, agent, 1, {"step": 1}) is True
        await receivers(clients, "run.updated", members, outsiders)
        calls = node.metric(QUERIES) - asked
        second = await after_removal(w, clients, place, thread, agent, run_id, members,
                                     [ids[20], ids[800], ids[1500], ids[2000]], outsiders)
        return calls, second
    try:
        calls, second = run(go())
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert calls == 1
    assert {d["version"] for d in second.values()} == {2}


def test_a_node_without_members_is_not_asked(gateways, keys, pg):
    """Members on node a only; node b holds outsiders.  b hears the typing
    and run signals, finds itself outside their reach and makes no call;
    the members on a get both.  Then a member connects to b: the next
    events reach b, which asks once each and delivers to it."""
    a, b = gateways(2)
    w = World(pg)
    members = [new_id() for _ in range(6)]
    sender, later = members[0], new_id()
    outsiders = [new_id() for _ in range(5)]
    place, thread = room(w, members + [later])
    agent, run_id = w.agent(), new_id()

    async def go():
        on_a = dict(zip(members, await open_all(a, keys, members)))
        on_b = dict(zip(outsiders, await open_all(b, keys, outsiders)))
        asked, unreached = b.metric(QUERIES), b.metric(UNREACHED)
        await on_a[sender].send({"op": "typing", "thread": thread})
        typing = await receivers(on_a, "typing.started", members[1:], [])
        assert w.run_changed(run_id, thread, agent, 1, {"step": 1}) is True
        runs = await receivers(on_a, "run.updated", members, [])
        for c in on_b.values():
            assert await c.before_ack() == [], "an outsider got the event"
        # b heard both signals (its own pace: poll), and asked for neither
        poll_until(lambda: b.metric(QUERIES) - asked + b.metric(UNREACHED) - unreached >= 2,
                   timeout=5, what="b heard the typing and the run signals")
        quiet = (b.metric(QUERIES) - asked, b.metric(UNREACHED) - unreached)
        # a member arrives on b: b is in the reach of the next events
        on_b[later] = (await open_all(b, keys, [later]))[0]
        asked = b.metric(QUERIES)
        await on_a[members[1]].send({"op": "typing", "thread": thread})
        typing_b = await on_b[later].event("typing.started")
        assert w.run_changed(run_id, thread, agent, 2, {"step": 2}) is True
        run_b = await on_b[later].event("run.updated")
        for p in outsiders:
            assert await on_b[p].before_ack() == [], "an outsider got the event"
        poll_until(lambda: b.metric(QUERIES) - asked >= 2, timeout=5, what="b asked twice")
        reached = b.metric(QUERIES) - asked
        for c in list(on_a.values()) + list(on_b.values()):
            await c.close()
        return typing, runs, quiet, typing_b, run_b, reached
    typing, runs, quiet, typing_b, run_b, reached = run(go())
    assert {d["principal"] for d in typing.values()} == {sender}
    assert {d["version"] for d in runs.values()} == {1}
    assert quiet == (0, 2), "b asked the database for events of nobody there"
    assert typing_b["principal"] == members[1] and run_b["version"] == 2
    assert reached == 2
