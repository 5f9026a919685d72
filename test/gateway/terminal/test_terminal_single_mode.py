"""The terminal in single mode with one node (D-M2-47-2, 4): the node
stages no signal of its own decisions and acts on them through the same
handler at once: session.open right after the open (no probation), the
log tail woken by its own transitions (the poll interval here is 10 s, so
a session.close within a second came from the node's own wake-up), the
duplicate probe of two connections of one host on the one node with its
verdict handed to the local handler; what an application decides (the
confirmation, a disable) still arrives as the database's signals."""
import asyncio
import time

import pytest

from conftest import active_host, node_base, run, terminal_call, terminal_instance
from fakehost import ControlConnection
from modes import listener, sentinel  # noqa: F401  (listener: a fixture)

SESSIONS = "/v1/terminal/sessions"


@pytest.fixture(scope="module")
def pg():
    inst = terminal_instance("terminal-single-pg", mode="single",
                             extra=["bothy.terminal_log_poll_interval = '10s'",
                                    "bothy.terminal_open_timeout = '30s'"])
    yield inst
    inst.close()



def test_single_mode_acts_on_its_own_decisions_and_stages_nothing(gateways, tworld, keys, pg, listener):
    node = gateways(1)

    async def go():
        host, owner, conn = await active_host(tworld, node)
        start = time.monotonic()
        status, opened = await terminal_call(node, "POST", SESSIONS, keys.person(owner), {"host": host})
        assert status == 201, opened
        sopen = await conn.expect("session.open", timeout=3)
        open_after = time.monotonic() - start
        await conn.started(sopen["session"], sopen["grant"])
        for _ in range(50):
            if tworld.session(opened["session"])[0] == "active":
                break
            await asyncio.sleep(0.05)
        start = time.monotonic()
        assert (await terminal_call(node, "DELETE", "%s/%s" % (SESSIONS, opened["session"]),
                           keys.person(owner)))[0] == 204
        close = await conn.expect("session.close", timeout=3)
        close_after = time.monotonic() - start
        tworld.disable(host)
        code = await conn.closed()
        return host, opened, sopen, open_after, close, close_after, code
    host, opened, sopen, open_after, close, close_after, code = run(go())
    assert sopen["session"] == opened["session"] and open_after < 1.0
    assert tworld.session(opened["session"])[:2] == ("closed", "closed_by_device")
    assert close == {"op": "session.close", "session": opened["session"]} and close_after < 1.0
    assert code == 4111
    heard = sentinel(pg, listener)
    kinds = [p["kind"] for p in heard]
    # the confirmation's and the disable's (applications), nothing of the node's
    assert set(kinds) <= {"terminal.log", "terminal.host_close"}, kinds
    assert kinds.count("terminal.host_close") == 1 and kinds.count("terminal.log") >= 1
    assert node.metric("bothy_gateway_signals_published_total") == 0
    assert node.metric("bothy_terminal_presence_announced_total") == 0


@pytest.mark.parametrize("answers", [False, True], ids=["unanswered", "answered"])
def test_two_connections_of_one_host_on_the_one_node(gateways, tworld, keys, pg, listener, answers):
    node = gateways(1)

    async def go():
        host, owner, old = await active_host(tworld, node)
        old.answer_probes = answers
        copy = await ControlConnection(node_base(node), old.key).connect()
        await copy.hello(host)
        await copy.report()
        copy.start_heartbeats()
        old_code = await old.closed(timeout=5)
        if answers:
            copy_code = await copy.closed(timeout=5)
        else:
            # the newer one was held while the probe ran; now it gets the opens
            status, opened = await terminal_call(node, "POST", SESSIONS, keys.person(owner), {"host": host})
            assert status == 201, opened
            assert (await copy.expect("session.open", timeout=3))["session"] == opened["session"]
            copy_code = None
        await copy.close()
        return host, old, old_code, copy_code
    host, old, old_code, copy_code = run(go())
    assert len(old.probes) == 1
    if answers:
        assert (old_code, copy_code) == (4112, 4110) and tworld.host_state(host) == "pairing"
    else:
        assert (old_code, copy_code) == (4009, None) and tworld.host_state(host) == "active"
    kinds = [p["kind"] for p in sentinel(pg, listener)]
    assert "terminal.host_close" not in kinds, kinds
    assert node.metric("bothy_gateway_signals_published_total") == 0
