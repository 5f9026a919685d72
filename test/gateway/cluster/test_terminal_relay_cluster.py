"""The terminal relay with two real nodes deciding about one session:
both sides reaching the node before its terminal.session_open (the
fan-out worker stopped with SIGSTOP, the signal delivered late, then again
and reordered) still pair from the row (RelayExpectation, D-M2-47-21) and
nothing a late signal says changes the pairing; the two sides of one
session sent to two different nodes (a misrouted edge) are each a lone
side, get 4102, and the opening ends once with open_timeout although both
nodes may decide (D-M2-47-8, 14), and a side still alone on one node when
the other's end reaches it gets 4102 too; a session detached when its device leaves
and attached again with a fresh grant (the host's old data connection
waiting meanwhile); a lone device of a detached session gets 4102 and the
session stays detached; and the expectation of a host with
require_local_confirm staying on a node after a pairing elsewhere until
its deadline, where another host's goes at once (D-M2-47-3).
"""
import asyncio
import os
import signal
import time

from conftest import keys, new_id, poll_until  # noqa: F401  (keys is a fixture)
from terminal_streams import (OPEN_S, Side, pair, run, terminal, tnodes, tpg,  # noqa: F401
                              wait_state, ws_base)


def publish(pg, kind, host, session):
    pg.query("SELECT bothy.publish(%s, jsonb_build_object('host_id', %s::text, 'session_id', %s::text))",
             kind, host, session)


def received(node, kind):
    return node.metric('bothy_gateway_signals_received_total{kind="%s"}' % kind)


def test_sides_before_the_signal_pair_and_late_signals_change_nothing(tnodes, terminal, tpg):
    a, b = tnodes(2)
    host, owner, _ = terminal.host()
    worker = tpg.wait_fanout()
    opens = received(b, "terminal.session_open")

    async def go():
        os.kill(worker, signal.SIGSTOP)     # no signal leaves the database meanwhile
        try:
            session = terminal.open(host, owner)
            device, hostside = await pair(ws_base(b), ws_base(b), session)
            first = received(b, "terminal.session_open") == opens      # the pairing came first
        finally:
            os.kill(worker, signal.SIGCONT)
        # the late signals: open, then the pairing's (b's, staged while it was stopped);
        # a read only an expectation, which the pairing elsewhere removed
        poll_until(lambda: received(a, "terminal.session_paired") == 1, timeout=5,
                   what="the late terminal.session_paired")
        poll_until(lambda: a.metric("bothy_terminal_relay_slots") == 0, timeout=5,
                   what="a's expectation gone")
        # the same again, and reordered: nothing changes on b
        publish(tpg, "terminal.session_open", host, session.id)
        publish(tpg, "terminal.session_paired", host, session.id)
        publish(tpg, "terminal.session_open", host, session.id)
        poll_until(lambda: received(b, "terminal.session_open") == opens + 3, timeout=5,
                   what="the repeated signals")
        await device.ws.send(b"after")
        got = await hostside.bytes(5)
        await hostside.ws.send(b"back")
        back = await device.bytes(4)
        await device.close()
        await hostside.close()
        return first, got, back
    first, got, back = run(go())
    assert first and (got, back) == (b"after", b"back")
    assert b.metric("bothy_terminal_relay_pairings_total") == 1
    # the repeated open left a side-less expectation on a: it goes at its deadline
    poll_until(lambda: a.metric("bothy_terminal_relay_slots") == 0, timeout=2 * OPEN_S + 3,
               what="a's repeated expectation gone at its deadline")


def test_two_nodes_two_lone_sides_one_end(tnodes, terminal):
    a, b = tnodes(2)
    host, owner, _ = terminal.host()
    sessions = [terminal.open(host, owner) for _ in range(3)]

    async def lone(base, identify, sid):
        side = await Side.open(base, sid, identify)
        assert await side.op() == "waiting"
        return await side.closed(timeout=OPEN_S + 3)

    async def go():
        # each session's device on a, its host on b, identified together
        return await asyncio.gather(*[c for s in sessions for c in (
            lone(ws_base(a), s.device_identify(), s.id), lone(ws_base(b), s.host_identify(), s.id))])
    assert run(go()) == [4102] * 6
    for s in sessions:
        wait_state(terminal, s.id, ("closed", "open_timeout"))
        assert terminal.log(s.id) == ["session_opened", "session_closed"]
    # both nodes may decide each end; the compare-and-swap lets one write it
    poll_until(lambda: a.metric('bothy_terminal_relay_decisions_total{decision="open_timeout"}') +
               b.metric('bothy_terminal_relay_decisions_total{decision="open_timeout"}') == 3,
               timeout=5, what="three ends written")
    assert a.metric('bothy_terminal_relay_unpaired_total{side="device"}') == 3
    assert b.metric('bothy_terminal_relay_unpaired_total{side="host"}') == 3
    assert a.http("/readyz")[0] == b.http("/readyz")[0] == 200


def test_a_lone_side_hears_the_open_timeout_another_node_wrote(tnodes, terminal):
    """The race of the test above made to happen: the host's side on b is
    alone half an open_timeout longer than the device's on a, so b decides
    and writes the end while a's own timer still runs; a hears it through
    the terminal log and closes its side with 4102 all the same, counted,
    without a decision of its own."""
    a, b = tnodes(2)
    host, owner, _ = terminal.host()
    session = terminal.open(host, owner)

    async def go():
        hostside = await Side.open(ws_base(b), session.id, session.host_identify())
        assert await hostside.op() == "waiting"
        await asyncio.sleep(OPEN_S / 2)
        joined = time.monotonic()       # a's own timer cannot run out before OPEN_S after this
        device = await Side.open(ws_base(a), session.id, session.device_identify())
        assert await device.op() == "waiting"
        codes = await asyncio.gather(hostside.closed(timeout=OPEN_S + 3),
                                     device.closed(timeout=OPEN_S + 3))
        return codes, time.monotonic() - joined
    codes, device_alone = run(go())
    assert codes == [4102, 4102]
    assert device_alone < OPEN_S, "a's side waited for its own timer: %.2f s" % device_alone
    wait_state(terminal, session.id, ("closed", "open_timeout"))
    assert a.metric('bothy_terminal_relay_unpaired_total{side="device"}') == 1
    assert b.metric('bothy_terminal_relay_unpaired_total{side="host"}') == 1
    assert a.metric('bothy_terminal_relay_decisions_total{decision="open_timeout"}') == 0
    assert b.metric('bothy_terminal_relay_decisions_total{decision="open_timeout"}') == 1
    assert "terminal relay side unpaired" in a.log


async def detached(base, terminal, session):
    """A session paired on one node, started, and left by its device: the
    host's data connection (told waiting) once the row is detached."""
    device, hostside = await pair(base, base, session)
    session.started()
    # the device leaves: the host is told waiting and waits (no timer)
    await device.close()
    assert await hostside.op() == "waiting"
    # detached once the relay knows the grant started (the log, or its deadline's read)
    wait_state(terminal, session.id, ("detached", None), timeout=2 * OPEN_S + 5)
    return hostside


def test_detach_and_attach(tnodes, terminal):
    node, = tnodes(1)
    base = ws_base(node)
    host, owner, _ = terminal.host()
    session = terminal.open(host, owner)

    async def go():
        hostside = await detached(base, terminal, session)
        fresh = terminal.attach(session)
        device2 = await Side.open(base, session.id, fresh.device_identify())
        assert await device2.op() == "waiting"
        host2 = await Side.open(base, session.id, fresh.host_identify())
        assert await device2.op() == "paired" and await host2.op() == "paired"
        assert terminal.q("SELECT bothy.terminal_session_started(%s, %s)", fresh.id, fresh.grant) == [(True,)]
        await device2.ws.send(b"again")
        got = await host2.bytes(5)
        # the old grant's data connection still waits; the old token opens nothing
        old = await Side.open(base, session.id, session.device_identify())
        old_code = await old.closed()
        for side in (device2, host2, hostside):
            await side.close()
        return got, old_code
    got, old_code = run(go())
    assert got == b"again" and old_code == 4001
    assert terminal.log(session.id)[:4] == ["session_opened", "session_started", "session_detached",
                                            "session_attached"]


def test_a_lone_device_of_a_detached_session_gets_4102_and_the_session_stays_detached(tnodes, terminal):
    node, = tnodes(1)
    base = ws_base(node)
    host, owner, _ = terminal.host()
    session = terminal.open(host, owner)

    async def go():
        hostside = await detached(base, terminal, session)
        # an attach whose host never opens its data connection: the old
        # grant's host side waits on and does not pair with the new device
        fresh = terminal.attach(session)
        lone = await Side.open(base, session.id, fresh.device_identify())
        assert await lone.op() == "waiting"
        code = await lone.closed(timeout=OPEN_S + 3)
        await hostside.close(1001)
        return code
    before = node.metric('bothy_terminal_relay_unpaired_total{side="device"}')
    assert run(go()) == 4102
    assert node.metric('bothy_terminal_relay_unpaired_total{side="device"}') == before + 1
    # no open_timeout: that end is a compare-and-swap on opening (D-M2-47-8, 14)
    assert terminal.state(session.id) == ("detached", None)
    assert terminal.log(session.id) == ["session_opened", "session_started", "session_detached",
                                        "session_attached"]
    assert node.http("/readyz")[0] == 200


def test_an_expectation_of_a_local_confirm_host_stays_until_its_deadline_after_a_pairing_elsewhere(
        tnodes, terminal):
    """D-M2-47-3: the node that does not relay a session drops its side-less
    expectation when it hears terminal.session_paired, except for a host
    with require_local_confirm, whose expectation stays until its deadline
    (the grant's expiry plus open_timeout)."""
    a, b = tnodes(2)
    owner = new_id()
    plain, _, _ = terminal.host(owner)
    confirming, _, _ = terminal.host(owner, local_confirm=True)

    def slots(node):
        return node.metric("bothy_terminal_relay_slots")

    async def go():
        sessions = [terminal.open(plain, owner), terminal.open(confirming, owner)]
        opened = time.monotonic()
        # terminal.session_open registers the expectation on every node
        poll_until(lambda: slots(a) == slots(b) == 2, timeout=5, what="both expectations on both nodes")
        sides = [await pair(ws_base(a), ws_base(a), s) for s in sessions]
        # b heard both pairings: the plain host's expectation went at once
        poll_until(lambda: slots(b) == 1, timeout=3, what="the plain host's expectation gone")
        # the confirming host's stays, well past the pairing, until its deadline
        deadline = opened + 2 * OPEN_S
        while time.monotonic() < deadline - 1.0:
            assert slots(b) == 1
            await asyncio.sleep(0.2)
        poll_until(lambda: slots(b) == 0, timeout=5, what="the expectation gone at its deadline")
        for device, hostside in sides:
            await device.close()
            await hostside.close()
    run(go())
