"""The terminal relay across three real nodes behind the real edge (nginx
running the shipped deploy/nginx/bothy-edge.conf): both sides of a session
reach the node its ID hashes to, whichever node served the open, and bytes
come back exactly; the edge's two traps closed (a stream path without a
session ID is answered 404 by the edge and reaches no node; one shared
zone, so every worker agrees a node is down and both sides of a session
meet on one node); the hash node killed: both sides closed, the host's data
connection back on another node detaches the session, and it is attached
again through the edge.
"""
import asyncio
import os
import re
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


def without(pattern):
    """A change of the generated edge that drops the lines matching pattern."""
    return lambda text: "".join(line for line in text.splitlines(keepends=True)
                                if not re.search(pattern, line))


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


def longer_fail_timeout(text):
    """fail_timeout 10s -> 120s: the node's restart on a loaded machine must
    not outlast it (what is shown does not depend on its length)."""
    assert text.count("fail_timeout=10s") >= 4
    return text.replace("fail_timeout=10s", "fail_timeout=120s")


def split_after_a_node_came_back(tnodes, terminal, edge, change=longer_fail_timeout):
    """Three nodes, an edge with four workers: the hash node of a session is
    killed, one connection through the edge finds it down (one worker
    learns it), the node comes back on its port, and twenty more
    connections of the same session follow within fail_timeout.  Returns
    how many of them reached each node."""
    nodes = tnodes(3)
    e = edge(nodes, workers=4, change=change)
    host, owner, _ = terminal.host()
    session = terminal.open(host, owner)
    before = frames_in(nodes)
    lands(e, session, 1)
    after = frames_in(nodes)
    victim = nodes[[a - b for a, b in zip(after, before)].index(1)]
    victim.proc.kill()
    victim.proc.wait()
    lands(e, session, 1)                # one worker learns the node is down
    victim.start()
    before = frames_in(nodes)
    lands(e, session, 20)
    after = frames_in(nodes)
    return {n.port: a - b for n, a, b in zip(nodes, after, before)}, victim


def test_one_shared_zone_so_every_worker_skips_a_node_it_did_not_see_fail(tnodes, terminal, edge):
    counts, victim = split_after_a_node_came_back(tnodes, terminal, edge)
    # every connection went to the one node the ring gives after the victim
    assert counts[victim.port] == 0 and sorted(counts.values()) == [0, 0, 20], counts


def test_without_the_zone_workers_split_a_session(tnodes, terminal, edge):
    """The trap the shared zone closes, made to happen: each worker's own
    view sends some sides back to the node that came back."""
    counts, victim = split_after_a_node_came_back(
        tnodes, terminal, edge, change=lambda text: without(r"^\s*zone\s")(longer_fail_timeout(text)))
    assert counts[victim.port] > 0 and counts[victim.port] < 20, counts


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
