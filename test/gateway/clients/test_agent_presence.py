"""Agent presence across two real gateways (D-M7-17-10;
docs/configuration.md, "bothy.agent_presence_timeout": the maintenance
worker decides offline once for the cluster from the newest stored
heartbeat of every node).  An agent consumer's identify is a
takeover, announced to the persons on both nodes; a heartbeat with a state
changes it everywhere; a person may not send one (4002); an agent that moved
to the other node stays online there past the first node's silence, and
after it left its offline reaches each person connection exactly once;
GET /v1/agents/presence answers from the stored row, or from the node's
memory when that is newer.

This module runs on its own instance with a short timeout (2 s, plus the
persist interval of 1 s as grace) and a maintenance round of 500 ms, so that
offline comes within seconds without changing the session's instance."""
import asyncio
import time

import pytest

from cluster import Client, keep_alive, parse_time, rest
from conftest import PG_CONF, Instance, closed_with, identify, new_id, poll_until, run

GRACE = 3.0             # agent_presence_timeout + agent_heartbeat_persist_interval
ROUND = 0.5             # presence_flush_interval: the maintenance worker's round
CHANGED = "agent.presence_changed"


@pytest.fixture(scope="module")
def pg():
    inst = Instance("agents-pg", PG_CONF + ["bothy.agent_presence_timeout = '2s'",
                                            "bothy.agent_heartbeat_persist_interval = '1s'",
                                            "bothy.presence_flush_interval = '500ms'"])
    inst.start()
    yield inst
    inst.close()


def stored(pg, agent):
    """(state, heartbeat_at in epoch seconds) of the stored row, or None."""
    rows = pg.query("SELECT state, extract(epoch FROM heartbeat_at)::float8 "
                    "FROM bothy.agent_status(ARRAY[%s]::uuid[])", agent)
    return tuple(rows[0]) if rows else None


def states(events, agent):
    return [e["data"]["state"] for e in events
            if e.get("type") == CHANGED and e["data"]["agent"] == agent]


def test_online_and_busy_reach_persons_on_both_nodes(gateways, keys, pg):
    a, b = gateways(2)
    agent = new_id()
    token = keys.person()

    async def go():
        pa = await Client.open(a.url, keys.person(), watch=[agent])
        pb = await Client.open(b.url, keys.person(), watch=[agent])
        consumer = await Client.open(a.url, keys.agent(agent))
        alive = asyncio.create_task(keep_alive(consumer))
        online = [await pa.event(CHANGED), await pb.event(CHANGED)]
        await consumer.send({"op": "heartbeat", "state": "busy"})
        busy = [await pa.event(CHANGED), await pb.event(CHANGED)]
        # a change of state is stored at once (not after the persist interval)
        poll_until(lambda: (stored(pg, agent) or ("",))[0] == "busy", timeout=2, what="busy stored")
        row = stored(pg, agent)
        on_b = rest(b, "/v1/agents/presence?agent=" + agent, token)    # no memory: the row
        on_a = rest(a, "/v1/agents/presence?agent=" + agent, token)    # its own memory
        alive.cancel()
        await consumer.close()
        await pa.close()
        await pb.close()
        return online, busy, row, on_a, on_b
    online, busy, row, on_a, on_b = run(go())
    assert online == [{"agent": agent, "state": "online"}] * 2
    assert busy == [{"agent": agent, "state": "busy"}] * 2
    assert on_b[0] == 200 and on_a[0] == 200
    (answer_b,), (answer_a,) = on_b[1]["agents"], on_a[1]["agents"]
    assert (answer_b["agent"], answer_b["state"]) == (agent, "busy")
    assert abs(parse_time(answer_b["heartbeat_at"]) - row[1]) < 0.002
    assert (answer_a["agent"], answer_a["state"]) == (agent, "busy")
    assert parse_time(answer_a["heartbeat_at"]) >= parse_time(answer_b["heartbeat_at"])
    assert a.metric("bothy_gateway_agent_presence_announced_total") == 2
    assert b.metric('bothy_gateway_signals_received_total{kind="gateway.agent_presence"}') == 2


def test_a_person_sending_a_heartbeat_state_is_closed_4002(gateways, keys):
    node = gateways(1)

    async def go():
        ws, ready = await identify(node.url, keys.person())
        assert ready["op"] == "ready"
        await ws.send('{"op":"heartbeat","state":"busy"}')
        return await closed_with(ws)
    assert run(go()) == 4002
    assert node.metric("bothy_gateway_agent_presence_announced_total") == 0


def test_agent_moving_to_the_other_node_goes_offline_once(gateways, keys, pg):
    a, b = gateways(2)
    agent = new_id()
    token = keys.person()

    async def go():
        persons = [await Client.open(url, keys.person(), watch=[agent])
                   for url in (a.url, a.url, b.url)]
        first = await Client.open(a.url, keys.agent(agent))
        on_a = asyncio.create_task(keep_alive(first))
        assert [(await p.event(CHANGED))["state"] for p in persons] == ["online"] * 3
        # the agent moves: A's connection is fenced, the takeover announced again
        second = await Client.open(b.url, keys.agent(agent))
        on_b = asyncio.create_task(keep_alive(second))
        fenced = await asyncio.wait_for(on_a, 5)
        assert [(await p.event(CHANGED))["state"] for p in persons] == ["online"] * 3
        # connected on B longer than the offline grace after A's last
        # heartbeat: B's stored heartbeats keep it online for the cluster
        while_on_b = await asyncio.gather(*(p.collect(GRACE + 1.0) for p in persons))
        mid = [rest(n, "/v1/agents/presence?agent=" + agent, token)[1]["agents"][0]["state"]
               for n in (a, b)]
        on_b.cancel()
        await second.close()
        left = time.monotonic()
        offline = [await p.event(CHANGED, timeout=GRACE + 1.0 + 4 * ROUND) for p in persons]
        took = time.monotonic() - left
        # the decision is made once: nothing more over several rounds
        after = await asyncio.gather(*(p.collect(4 * ROUND + 0.5) for p in persons))
        end = [rest(n, "/v1/agents/presence?agent=" + agent, token)[1]["agents"][0]["state"]
               for n in (a, b)]
        for p in persons:
            await p.close()
        return fenced, while_on_b, mid, offline, took, after, end
    fenced, while_on_b, mid, offline, took, after, end = run(go())
    assert fenced == 4015
    assert [states(events, agent) for events in while_on_b] == [[]] * 3
    assert mid == ["online", "online"]
    assert offline == [{"agent": agent, "state": "offline"}] * 3
    assert took > 1.0, took          # not before the timeout after its last heartbeat
    assert [states(events, agent) for events in after] == [[]] * 3
    assert end == ["offline", "offline"]
    assert stored(pg, agent)[0] == "offline"


def test_agents_presence_answers_unknown_agents_and_refuses_bad_calls(gateways, keys):
    node = gateways(1)
    person, unknown, other = keys.person(), new_id(), new_id()
    ok = rest(node, "/v1/agents/presence?agent=%s&agent=%s" % (unknown, other), person)
    assert ok == (200, {"agents": [{"agent": unknown, "state": "offline", "heartbeat_at": None},
                                   {"agent": other, "state": "offline", "heartbeat_at": None}]})
    for path in ("/v1/agents/presence", "/v1/agents/presence?agent=nope",
                 "/v1/agents/presence?agent=%s&state=busy" % unknown):
        assert rest(node, path, person) == (400, {"error": "bad_request"}), path
    for token in (None, keys.agent(), "bothy1.garbage"):
        assert rest(node, "/v1/agents/presence?agent=" + unknown, token) == \
            (401, {"error": "token_refused"})
