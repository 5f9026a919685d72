"""Typing indicators across two real gateways on one database in multi mode
(D-M7-17-5): a member's typing reaches the members on both nodes with the
thread's place and expires_at = now + bothy.typing_ttl (8 s by default),
never the sending connection nor a person who may not see the thread; a
second typing for the thread within --typing-interval is dropped, and so is
typing in more threads than the limit within it; a sender outside the
audience is answered "rejected"; and every delivery asks the audience
again, so a removed member stops receiving typing from the other node."""
import time

from cluster import Client, World, parse_time
from conftest import new_id, poll_until, run

TYPING_TTL = 8.0
DROPPED = "bothy_gateway_typing_dropped_total"
REJECTED = "bothy_gateway_typing_rejected_total"
RECEIVED = 'bothy_gateway_signals_received_total{kind="gateway.typing"}'


def test_typing_reaches_members_on_both_nodes_and_nobody_else(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    sender, member_a, member_b, outsider, other = (new_id() for _ in range(5))
    place, thread = w.room(sender, member_a, member_b)
    _, elsewhere = w.room(outsider, other)

    async def go():
        s = await Client.open(a.url, keys.person(sender))
        ma = await Client.open(a.url, keys.person(member_a))
        mb = await Client.open(b.url, keys.person(member_b))
        out = await Client.open(b.url, keys.person(outsider))
        o = await Client.open(a.url, keys.person(other))
        await s.send({"op": "typing", "thread": thread})
        sent = time.time()
        on_b = await mb.event("typing.started")
        on_a = await ma.event("typing.started")
        # both nodes decided: the sender's own connection was not among them
        assert await s.before_ack() == []
        # the sentinel: a typing the outsider may see comes next on B
        await o.send({"op": "typing", "thread": elsewhere})
        sentinel = await out.event("typing.started")
        for c in (s, ma, mb, out, o):
            await c.close()
        return sent, on_a, on_b, sentinel
    sent, on_a, on_b, sentinel = run(go())
    for data in (on_a, on_b):
        assert sorted(data) == ["expires_at", "place", "principal", "thread"]
        assert (data["thread"], data["place"], data["principal"]) == (thread, place, sender)
        # now + typing_ttl, by each node's own clock (this machine's)
        assert abs(parse_time(data["expires_at"]) - (sent + TYPING_TTL)) < 2.0, data
    assert (sentinel["thread"], sentinel["principal"]) == (elsewhere, other)
    assert b.metric(RECEIVED) == 2 and a.metric(RECEIVED) == 0


def test_a_second_typing_within_the_interval_is_dropped(gateways, keys, pg):
    interval = 1.5
    a, b = gateways(2, extra=["--typing-interval", str(int(interval * 1000))])
    w = World(pg)
    sender, member = new_id(), new_id()
    place, thread = w.room(sender, member)
    other = w.thread(place)

    async def go():
        s = await Client.open(a.url, keys.person(sender))
        m = await Client.open(b.url, keys.person(member))
        await s.send({"op": "typing", "thread": thread})
        first = time.monotonic()
        assert (await m.event("typing.started"))["thread"] == thread
        await s.send({"op": "typing", "thread": thread})
        poll_until(lambda: a.metric(DROPPED) == 1, timeout=5, what="typing dropped")
        dropped_in = time.monotonic() - first
        # another thread is not limited by the first: it is the next event on B
        await s.send({"op": "typing", "thread": other})
        assert (await m.event("typing.started"))["thread"] == other
        # once the interval passed, the thread's typing goes on again
        time.sleep(max(0.0, first + interval + 0.1 - time.monotonic()))
        await s.send({"op": "typing", "thread": thread})
        assert (await m.event("typing.started"))["thread"] == thread
        await s.close()
        await m.close()
        return dropped_in
    dropped_in = run(go())
    assert dropped_in < interval        # the drop happened within the interval
    assert a.metric(DROPPED) == 1
    assert b.metric(RECEIVED) == 3


def test_a_sender_who_may_not_see_the_thread_is_rejected(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    outsider, member_a, member_b = new_id(), new_id(), new_id()
    _, thread = w.room(member_a, member_b)

    async def go():
        out = await Client.open(a.url, keys.person(outsider))
        ma = await Client.open(a.url, keys.person(member_a))
        mb = await Client.open(b.url, keys.person(member_b))
        await out.send({"op": "typing", "thread": thread})
        error = await out.recv()
        # the connection stays open
        assert await out.before_ack() == []
        # nothing went to the members: a member's own typing comes first on
        # both nodes (ma's on its own connection is never delivered, so mb)
        await ma.send({"op": "typing", "thread": thread})
        on_b = await mb.event("typing.started")
        assert await ma.before_ack() == []
        for c in (out, ma, mb):
            await c.close()
        return error, on_b
    error, on_b = run(go())
    assert error == {"op": "error", "request": "typing", "code": "rejected"}
    assert on_b["principal"] == member_a
    assert a.metric(REJECTED) == 1
    # the outsider's signal left at once, and the other node refused it too:
    # the first typing its member saw was the member's (on_b above)
    assert b.metric(RECEIVED) == 2
    poll_until(lambda: b.metric(REJECTED) == 1, timeout=5, what="the other node refused it")


def test_a_removed_member_stops_receiving_typing_from_the_other_node(gateways, keys, pg):
    a, b = gateways(2, extra=["--typing-interval", "0"])
    w = World(pg)
    sender, stays, removed = new_id(), new_id(), new_id()
    place, thread = w.room(sender, stays, removed)

    async def go():
        s = await Client.open(a.url, keys.person(sender))
        st = await Client.open(b.url, keys.person(stays))
        rm = await Client.open(b.url, keys.person(removed))
        await s.send({"op": "typing", "thread": thread})
        before = [(await st.event("typing.started"))["principal"],
                  (await rm.event("typing.started"))["principal"]]
        assert w.leave(place, removed) is True
        await s.send({"op": "typing", "thread": thread})
        after = (await st.event("typing.started"))["principal"]
        # B decided for both in one answer of the audience: nothing is on its way
        late = await rm.before_ack()
        for c in (s, st, rm):
            await c.close()
        return before, after, late
    before, after, late = run(go())
    assert before == [sender, sender] and after == sender
    assert late == []


def test_typing_limit_holds_per_thread_when_threads_alternate(gateways, keys, pg):
    # T1, T2, T1, T2 within --typing-interval: the limit is per thread, so
    # the second T1 and the second T2 are dropped
    node = gateways(1, extra=["--typing-interval", "5000"])
    w = World(pg)
    sender = new_id()
    place, t1 = w.room(sender)
    t2 = w.thread(place)

    async def go():
        s = await Client.open(node.url, keys.person(sender))
        for t in (t1, t2, t1, t2):
            await s.send({"op": "typing", "thread": t})
        # ops are handled in order and a drop is counted at once: after the
        # answer to a heartbeat, every drop is counted
        await s.before_ack()
    run(go())
    assert node.metric("bothy_gateway_typing_dropped_total") == 2


def test_typing_in_more_threads_than_the_limit_is_held_to_it(gateways, keys, pg):
    node = gateways(1, extra=["--typing-interval", "5000"])
    w = World(pg)
    sender = new_id()
    place, first = w.room(sender)
    threads = [first] + [w.thread(place) for _ in range(5)]

    async def go():
        s = await Client.open(node.url, keys.person(sender))
        for t in threads:
            await s.send({"op": "typing", "thread": t})
        await s.before_ack()
        await s.close()
    run(go())
    # four threads pass per interval, the fifth and sixth are dropped
    assert node.metric("bothy_gateway_typing_dropped_total") == 2
