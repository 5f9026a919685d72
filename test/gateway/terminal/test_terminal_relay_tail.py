"""What the relay learns from the terminal log tail and does with the
control plane (D-M2-47-15, 22, 25): session.started read from the log
(the device leaving then detaches at once, not at the slot's deadline; a
pairing that ended before it is detached when it commits), a
session detached elsewhere while it is relayed here made active again
(RelayActivate), a closed session closing both sides with 1000; and the
whole path of docs/terminal.md with three nodes behind the edge (the REST call
on one node, the host's control connection on another, both streams on
the hash node) where the control connection's node is killed with SIGKILL
while the pairing lives on: the end of the control connection detaches
nothing, the row stays active and the person keeps typing.

These need the terminal's control plane and its log tail in the same
binary as the relay: a node that does not answer the terminal's REST paths
fails them at once.
"""
import asyncio
import json
import signal
import time
import urllib.error
import urllib.request

import websockets

from conftest import b64e, connected_on, ed25519_sign, keys, new_id, poll_until  # noqa: F401  (keys is a fixture)
from edge import edge  # noqa: F401  (a fixture)
from terminal_streams import (OPEN_S, Side, one_session, pair, paired_on, run, terminal, tnodes, tpg,  # noqa: F401
                              wait_state, ws_base)


def needs_control_plane(node):
    """The node serves the terminal's REST calls: a request without a token
    is refused, 401, not unknown, 404."""
    status, _ = node.http("/v1/terminal/hosts")
    assert status == 401, "no terminal control plane on this node (GET /v1/terminal/hosts: %d)" % status


def test_started_from_the_log_detaches_at_once_when_the_device_leaves(tnodes, terminal):
    node, base, session = one_session(tnodes, terminal)
    needs_control_plane(node)

    async def go():
        device, hostside = await pair(base, base, session)
        session.started()
        time.sleep(1.0)                 # two poll intervals: the tail read the row
        await device.close()
        assert await hostside.op() == "waiting"
        left = time.monotonic()
        wait_state(terminal, session.id, ("detached", None), timeout=OPEN_S)
        took = time.monotonic() - left
        await hostside.close()
        return took
    # long before the slot's own deadline (the grant's expiry plus open_timeout)
    assert run(go()) < 1.5


def test_a_pairing_that_ended_before_session_started_detaches_the_session(tnodes, terminal):
    node, base, session = one_session(tnodes, terminal)
    needs_control_plane(node)

    async def go():
        device, hostside = await pair(base, base, session)
        # the device leaves while the host has not started the grant yet:
        # nothing to detach (the row is opening) ...
        await device.close()
        assert await hostside.op() == "waiting"
        time.sleep(1.0)                 # two poll intervals
        assert terminal.state(session.id) == ("opening", None)
        # ... until session.started commits: the log tells the relay, which
        # detaches the pairing that ended (D-M2-47-22), long before the
        # slot's deadline
        started = time.monotonic()
        session.started()
        wait_state(terminal, session.id, ("detached", None), timeout=OPEN_S)
        took = time.monotonic() - started
        await hostside.close(1001)
        return took
    assert run(go()) < 1.5
    assert terminal.log(session.id) == ["session_opened", "session_started", "session_detached"]


def test_rows_pruned_before_the_node_read_them_are_read_back_from_the_states(tnodes, terminal):
    """A node away longer than bothy.terminal_log_retention finds numbers
    missing after its last one (docs/terminal.md, "Retention"): it
    reconciles, and the session that ended meanwhile closes both sides."""
    node, base, session = one_session(tnodes, terminal)
    needs_control_plane(node)

    async def go():
        device, hostside = await pair(base, base, session)
        session.started()
        poll_until(lambda: node.metric("bothy_terminal_log_seq") == log_head(), timeout=5,
                   what="the node read the log up to its head")
        node.proc.send_signal(signal.SIGSTOP)       # away: it reads nothing
        try:
            assert terminal.q("SELECT bothy.terminal_session_end(%s, 'closed_by_device')", session.id) == [(True,)]
            ended = log_head()
            terminal.open(session.host, session.person)     # a later row
            # the end's row pruned (as the maintenance worker prunes old rows)
            terminal.q("DELETE FROM bothy.terminal_log WHERE seq = %s", ended)
        finally:
            node.proc.send_signal(signal.SIGCONT)
        return await device.closed(timeout=5), await hostside.closed(timeout=5)

    def log_head():
        return terminal.q("SELECT bothy.terminal_log_head()")[0][0]
    assert run(go()) == (1000, 1000)
    assert node.metric("bothy_terminal_log_gaps_total") == 1
    assert "terminal log rows missing after the last one read, reconciling" in node.log


def test_detached_elsewhere_while_relayed_here_becomes_active_again(tnodes, terminal):
    node, base, session = one_session(tnodes, terminal)
    needs_control_plane(node)

    async def go():
        device, hostside = await pair(base, base, session)
        session.started()
        time.sleep(1.0)
        # a detach decided on another node (a pairing of this grant that
        # ended there before its session.started), made by its call
        assert terminal.q("SELECT bothy.terminal_session_detach(%s, %s)", session.id, session.grant) == [(True,)]
        wait_state(terminal, session.id, ("active", None), timeout=5)
        await device.ws.send(b"typing on")
        got = await hostside.bytes(9)
        await device.close()
        await hostside.close(1001)      # going away: the session is not over
        return got
    assert run(go()) == b"typing on"
    # then the device's close detached it again (a call of the node's after the close)
    poll_until(lambda: terminal.log(session.id)[-3:] ==
               ["session_detached", "session_activated", "session_detached"],
               timeout=5, what="the device's close detaching the session")
    assert node.metric('bothy_terminal_relay_decisions_total{decision="activate"}') == 1


def test_a_closed_session_closes_both_sides_with_1000(tnodes, terminal):
    node, base, session = one_session(tnodes, terminal)
    needs_control_plane(node)

    async def go():
        device, hostside = await pair(base, base, session)
        assert terminal.q("SELECT bothy.terminal_session_close(%s, %s)", session.person, session.id) == [("closed",)]
        return await asyncio.gather(device.closed(), hostside.closed())
    assert run(go()) == [1000, 1000]


# --- the whole path, with a host service's control connection ------------------

class ControlHost:
    """A host service's control connection (docs/protocol.md, "The
    terminal: control connection"): hello signed with its key, report, heartbeats, and the
    session.open it receives."""

    def __init__(self, key, host):
        self.key, self.host = key, host
        self.opens = asyncio.Queue()

    async def connect(self, base):
        self.ws = await websockets.connect(base + "/terminal/host", max_size=None)
        challenge = json.loads(await self.ws.recv())
        assert challenge["op"] == "challenge", challenge
        sig = ed25519_sign(self.key.seed, ("bothy-host-hello-v1\n%s\n%s" % (self.host, challenge["nonce"])).encode())
        await self.ws.send(json.dumps({"op": "hello", "host": self.host, "sig": b64e(sig), "version": "test"}))
        ready = json.loads(await self.ws.recv())
        assert ready["op"] == "ready" and ready["state"] == "active", ready
        await self.ws.send(json.dumps({"op": "report", "sessions": []}))
        self.task = asyncio.ensure_future(self._run(ready["heartbeat_ms"] / 1000.0))
        return ready

    async def _run(self, every):
        async def beat():
            while True:
                await asyncio.sleep(every)
                await self.ws.send('{"op":"heartbeat"}')
        beating = asyncio.ensure_future(beat())
        try:
            async for text in self.ws:
                msg = json.loads(text)
                if msg["op"] == "session.open":
                    await self.opens.put(msg)
        except websockets.ConnectionClosed:
            pass
        finally:
            beating.cancel()

    async def started(self, session, grant):
        await self.ws.send(json.dumps({"op": "session.started", "session": session, "grant": grant}))


def rest_post(base_http, path, token, body):
    request = urllib.request.Request(base_http + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": "Bearer " + token,
                                              "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode() or "{}")


def test_control_node_killed_while_the_pairing_lives_on_another_node(tnodes, terminal, keys, edge):
    nodes = tnodes(3)
    needs_control_plane(nodes[0])
    e = edge(nodes)
    host, owner, key = terminal.host()
    person_token = keys.person(owner, new_id())
    control_node, rest_node = nodes[0], nodes[1]

    async def open_session(control):
        """POST /v1/terminal/sessions on the REST node, session.open on the
        control connection, both streams through the edge: paired."""
        status, body = await asyncio.get_running_loop().run_in_executor(
            None, rest_post, "http://127.0.0.1:%d" % rest_node.port, "/v1/terminal/sessions",
            person_token, {"host": host})
        assert status == 201 and body["stream"] == "/terminal/stream/" + body["session"], body
        opened = await asyncio.wait_for(control.opens.get(), 5)
        sid, grant = opened["session"], opened["grant"]
        assert sid == body["session"]
        device = await Side.open(e.ws_base, sid, {"op": "identify", "side": "device", "token": body["token"]})
        assert await device.op() == "waiting"
        hostside = await Side.open(e.ws_base, sid, {"op": "identify", "side": "host", "host": host,
                                                    "session": sid, "grant": grant,
                                                    "sig": key.data_sig(sid, grant)})
        assert await device.op() == "paired" and await hostside.op() == "paired"
        await control.started(sid, grant)
        wait_state(terminal, sid, ("active", None), timeout=5)
        return sid, device, hostside

    async def go():
        control = ControlHost(key, host)
        await control.connect(ws_base(control_node))
        # the REST node counts the host once it heard the first report's announcement
        poll_until(lambda: connected_on(rest_node, keys, owner, host), timeout=5,
                   what="the REST node counts the host")
        # a session whose pairing lives elsewhere than the control connection
        for _ in range(8):
            sid, device, hostside = await open_session(control)
            if paired_on(nodes) is not control_node:
                break
            await device.close()
            await hostside.close()
            poll_until(lambda: paired_on(nodes) is None, timeout=5, what="the pairing gone")
        assert paired_on(nodes) not in (None, control_node)
        control_node.proc.kill()
        control_node.proc.wait()
        # the person keeps typing through the kill and after it
        for i in range(20):
            await device.ws.send(b"%02d" % i)
            assert await hostside.bytes(2) == b"%02d" % i
            await asyncio.sleep(0.25)
        wait_state(terminal, sid, ("active", None), timeout=10)
        # the end of the control connection detached nothing (docs/terminal.md,
        # "What the log tells the relay"): the row never left active
        log = terminal.log(sid)
        await device.close()
        await hostside.close(1001)      # going away: the session is not over
        return log
    assert run(go()) == ["session_opened", "session_started"]
