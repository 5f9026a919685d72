"""Modes (D-M7-17-7; docs/configuration.md, "bothy.cluster_mode"), single mode on an instance of
its own with one gateway: the events that start in the gateway (typing,
agent presence) are delivered locally and stage no signal at all, so a
LISTEN ephemeral connection hears none of gateway.typing, .agent_presence,
.device or .consumer, and bothy_gateway_signals_published_total stays 0;
the events produced in the database (run updates, hints) are sent in every
mode and still arrive.  The multi mode is every other test of this suite."""
import asyncio

import pytest

from cluster import Client, World, keep_alive, rest, wait_present
from conftest import PG_CONF, Instance, new_id, run
from modes import listener, sentinel  # noqa: F401  (listener: a fixture)

PUBLISHED = "bothy_gateway_signals_published_total"


@pytest.fixture(scope="module")
def pg():
    conf = [line for line in PG_CONF if not line.startswith("bothy.cluster_mode")]
    inst = Instance("single-pg", conf + ["bothy.cluster_mode = 'single'",
                                         "bothy.presence_flush_interval = '500ms'"])
    inst.start()
    yield inst
    inst.close()


def test_single_mode_delivers_typing_and_agent_presence_locally_without_signals(
        gateways, keys, pg, listener):
    # one query connection: its calls run in order, so an answer of a later
    # call means every signal the node would have staged before is committed
    node = gateways(1, extra=["--db-pool", "1"])
    w = World(pg)
    typist, watcher, agent = new_id(), new_id(), new_id()
    place, thread = w.room(typist, watcher)

    async def go():
        t = await Client.open(node.url, keys.person(typist), watch=[agent])
        v = await Client.open(node.url, keys.person(watcher), watch=[agent])
        consumer = await Client.open(node.url, keys.agent(agent))
        alive = asyncio.create_task(keep_alive(consumer))
        presence = [(await c.event("agent.presence_changed"))["state"] for c in (t, v)]
        await consumer.send({"op": "heartbeat", "state": "busy"})
        presence += [(await c.event("agent.presence_changed"))["state"] for c in (t, v)]
        await t.send({"op": "typing", "thread": thread})
        typing = await v.event("typing.started")
        assert await t.before_ack() == []
        assert rest(node, "/v1/agents/presence?agent=" + agent, keys.person())[0] == 200
        heard = sentinel(pg, listener)
        alive.cancel()
        for c in (t, v, consumer):
            await c.close()
        return presence, typing, heard
    presence, typing, heard = run(go())
    assert presence == ["online", "online", "busy", "busy"]
    assert (typing["thread"], typing["place"], typing["principal"]) == (thread, place, typist)
    assert heard == []
    assert node.metric(PUBLISHED) == 0
    assert node.metric("bothy_gateway_signals_own_total") == 0


def test_single_mode_still_delivers_run_updates_and_hints(gateways, keys, pg, listener):
    node = gateways(1)
    w = World(pg)
    person = new_id()
    _, thread = w.room(person)
    agent, run_id = w.agent(), new_id()

    async def go():
        c = await Client.open(node.url, keys.person(person))
        wait_present(w, person)
        w.run_changed(run_id, thread, agent, 4, {"status": "done"})
        updated = await c.event("run.updated")
        nid = w.notify(person, "run", thread=thread)
        hint = await c.event("notification.created")
        heard = sentinel(pg, listener)
        await c.close()
        return updated, nid, hint, heard
    updated, nid, hint, heard = run(go())
    assert updated == {"status": "done", "run": run_id, "thread": thread, "agent": agent, "version": 4}
    assert (hint["nid"], hint["thread"]) == (nid, thread)
    assert [p["kind"] for p in heard] == ["gateway.run", "gateway.hint"]
    assert node.metric(PUBLISHED) == 0
