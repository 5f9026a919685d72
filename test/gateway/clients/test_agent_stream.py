"""The agent event stream on real gateways (D-M7-17-4): events an
application appended (bothy.agent_event_appended) reach the consumer holding
the agent's stream as agent.event in ID order; ack moves the held
acknowledgement, and an ack the database refuses leaves the stream working;
--agent-window bounds the unacknowledged ones; a new holder on the other
node continues from the held acknowledgement, and after the takeover only
it receives events; events whose signal was lost while the listener was
down are delivered after the reconnect, and events appended while the
holder's lease lapsed (its renewals held back by a row lock) once it holds
the lease again."""
import asyncio

from cluster import Client, World, parse_time
from conftest import poll_until, run

EVENT = "agent.event"


def ids(messages):
    return [m["data"]["id"] for m in messages if m.get("type") == EVENT]


async def events(client, n):
    return [await client.event(EVENT) for _ in range(n)]


def test_events_arrive_in_order_and_ack_moves_the_held_acknowledgement(gateways, keys, pg):
    node = gateways(1)
    w = World(pg)
    agent = w.agent()
    before = w.append(agent, "task.created", {"n": 1})      # a backlog at identify

    async def go():
        c = await Client.open(node.url, keys.agent(agent))
        appended = [before] + [w.append(agent, "task.updated", {"n": n, "text": "x" * n})
                               for n in range(2, 6)]
        got = await events(c, 5)
        await c.send({"op": "ack", "event": 3})
        poll_until(lambda: w.holder(agent)[2] == 3, timeout=5, what="ack saved")
        holder = w.holder(agent)
        # nothing more than the five, and ack has no answer
        rest = await c.before_ack()
        await c.close()
        return c.ready, appended, got, holder, rest
    ready, appended, got, holder, rest = run(go())
    assert ready["acked"] == 0
    assert appended == [1, 2, 3, 4, 5]
    assert [e["id"] for e in got] == [1, 2, 3, 4, 5]
    assert got[0]["type"] == "task.created" and got[0]["data"] == {"n": 1}
    assert got[4] == dict(got[4], type="task.updated", data={"n": 5, "text": "xxxxx"})
    assert all(sorted(e) == ["created_at", "data", "id", "type"] for e in got)
    parse_time(got[4]["created_at"])
    assert holder == (ready["bind"], "connection", 3)
    assert rest == []


def test_the_window_bounds_unacknowledged_events(gateways, keys, pg):
    node = gateways(1, extra=["--agent-window", "2"])
    w = World(pg)
    agent = w.agent()
    for n in range(5):
        w.append(agent, data={"n": n})

    async def go():
        c = await Client.open(node.url, keys.agent(agent))
        seen = [ids([{"type": EVENT, "data": e} for e in await events(c, 2)])]
        # a read that ignored the window would have sent 3 with 1 and 2
        seen.append(await c.before_ack())
        await c.send({"op": "ack", "event": 1})
        seen.append((await c.event(EVENT))["id"])
        seen.append(await c.before_ack())
        await c.send({"op": "ack", "event": 3})
        seen.append([(await c.event(EVENT))["id"] for _ in range(2)])
        w.append(agent, data={"n": 5})          # 6: beyond the window until 4 is done
        await c.send({"op": "ack", "event": 4})
        seen.append((await c.event(EVENT))["id"])
        seen.append(await c.before_ack())
        await c.close()
        return seen
    assert run(go()) == [[1, 2], [], 3, [], [4, 5], 6, []]


def test_a_new_holder_on_the_other_node_continues_from_the_held_acknowledgement(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    agent = w.agent()
    for n in range(4):
        w.append(agent, data={"n": n})

    async def go():
        first = await Client.open(a.url, keys.agent(agent))
        assert [e["id"] for e in await events(first, 4)] == [1, 2, 3, 4]
        await first.send({"op": "ack", "event": 2})
        poll_until(lambda: w.holder(agent)[2] == 2, timeout=5, what="ack saved")
        second = await Client.open(b.url, keys.agent(agent))
        # appended while the takeover settles
        appended = [w.append(agent, data={"n": n}) for n in range(4, 8)]
        got = [e["id"] for e in await events(second, 6)]
        code, on_first = await first.closed()
        rest = await second.before_ack()
        await second.close()
        return second.ready, appended, got, code, on_first, rest
    ready, appended, got, code, on_first, rest = run(go())
    assert ready["acked"] == 2
    assert appended == [5, 6, 7, 8]
    # the unacknowledged ones again, nothing acknowledged, then the new ones
    assert got == [3, 4, 5, 6, 7, 8]
    assert code == 4015 and ids(on_first) == []
    assert rest == []
    assert w.holder(agent)[:2] == (ready["bind"], "connection")


def test_events_appended_while_the_listener_was_down_arrive_after_the_reconnect(gateways, keys, pg):
    node = gateways(1)
    w = World(pg)
    agent = w.agent()

    async def go():
        c = await Client.open(node.url, keys.agent(agent))
        w.append(agent)
        assert (await c.event(EVENT))["id"] == 1
        # an append whose signal is lost: the rows, without the signal
        lost = w.q("WITH n AS (UPDATE bothy.agents SET last_event = last_event + 1 "
                   "WHERE agent = %s RETURNING agent, last_event) "
                   "INSERT INTO bothy.agent_events (agent, id, type, data) "
                   "SELECT agent, last_event, 'task.lost', '{}' FROM n RETURNING id", agent)[0][0]
        assert await c.before_ack() == []
        reconciles = node.metric('bothy_gateway_route_reconciles_total{route="gateway"}')
        # the listener dies; an append commits right behind it
        killed, appended = w.q(
            "SELECT (SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = 'bothy-ephemeral'), "
            "bothy.agent_event_appended(%s, 'task.created', '{}')", agent)[0]
        got = [await c.event(EVENT, timeout=10) for _ in range(2)]
        poll_until(lambda: node.metric('bothy_gateway_route_reconciles_total{route="gateway"}') == reconciles + 1,
                   timeout=5, what="reconciled")
        rest = await c.before_ack()
        await c.close()
        return lost, killed, appended, got, rest
    lost, killed, appended, got, rest = run(go())
    assert (lost, killed, appended) == (2, 1, 3)
    assert [(e["id"], e["type"]) for e in got] == [(2, "task.lost"), (3, "task.created")]
    assert rest == []


def test_an_ack_the_database_refuses_leaves_the_stream_working(gateways, keys, pg):
    node = gateways(1)      # bothy.consumer_lease = 3s: a renewal every second
    w = World(pg)
    agent = w.agent()
    w.append(agent)

    async def go():
        c = await Client.open(node.url, keys.agent(agent))
        assert (await c.event("agent.event"))["id"] == 1
        await c.send({"op": "ack", "event": 1000000})       # beyond the last event
        refused = await c.recv()
        await asyncio.sleep(2.5)                            # renewals after the refusal
        holder = w.holder(agent)
        w.append(agent)
        second = await c.event("agent.event")
        await c.send({"op": "ack", "event": 2})
        assert await c.before_ack() == []
        await c.close()
        return c.ready, refused, holder, second
    ready, refused, holder, second = run(go())
    assert refused == {"op": "error", "request": "ack", "code": "rejected"}
    assert holder[:2] == (ready["bind"], "connection")      # the renewals held on
    assert second["id"] == 2
    poll_until(lambda: w.holder(agent)[2] == 2, timeout=5, what="the valid ack saved")
    assert node.metric('bothy_gateway_closes_total{code="4015"}') == 0


def test_events_appended_while_the_lease_lapsed_arrive_after_it_is_held_again(gateways, keys, pg):
    node = gateways(1)      # bothy.consumer_lease = 3s
    w = World(pg)
    agent = w.agent()

    async def go():
        c = await Client.open(node.url, keys.agent(agent))
        lock = pg.connect(autocommit=False)
        try:
            # the renewals wait for this lock while the lease runs out
            lock.cursor().execute("SELECT * FROM bothy.consumer_holds WHERE agent = %s FOR UPDATE", (agent,))
            poll_until(lambda: w.q("SELECT lease_until < now() FROM bothy.consumer_holds WHERE agent = %s",
                                   agent)[0][0], timeout=6, what="the lease lapsed")
            w.append(agent)                 # read as nothing: the lease lapsed
            await asyncio.sleep(0.5)
            lock.commit()
        finally:
            lock.close()
        got = await c.event("agent.event", timeout=5)
        await c.close()
        return got
    got = run(go())
    assert got["id"] == 1
    assert node.metric("bothy_gateway_consumer_resumes_total") >= 1
