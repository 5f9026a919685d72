"""Device replacement (D-M7-17-3, close 4017) and consumer fencing
(D-M7-17-4, close 4015) with two real gateway processes on one database in
multi mode: the binding made on the same node, the signal from the other
node, two binds crossing, an older signal, a lost signal (the regular save,
the reconciliation after a listener loss) and the lease a gateway renews."""
import asyncio

import websockets

from conftest import closed_with, heartbeat, identify, new_id, poll_until, run

FOREIGN_NODE = "01890000-0000-7000-8000-0000000000aa"


async def alive(ws):
    """True when the connection answers a heartbeat; False when it closed
    with 4017 or 4015 (anything else fails the test)."""
    try:
        await ws.send('{"op":"heartbeat"}')
        while True:
            reply = await asyncio.wait_for(ws.recv(), 5)
            if '"heartbeat_ack"' in reply:
                return True
    except websockets.ConnectionClosed as e:
        assert e.code in (4015, 4017), "closed with %s" % e.code
        return False


def test_device_bound_on_the_other_node_closes_the_old_connection_4017(gateways, keys):
    a, b = gateways(2)
    person, device = new_id(), new_id()

    async def go():
        old, _ = await identify(a.url, keys.person(person, device))
        new, ready = await identify(b.url, keys.person(person, device))
        assert ready["op"] == "ready"
        code = await closed_with(old)
        ok = await heartbeat(new) == {"op": "heartbeat_ack"}
        await new.close()
        return code, ok
    code, ok = run(go())
    assert code == 4017 and ok
    assert a.metric('bothy_gateway_closes_total{code="4017"}') == 1
    assert b.metric('bothy_gateway_closes_total{code="4017"}') == 0


def test_device_bound_again_on_the_same_node_closes_the_old_connection(gateways, keys):
    node = gateways(1)
    person, device = new_id(), new_id()

    async def go():
        old, _ = await identify(node.url, keys.person(person, device))
        other, _ = await identify(node.url, keys.person(person, new_id()))   # another device
        new, _ = await identify(node.url, keys.person(person, device))
        code = await closed_with(old)
        result = (code, await alive(new), await alive(other))
        await new.close()
        await other.close()
        return result
    assert run(go()) == (4017, True, True)


async def identify_or_taken(url, token):
    """identify; a connection the other binding closed before its ready
    (4017 while its identify ran) counts as not ready."""
    try:
        return await identify(url, token)
    except websockets.ConnectionClosed as e:
        assert e.code == 4017, "closed with %s" % e.code
        return None, {"op": "closed", "code": e.code}


def test_crossing_binds_leave_exactly_one_connection(gateways, keys):
    a, b = gateways(2)
    person = new_id()

    async def one_round():
        device = new_id()
        token = keys.person(person, device)
        (wa, ra), (wb, rb) = await asyncio.gather(identify_or_taken(a.url, token),
                                                  identify_or_taken(b.url, token))
        survivors = []
        # every signal has arrived once the slower node has had a moment
        await asyncio.sleep(0.5)
        for ws, ready in ((wa, ra), (wb, rb)):
            if ready["op"] == "ready" and await alive(ws):
                survivors.append(ready["bind"])
            if ws is not None:
                await ws.close()
        return ra, rb, survivors

    async def go():
        return [await one_round() for _ in range(8)]
    for ra, rb, survivors in run(go()):
        assert len(survivors) == 1, (ra, rb, survivors)
        binds = [r["bind"] for r in (ra, rb) if r["op"] == "ready"]
        assert binds, (ra, rb)
        # the survivor holds the newer binding
        assert survivors[0] == max(binds)


def test_an_older_device_signal_changes_nothing_and_a_newer_one_closes_only_as_bound(gateways, keys, pg):
    """D-M7-17-3 with the database as the authority (docs/security.md): a
    signal of an older binding changes nothing; one of a newer binding that
    the database does not hold changes nothing either (the binding is read
    before a 4017); once the database holds it, the signal closes."""
    node = gateways(1)
    person, device = new_id(), new_id()
    older = pg.query("SELECT bothy.uuidv7()::text")[0][0]

    def publish(bind, session=None):
        pg.query("SELECT bothy.publish('gateway.device', jsonb_build_object('node', %s::text, "
                 "'device', %s::text, 'gateway_session', coalesce(%s::text, gen_random_uuid()::text), "
                 "'bind_id', %s::text))", FOREIGN_NODE, device, session, bind)
    received = 'bothy_gateway_signals_received_total{kind="gateway.device"}'
    checks = "bothy_gateway_device_signal_checks_total"

    async def go():
        ws, _ = await identify(node.url, keys.person(person, device))
        before = node.metric(received)
        publish(older)
        poll_until(lambda: node.metric(received) == before + 1, timeout=5, what="older signal")
        stays = await alive(ws)
        assert node.metric(checks) == 0         # older than the connection: not even read
        publish(pg.query("SELECT bothy.uuidv7()::text")[0][0])
        poll_until(lambda: node.metric(checks) == 1, timeout=5, what="newer signal checked")
        stays_unbound = await alive(ws)
        # the binding elsewhere, as bothy.device_bind writes it, then its signal
        bind, session = pg.query(
            "UPDATE bothy.device_bindings SET gateway_session = gen_random_uuid(), "
            "bind_id = bothy.uuidv7(), node = %s WHERE device = %s "
            "RETURNING bind_id::text, gateway_session::text", FOREIGN_NODE, device)[0]
        publish(bind, session)
        code = await closed_with(ws)
        return stays, stays_unbound, code
    assert run(go()) == (True, True, 4017)


def test_a_binding_whose_signal_was_lost_is_found_by_the_reconciliation(gateways, keys, pg):
    node = gateways(1)
    person, device = new_id(), new_id()

    async def go():
        ws, _ = await identify(node.url, keys.person(person, device))
        # a bind elsewhere that no signal told: only the table knows it
        pg.query("UPDATE bothy.device_bindings SET gateway_session = gen_random_uuid(), "
                 "bind_id = bothy.uuidv7(), node = %s WHERE device = %s", FOREIGN_NODE, device)
        stays = await alive(ws)
        reconciles = node.metric('bothy_gateway_route_reconciles_total{route="gateway"}')
        pg.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                 "WHERE application_name = 'bothy-ephemeral'")
        poll_until(lambda: node.metric('bothy_gateway_route_reconciles_total{route="gateway"}') == reconciles + 1,
                   timeout=5, what="reconciled")
        return stays, await closed_with(ws)
    assert run(go()) == (True, 4017)


def test_agent_taken_over_on_the_other_node_fences_the_old_consumer_4015(gateways, keys, pg):
    a, b = gateways(2)
    agent = new_id()

    async def go():
        old, first = await identify(a.url, keys.agent(agent))
        new, second = await identify(b.url, keys.agent(agent))
        assert second["op"] == "ready"
        # fenced by the signal, before the old consumer sends anything
        code = await closed_with(old, timeout=3)
        ok = await alive(new)
        await new.close()
        return first, second, code, ok
    first, second, code, ok = run(go())
    assert code == 4015 and ok
    assert first["session"] != second["session"]
    holder = pg.query("SELECT holder_session::text FROM bothy.consumer_holder(%s)", agent)[0][0]
    assert holder == second["bind"]          # a consumer connection holds under its bind ID
    assert a.metric('bothy_gateway_closes_total{code="4015"}') == 1


def test_agent_taken_over_on_the_same_node_fences_the_old_consumer(gateways, keys):
    node = gateways(1)
    agent = new_id()

    async def go():
        old, _ = await identify(node.url, keys.agent(agent))
        new, _ = await identify(node.url, keys.agent(agent))
        code = await closed_with(old, timeout=3)
        ok = await alive(new)
        await new.close()
        return code, ok
    assert run(go()) == (4015, True)


def test_a_takeover_whose_signal_was_lost_is_fenced_by_the_next_regular_save(gateways, keys, pg):
    node = gateways(1)      # bothy.consumer_lease = 3s: a save every second
    agent = new_id()

    async def go():
        ws, _ = await identify(node.url, keys.agent(agent))
        # a takeover that no signal told
        pg.query("UPDATE bothy.consumer_holds SET holder_session = gen_random_uuid() WHERE agent = %s",
                 agent)
        return await closed_with(ws, timeout=4)
    assert run(go()) == 4015


def test_an_idle_consumer_keeps_its_hold_past_the_lease(gateways, keys, pg):
    node = gateways(1)      # bothy.consumer_lease = 3s; the maintenance worker releases lapsed holds
    agent = new_id()

    async def go():
        ws, ready = await identify(node.url, keys.agent(agent))
        for _ in range(5):          # 5 s of heartbeats and no ack
            await asyncio.sleep(1)
            assert await alive(ws)
        await ws.close()
        return ready
    ready = run(go())
    holder = pg.query("SELECT holder_session::text FROM bothy.consumer_holder(%s)", agent)[0][0]
    assert holder == ready["bind"]


def test_a_lapsed_lease_with_no_takeover_is_held_again(gateways, keys, pg):
    """A lease that lapsed (the database was away longer than
    bothy.consumer_lease) or was released by the maintenance worker, with
    nobody taking over: the next save is refused, bothy.consumer_resume
    holds again, and the consumer stays open (an outage alone never fences)."""
    node = gateways(1)      # bothy.consumer_lease = 3s: a save every second
    agent = new_id()
    resumes = "bothy_gateway_consumer_resumes_total"

    async def go():
        ws, ready = await identify(node.url, keys.agent(agent))
        pg.query("UPDATE bothy.consumer_holds SET lease_until = now() - interval '1 second' "
                 "WHERE agent = %s", agent)
        poll_until(lambda: node.metric(resumes) == 1, timeout=5, what="the lapsed lease held again")
        assert await alive(ws)
        # released as the maintenance worker releases: remembering from whom
        pg.query("UPDATE bothy.consumer_holds SET released_from = holder_session, holder_session = NULL, "
                 "holder_kind = NULL, node = NULL, lease_until = NULL WHERE agent = %s", agent)
        poll_until(lambda: node.metric(resumes) == 2, timeout=5, what="the released hold held again")
        assert await alive(ws)
        await ws.close()
        return ready
    ready = run(go())
    holder = pg.query("SELECT holder_session::text, lease_until > now() FROM bothy.consumer_holder(%s)", agent)[0]
    assert holder == (ready["bind"], True)
    assert node.metric('bothy_gateway_closes_total{code="4015"}') == 0
    assert node.log.count("consumer lease lapsed with no takeover, holding again") == 2
