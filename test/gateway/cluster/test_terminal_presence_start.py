"""A node that starts counts a host of another node from that host's next
heartbeat (docs/terminal.md, "Host presence across nodes"; D-M2-47-6):
presence across nodes is what a node heard announced, and the node of a
control connection announces it after its first report and after each
heartbeat, so a node started after that first announcement has heard
nothing of it yet.  Until the host's next heartbeat an open through the
new node answers 409 host_unavailable and GET /v1/terminal/hosts says
not connected; after it, 201.  (docs/operations.md, "The gateways:
rolling restarts", tells operators to wait one heartbeat interval.)

The race is made, not waited for: the host sends no heartbeat on its own
(the fake host's beats are off), so nothing is announced between the
second node's start and the open; the heartbeat interval is 5 s here
(window 15 s), so node A does not close the silent host while the
second node starts.
"""
import pytest

from conftest import active_host, connected_on, poll_until, run, terminal_call, terminal_instance

SESSIONS = "/v1/terminal/sessions"


@pytest.fixture(scope="module")
def pg():
    inst = terminal_instance("terminal-presence-start-pg",
                             extra=["bothy.terminal_host_heartbeat_interval = '5s'"])
    yield inst
    inst.close()


def test_a_node_started_later_counts_a_host_of_another_node_from_its_next_heartbeat(
        gateways, tworld, keys):
    a = gateways(1)

    async def go():
        host, owner, conn = await active_host(tworld, a, heartbeats=False)
        assert conn.ready["heartbeat_ms"] == 5000, conn.ready
        b = gateways(1)     # started after the host's first announcement
        before = await terminal_call(b, "POST", SESSIONS, keys.person(owner), {"host": host})
        counted_before = connected_on(b, keys, owner, host)
        await conn.send({"op": "heartbeat"})
        poll_until(lambda: connected_on(b, keys, owner, host), timeout=5,
                   what="B counts the host after its heartbeat")
        after = await terminal_call(b, "POST", SESSIONS, keys.person(owner), {"host": host})
        code = conn.close_code
        await conn.close()
        return before, counted_before, after, code
    before, counted_before, after, code = run(go())
    assert before == (409, {"error": "host_unavailable"}), before
    assert not counted_before
    assert after[0] == 201, after
    assert code is None, "node A closed the silent host: the window was too short for the test"
