"""The terminal relay across three real nodes behind the real edge (nginx
running the shipped deploy/nginx/bothy-edge.conf): both sides of a session
reach the node its ID hashes to, whichever node served the open, and bytes
come back exactly; the edge's traps closed (a stream path without a
session ID is answered 404 by the edge and reaches no node; no failure
state, max_fails=0, so every worker and every moment route a session
alike: with one, each worker's own view or the recovery probe after
fail_timeout splits its sides); the hash node killed: both sides closed, the host's data
connection back on another node detaches the session, and it is attached
again through the edge.
"""
import asyncio
import os
import signal
import time
import urllib.error
import urllib.request

from conftest import keys, new_id, poll_until  # noqa: F401  (keys is a fixture)
from edge import edge  # noqa: F401  (a fixture)
from terminal_streams import (STREAM, Side, pair, run, terminal, tnodes, tpg,  # noqa: F401
                              wait_state, ws_base)


def holder(nodes):
    """The nodes that hold a pairing now (their /status.json)."""
    import json
    found = []
    for node in nodes:
        status, body = node.http("/status.json")
        assert status == 200
        if json.loads(body)["terminal_relay"]["paired"] > 0:
            found.append(node)
    return found


def upgrade(e, path, upgrade=True):
    """(status, body) of a WebSocket upgrade request (or a plain GET) through the edge."""
    headers = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="} if upgrade else {}
    request = urllib.request.Request(e.http_url + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(errors="replace")


NGINX_PAGE = "<center>nginx</center>"


def frames_in(nodes):
    return [n.metric("bothy_gateway_frames_in_total") for n in nodes]


def test_three_nodes_both_sides_meet_on_the_hash_node(tnodes, terminal, edge):
    nodes = tnodes(3)
    e = edge(nodes)
    host, owner, _ = terminal.host()
    # several sessions, so the hash spreads them; each opened "by" node 0
    sessions = [terminal.open(host, owner) for _ in range(6)]

    async def go():
        seen = []
        for s in sessions:
            device, hostside = await pair(e.ws_base, e.ws_base, s)
            await device.ws.send(b"echo hi\r")
            typed = await hostside.bytes(8)
            blob = os.urandom(50_000)
            for i in range(0, len(blob), 2000):
                await hostside.ws.send(blob[i:i + 2000])
            out = await device.bytes(len(blob))
            at = holder(nodes)
            seen.append((typed, out == blob, at))
            await device.close()
            await hostside.close()
            poll_until(lambda: holder(nodes) == [], timeout=5, what="pairing gone")
        return seen
    seen = run(go())
    assert all(typed == b"echo hi\r" and same and len(at) == 1 for typed, same, at in seen)
    # the hash spread the sessions: the pairings did not all live on one node
    assert len({at[0].port for _, _, at in seen}) >= 2
    # what the REST node would be (any) does not matter: every node relays some
    # session whose open it did not serve


def test_a_stream_path_without_a_session_id_is_404_at_the_edge(tnodes, edge):
    nodes = tnodes(3)
    e = edge(nodes)
    before = frames_in(nodes)
    bad = ["", "x", new_id().upper(), new_id() + "/", new_id() + "/x", new_id() + "?a=1",
           "%30" + new_id()[1:], "/" + new_id(), "../gateway"]
    answers = [upgrade(e, STREAM + rest) for rest in bad] + [upgrade(e, STREAM + "x", upgrade=False)]
    # the edge's own 404, never a node's: the node's page is not nginx's
    assert all(code == 404 and NGINX_PAGE in body for code, body in answers), answers
    # a valid session ID does reach a node (which upgrades it)
    sid = new_id()

    async def reach():
        side = await Side.open(e.ws_base, sid)
        await side.send_json({"op": "identify", "side": "device", "token": "x"})
        return await side.closed()
    assert run(reach()) == 4001
    after = frames_in(nodes)
    # only the one valid path's identify reached a node
    assert sum(after) - sum(before) == 1


def test_the_empty_hash_key_trap_is_real(tnodes, edge):
    """Without the edge's 404 for an empty key, a bad stream path is sent to
    a node picked round robin (which answers it 404 itself): the trap the
    shipped edge closes."""
    nodes = tnodes(2)
    e = edge(nodes, change=lambda t: t.replace('if ($bothy_terminal_session = "")',
                                               'if ($bothy_terminal_session = "none")'))
    answers = [upgrade(e, STREAM + "not-a-session") for _ in range(4)]
    assert all(code == 404 and NGINX_PAGE not in body for code, body in answers), answers


def lands(e, session, n):
    """Opens n host data connections of the session through the edge, one
    after another, each sending its identify; they are closed after."""
    async def go():
        sides = []
        for _ in range(n):
            side = await Side.open(e.ws_base, session.id, session.host_identify())
            sides.append(side)
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)
        for side in sides:
            await side.ws.close()
    run(go())


def with_failure_state(fail_timeout, zone=True):
    """A change of the generated edge that gives the stream upstream's
    nodes nginx's failure state back (max_fails=1 with this fail_timeout),
    with or without a shared zone: the shipped file has none (max_fails=0)."""
    def change(text):
        assert text.count("max_fails=0") >= 3
        text = text.replace("max_fails=0", "max_fails=1 fail_timeout=%ds" % fail_timeout)
        if zone:
            text = text.replace("    hash $bothy_terminal_session consistent;\n",
                                "    hash $bothy_terminal_session consistent;\n"
                                "    zone bothy_terminal_stream 64k;\n")
        return text
    return change


def reached(nodes, connect):
    """How many identifies reached each node (by port) while connect() ran."""
    before = frames_in(nodes)
    connect()
    return {node.port: a - b for node, a, b in zip(nodes, frames_in(nodes), before)}


def hash_node_of(nodes, connect):
    """The node that connect()'s one connection of a session reached."""
    counts = reached(nodes, connect)
    return nodes[list(counts.values()).index(1)]


def landed(nodes, e, session, n):
    """How many of n connections of the session reached each node, by port."""
    return reached(nodes, lambda: lands(e, session, n))


def test_without_failure_state_every_worker_routes_a_session_alike(tnodes, terminal, edge):
    """The shipped edge keeps no view of which node is down (max_fails=0):
    while the hash node of a session is down, every connection of the
    session, through any of four workers, fails over to the same next node
    of the ring; once it is back, every one reaches it again."""
    nodes = tnodes(3)
    e = edge(nodes, workers=4)
    host, owner, _ = terminal.host()
    session = terminal.open(host, owner)
    victim = hash_node_of(nodes, lambda: lands(e, session, 1))
    victim.proc.kill()
    victim.proc.wait()
    down = landed([n for n in nodes if n is not victim], e, session, 12)
    assert sorted(down.values()) == [0, 12], down
    victim.start()
    back = landed(nodes, e, session, 12)
    assert back[victim.port] == 12, back


def test_failure_state_without_a_zone_splits_a_session_across_workers(tnodes, terminal, edge):
    """One trap of nginx's failure state, made to happen: each worker keeps
    its own view of which node is down, so once the node is back, the
    workers that did not see it fail send sides to it while the one that
    did still skips it."""
    nodes = tnodes(3)
    e = edge(nodes, workers=4, change=with_failure_state(120, zone=False))
    host, owner, _ = terminal.host()
    session = terminal.open(host, owner)
    victim = hash_node_of(nodes, lambda: lands(e, session, 1))
    victim.proc.kill()
    victim.proc.wait()
    lands(e, session, 1)                # one worker learns the node is down
    victim.start()
    # the kernel spreads connections over the four workers at random: with
    # 40, all missing the one that learned has odds of (3/4)^40, 1e-5 (with
    # 20 a CI run once saw it, 3e-3)
    counts = landed(nodes, e, session, 40)
    assert 0 < counts[victim.port] < 40, counts


def device_after_its_hash_node_came_back(tnodes, terminal, edge, change=None):
    """One worker; a session's hash node killed while the session is
    opening, one host data connection through the edge while it is down,
    the node back on its port, and over fail_timeout (1 s) after the failure
    the host's data connection and, once it is told waiting, the device's
    stream, both held open as a session's sides are.  Returns the device's
    first answer: paired when both reached one node.  (A host side closes
    with 4000 here: 1000 would end the session.)"""
    nodes = tnodes(3)
    e = edge(nodes, change=change)
    host, owner, _ = terminal.host()
    session = terminal.open(host, owner)

    async def probe_host():
        side = await Side.open(e.ws_base, session.id, session.host_identify())
        assert await side.op() == "waiting"
        await side.close(4000)

    victim = hash_node_of(nodes, lambda: run(probe_host()))
    victim.proc.kill()
    victim.proc.wait()
    run(probe_host())                   # refused by the node: the edge tries the next
    failed = time.monotonic()
    victim.start()
    # past fail_timeout (1 s, which nginx counts in whole seconds), and no
    # longer: the session's grant lasts bothy.terminal_open_timeout
    time.sleep(max(0.0, 2.2 - (time.monotonic() - failed)))

    async def both_sides():
        h = await Side.open(e.ws_base, session.id, session.host_identify())
        assert await h.op() == "waiting"    # on its node before the device comes
        d = await Side.open(e.ws_base, session.id, session.device_identify())
        first = await d.op()
        await d.close()
        await h.close(4000)
        return first
    return run(both_sides())


def test_both_sides_meet_on_the_hash_node_right_after_it_came_back(tnodes, terminal, edge):
    assert device_after_its_hash_node_came_back(tnodes, terminal, edge) == "paired"


def test_failure_state_splits_a_session_at_the_recovery_probe(tnodes, terminal, edge):
    """The other trap of nginx's failure state, with the shared zone and one
    worker: after fail_timeout nginx lets one connection try the node that
    came back and skips the node for every other until that connection
    ends, which for a WebSocket is when its session ends.  The host's data
    connection probes the node; the device's stream a moment later goes to
    the next node, and both sides are lone (found by the browser test, the
    pane's new shell after the relay node had been killed)."""
    assert device_after_its_hash_node_came_back(
        tnodes, terminal, edge, change=with_failure_state(1)) == "waiting"


def test_hash_node_killed_both_sides_closed_and_attached_again_through_the_edge(tnodes, terminal, edge):
    nodes = tnodes(3)
    e = edge(nodes)
    host, owner, _ = terminal.host()
    session = terminal.open(host, owner)

    async def go():
        device, hostside = await pair(e.ws_base, e.ws_base, session)
        # the host started it (as its control node would commit session.started)
        assert terminal.q("SELECT bothy.terminal_session_started(%s, %s)", session.id, session.grant) == [(True,)]
        at, = holder(nodes)
        at.proc.kill()
        at.proc.wait()
        codes = await asyncio.gather(device.closed(), hostside.closed())
        # the host service connects its data connection again (the same grant):
        # the edge hashes it to another node, which detaches the session
        again = await Side.open(e.ws_base, session.id, session.host_identify())
        assert await again.op() == "waiting"
        wait_state(terminal, session.id, ("detached", None))
        # the person attaches; the host gets session.open of the fresh grant
        fresh = terminal.attach(session)
        device2, host2 = await pair(e.ws_base, e.ws_base, fresh)
        await host2.ws.send(b"back")
        out = await device2.bytes(4)
        survivor, = holder([n for n in nodes if n is not at])
        for side in (device2, host2, again):
            await side.close()
        return codes, out, at, survivor
    codes, out, dead, survivor = run(go())
    assert codes == [1006, 1006]       # no close frame: the node is gone
    assert out == b"back" and survivor is not dead
    assert "session_detached" in terminal.log(session.id)
