"""A delivery to more persons than the audience's first part: the node asks
bothy.thread_audience about its persons in parts (the first 64 in the call
that also reads the run document or the thread's place, the rest after it
in parts of at most 1,000), and every part admits again (D-M7-17-5).

The hub walks the persons by the last three hex digits of their UUIDs
(clients/hub.c), so each person here gets its own bucket and the parts are
known: the 64 lowest buckets make the first part, the others the next.  The
typing sender is in the last bucket of all, so its own right is checked in
the first part only because the node asks about the sender first."""
import asyncio
import resource
import time

from cluster import Client, World
from conftest import new_id, run

PERSONS = 150
FIRST = 64
QUERIES = "bothy_gateway_audience_queries_total"


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


def test_every_part_is_admitted_and_delivered(gateways, keys, pg):
    node = gateways(1)
    w = World(pg)
    ids = [person(b) for b in range(1, PERSONS + 1)]
    sender = person(0xfff)
    outsiders = [ids[4], ids[99], ids[139]]          # one in the first part, two after it
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
        # removed from the place: one member of the first part, one of the next
        second = await after_removal(w, clients, place, thread, agent, run_id, members,
                                     [ids[9], ids[119]], outsiders)
        return typing, typing_calls, first, second
    typing, typing_calls, first, second = run(go())
    assert {d["principal"] for d in typing.values()} == {sender}
    # the first part's call with the place, then one call for the other 87
    assert typing_calls == 2
    assert {d["version"] for d in first.values()} == {1}
    assert {d["version"] for d in second.values()} == {2}


def test_a_sender_refused_in_the_first_part_costs_no_further_call(gateways, keys, pg):
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


def test_a_delivery_in_four_parts(gateways, keys, pg):
    """2,100 persons: the first part and three of 679 or 678, more than the
    pool's connections run at once here; an outsider and a removed member in
    each."""
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
    assert calls == 4
    assert {d["version"] for d in second.values()} == {2}
