"""Notification hints across two real gateways (D-M7-17-5, D-M7-17-7): the
maintenance worker decides each bothy.notification_created once for the
cluster from the presence rows the nodes flushed (every
bothy.presence_flush_interval): a present recipient gets notification.created
on whichever node holds their connection (with the thread's place when a
thread is given), an absent one a push outbox row, and a recipient who may
not see the hint's thread (asked again at every delivery) nothing."""
from cluster import Client, World, wait_present
from conftest import new_id, poll_until, run

HINTS = 'bothy_gateway_signals_received_total{kind="gateway.hint"}'
NOT_ADMITTED = "bothy_gateway_hints_not_admitted_total"


def claimed(world):
    """The push outbox, claimed: {nid: recipient}."""
    return dict(world.q("SELECT nid::text, recipient::text FROM bothy.push_claim(1000)"))


def test_hint_reaches_the_recipient_on_whichever_node(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    on_a, on_b = new_id(), new_id()
    place, thread = w.room(on_a, on_b)
    message = new_id()

    async def go():
        ca = await Client.open(a.url, keys.person(on_a))
        cb = await Client.open(b.url, keys.person(on_b))
        cb2 = await Client.open(a.url, keys.person(on_b))       # B's person's second device
        wait_present(w, on_a, on_b)
        for_b = w.notify(on_b, "mention", False, 3, thread=thread, message=message)
        for_a = w.notify(on_a, "direct", True, 1)
        got_b = [await cb.event("notification.created"), await cb2.event("notification.created")]
        # decided in nid order: A's own hint is its next event, B's never came
        got_a = await ca.event("notification.created")
        for c in (ca, cb, cb2):
            await c.close()
        return for_a, for_b, got_a, got_b
    for_a, for_b, got_a, got_b = run(go())
    assert got_b == [{"nid": for_b, "recipient": on_b, "hint_kind": "mention", "quiet": False,
                      "count": 3, "thread": thread, "place": place, "message": message}] * 2
    assert got_a == {"nid": for_a, "recipient": on_a, "hint_kind": "direct", "quiet": True,
                     "count": 1}
    assert claimed(w).keys().isdisjoint({for_a, for_b})


def test_an_absent_recipient_gets_a_push_row_and_no_hint(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    absent, present = new_id(), new_id()

    async def go():
        c = await Client.open(b.url, keys.person(present))
        wait_present(w, present)
        assert not w.present(absent)
        hints = [a.metric(HINTS), b.metric(HINTS)]
        pushed = w.notify(absent, "reply")
        sentinel = w.notify(present, "reply")
        got = await c.event("notification.created")
        await c.close()
        return hints, pushed, sentinel, got
    hints, pushed, sentinel, got = run(go())
    assert got["nid"] == sentinel
    # the absent recipient's notification was decided first, as no hint at all
    poll_until(lambda: a.metric(HINTS) >= hints[0] + 1, timeout=5, what="A heard the hint")
    assert [a.metric(HINTS), b.metric(HINTS)] == [hints[0] + 1, hints[1] + 1]
    outbox = claimed(w)
    assert outbox.get(pushed) == absent
    assert sentinel not in outbox


def test_a_recipient_who_may_not_see_the_thread_gets_nothing(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    person = new_id()
    place, thread = w.room(person)
    _, foreign = w.room()               # a thread of a place the person is not in

    async def go():
        c = await Client.open(b.url, keys.person(person))
        wait_present(w, person)
        first = w.notify(person, "mention", thread=thread)
        assert (await c.event("notification.created"))["nid"] == first
        # every delivery asks the audience again: removed, then a hint of the thread
        assert w.leave(place, person) is True
        w.notify(person, "mention", thread=thread)
        poll_until(lambda: b.metric(NOT_ADMITTED) == 1, timeout=10, what="first hint not admitted")
        w.notify(person, "invite", thread=foreign)
        poll_until(lambda: b.metric(NOT_ADMITTED) == 2, timeout=10, what="second hint not admitted")
        # the sentinel: a hint without a thread is the next event
        sentinel = w.notify(person, "system")
        got = await c.event("notification.created")
        await c.close()
        return sentinel, got
    sentinel, got = run(go())
    assert got["nid"] == sentinel and "thread" not in got
    assert a.metric(NOT_ADMITTED) == 0     # A has no connection of the person: no call at all
