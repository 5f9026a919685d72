"""GET /v1/presence?thread=T&person=... on real gateways (docs/protocol.md,
D-M7-17-6): per person who may see T, the newest fresh row of each device,
from whichever node flushed it, with focus and idle as the last ops set
them; the persons who may not see T are left out, and a caller who may not
see T is refused with 403."""
from cluster import Client, World, parse_time, rest
from conftest import new_id, poll_until, run


def answer(node, token, thread, *persons):
    query = "thread=%s" % thread + "".join("&person=%s" % p for p in persons)
    return rest(node, "/v1/presence?" + query, token)


def rows_of(body):
    """The rows without updated_at (checked apart), as the answer orders them."""
    return [{k: v for k, v in r.items() if k != "updated_at"} for r in body["presence"]]


def test_presence_of_members_on_both_nodes(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    caller, member, roaming, outsider = (new_id() for _ in range(4))
    place, thread = w.room(caller, member, roaming)
    other = w.thread(place)
    phone, laptop, tablet = new_id(), new_id(), new_id()
    token = keys.person(caller)

    async def go():
        clients = [await Client.open(a.url, keys.person(member, phone)),
                   await Client.open(b.url, keys.person(roaming, laptop)),
                   await Client.open(a.url, keys.person(roaming, tablet)),
                   await Client.open(b.url, keys.person(outsider))]
        on_a, on_b = clients[0].ready["node"], clients[1].ready["node"]
        await clients[0].send({"op": "focus", "thread": thread})
        await clients[1].send({"op": "focus", "thread": other})
        await clients[1].send({"op": "idle", "idle": True})
        await clients[3].send({"op": "focus", "thread": thread})
        expected = sorted([
            {"person": member, "device": phone, "node": on_a, "focus": thread, "idle": False},
            {"person": roaming, "device": laptop, "node": on_b, "focus": other, "idle": True},
            {"person": roaming, "device": tablet, "node": on_a, "focus": None, "idle": False},
        ], key=lambda r: (r["person"], r["device"]))
        persons = (member, roaming, outsider, caller)       # the caller has no connection
        poll_until(lambda: rows_of(answer(a, token, thread, *persons)[1]) == expected,
                   timeout=8, what="flushed presence")
        answers = [answer(n, token, thread, *persons) for n in (a, b)]
        for c in clients:
            await c.close()
        return expected, answers
    expected, answers = run(go())
    for status, body in answers:
        assert status == 200 and rows_of(body) == expected
        assert all(sorted(r) == ["device", "focus", "idle", "node", "person", "updated_at"]
                   for r in body["presence"])
        for r in body["presence"]:
            parse_time(r["updated_at"])


def test_presence_is_refused_to_a_caller_who_may_not_see_the_thread(gateways, keys, pg):
    node = gateways(1)
    w = World(pg)
    member, outsider = new_id(), new_id()
    _, thread = w.room(member)
    assert answer(node, keys.person(outsider), thread, member) == (403, {"error": "forbidden"})
    # an unknown thread: nobody may see it
    assert answer(node, keys.person(member), new_id(), member) == (403, {"error": "forbidden"})
    assert answer(node, keys.person(member), thread, member) == (200, {"presence": []})
    for query in ("thread=%s" % thread, "person=%s" % member, "thread=x&person=%s" % member,
                  "thread=%s&person=%s&device=%s" % (thread, member, member),
                  "thread=%s&thread=%s&person=%s" % (thread, thread, member)):
        assert rest(node, "/v1/presence?" + query, keys.person(member)) == \
            (400, {"error": "bad_request"}), query
    for token in (None, keys.agent(), "bothy1.garbage"):
        assert answer(node, token, thread, member) == (401, {"error": "token_refused"})


def test_fifty_persons_or_agents_are_answered_and_more_refused(gateways, keys, pg):
    # 50 UUIDs in the query are answered; the 51st is refused with 400
    node = gateways(1)
    w = World(pg)
    member = new_id()
    _, thread = w.room(member)
    persons = "".join("&person=%s" % new_id() for _ in range(49))
    assert rest(node, "/v1/presence?thread=%s&person=%s%s" % (thread, member, persons),
                keys.person(member)) == (200, {"presence": []})
    agents = "&".join("agent=%s" % new_id() for _ in range(50))
    assert rest(node, "/v1/agents/presence?" + agents, keys.person())[0] == 200
    assert rest(node, "/v1/agents/presence?" + agents + "&agent=" + new_id(),
                keys.person()) == (400, {"error": "bad_request"})
