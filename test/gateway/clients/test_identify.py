"""identify, ready and resume for persons and agents, across two nodes, and
the tokens that are refused (4001)."""
import json
import time
import uuid

import websockets

from conftest import closed_with, heartbeat, identify, new_id, poll_until, run


def is_uuid(text, version=None):
    u = uuid.UUID(text)
    return str(u) == text and (version is None or u.version == version)


def test_person_identify_ready(gateways, keys, pg):
    node = gateways(1)
    person, device = new_id(), new_id()

    async def go():
        ws, ready = await identify(node.url, keys.person(person, device))
        assert await heartbeat(ws) == {"op": "heartbeat_ack"}
        await ws.close()
        return ready
    ready = run(go())
    assert ready["op"] == "ready"
    assert set(ready) == {"op", "session", "bind", "resume", "node", "heartbeat_ms"}
    assert is_uuid(ready["session"], 7) and is_uuid(ready["bind"], 7) and is_uuid(ready["node"], 7)
    assert ready["heartbeat_ms"] == 30000
    # the binding is the database's, under this node and session
    row = pg.query("SELECT gateway_session::text, bind_id::text, node::text FROM bothy.device_binding(%s)",
                   device)[0]
    assert row == (ready["session"], ready["bind"], ready["node"])


def test_agent_identify_ready(gateways, keys, pg):
    node = gateways(1)
    agent = new_id()

    async def go():
        ws, ready = await identify(node.url, keys.agent(agent))
        await ws.close()
        return ready
    ready = run(go())
    assert ready["op"] == "ready" and ready["acked"] == 0
    assert is_uuid(ready["bind"], 7)
    holder = pg.query("SELECT holder_session::text, holder_kind, node::text FROM bothy.consumer_holder(%s)",
                      agent)[0]
    # the connection's binding of the session holds the stream
    assert holder == (ready["bind"], "connection", ready["node"])


def test_resume_on_the_other_node(gateways, keys, pg):
    a, b = gateways(2)
    device = new_id()

    async def go():
        ws, first = await identify(a.url, keys.person(new_id(), device))
        await ws.close()
        ws, second = await identify(b.url, first["resume"], op="resume")
        assert await heartbeat(ws) == {"op": "heartbeat_ack"}
        await ws.close()
        return first, second
    first, second = run(go())
    assert second["op"] == "ready"
    assert second["session"] == first["session"]
    assert second["bind"] > first["bind"]              # a fresh, newer bind ID
    assert second["node"] != first["node"]
    row = pg.query("SELECT bind_id::text, node::text FROM bothy.device_binding(%s)", device)[0]
    assert row == (second["bind"], second["node"])


def test_agent_resume_keeps_the_session(gateways, keys):
    a, b = gateways(2)

    async def go():
        ws, first = await identify(a.url, keys.agent())
        await ws.close()
        ws, second = await identify(b.url, first["resume"], op="resume")
        await ws.close()
        return first, second
    first, second = run(go())
    assert second["op"] == "ready" and second["session"] == first["session"]


def refused(node, token, op="identify"):
    async def go():
        ws = await websockets.connect(node.url)
        await ws.send(json.dumps({"op": op, "token": token}))
        return await closed_with(ws)
    return run(go())


def test_refused_tokens_close_4001(gateways, keys):
    node = gateways(1)
    now = int(time.time())
    person, device = new_id(), new_id()
    expired = keys.forge({"kind": "person-device", "person": person, "device": device, "exp": now - 5})
    valid = keys.forge({"kind": "person-device", "person": person, "device": device, "exp": now + 600})
    head, sig = valid.rsplit(".", 1)
    forged = head + "." + ("A" if sig[0] != "A" else "B") + sig[1:]

    async def resume_token():
        ws, ready = await identify(node.url, keys.agent())
        await ws.close()
        return ready["resume"]
    resume = run(resume_token())

    assert refused(node, expired) == 4001
    assert refused(node, forged) == 4001
    assert refused(node, resume) == 4001                    # resume token in identify
    assert refused(node, keys.person(), op="resume") == 4001  # identify token in resume
    assert refused(node, "bothy1.nokey.e30.AAAA") == 4001
    log = node.log
    for reason in ("reason=expired", "reason=bad_signature", "reason=wrong_kind"):
        assert reason in log, reason
    assert node.metric("bothy_gateway_tokens_refused_total") == 5
    assert node.metric('bothy_gateway_closes_total{code="4001"}') == 5


def test_forged_signer_is_accepted_when_valid(gateways, keys):
    """The test's own signer makes tokens the gateway accepts, so the refusals
    above are for the expiry and the signature, not for the format."""
    node = gateways(1)
    now = int(time.time())
    token = keys.forge({"kind": "person-device", "person": new_id(), "device": new_id(), "exp": now + 600})

    async def go():
        ws, ready = await identify(node.url, token)
        await ws.close()
        return ready
    assert run(go())["op"] == "ready"


def test_key_rotated_signs_on_one_node_and_verifies_on_the_other(gateways, keys):
    a, b = gateways(2)
    old = keys.newest_key()
    new = keys.rotate()
    assert new != old and keys.newest_key() == new
    token = keys.person()                  # signed by the new key
    assert token.split(".")[1] == new

    def resume_signed_by_new_key_on_a():
        async def go():
            try:
                ws, ready = await identify(a.url, token)
            except websockets.ConnectionClosed as e:
                assert e.code == 4001       # A has not re-read the key store yet
                return None
            await ws.close()
            return ready
        ready = run(go())
        return ready is not None and ready["resume"].split(".")[1] == new and ready

    # bothy.signing_key_cache_ttl is 1 s in this cluster
    elapsed = poll_until(lambda: resume_signed_by_new_key_on_a(), timeout=5,
                         what="node A verifies and signs with the new key")
    ready = resume_signed_by_new_key_on_a()

    def resumed_on_b():
        async def go():
            try:
                ws, again = await identify(b.url, ready["resume"], op="resume")
            except websockets.ConnectionClosed as e:
                assert e.code == 4001       # B has not re-read the key store yet
                return False
            await ws.close()
            return again["op"] == "ready" and again["session"] == ready["session"]
        return run(go())
    elapsed += poll_until(resumed_on_b, timeout=5, what="node B verifies the new key")
    assert elapsed < 3.0
