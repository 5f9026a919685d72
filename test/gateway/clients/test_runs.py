"""Run updates across two real gateways (D-M7-17-5): a bothy.run_changed
commit reaches the members on both nodes as run.updated carrying the run
document (bothy.run_document: the stored document with run, thread, agent
and version set), never a person who may not see the run's thread; a burst
is coalesced per node into few snapshots with strictly increasing versions
ending at the last; an older version after a newer one delivers nothing;
and --run-coalesce sets the window (0: every signal read at once)."""
import time

from cluster import FOREIGN_NODE, Client, World
from conftest import new_id, poll_until, run

UNREACHED = "bothy_gateway_signals_unreached_total"
SNAPSHOTS = "bothy_gateway_run_snapshots_total"


def document(run_id, thread, agent, version, extra):
    return dict(extra, run=run_id, thread=thread, agent=agent, version=version)


async def versions_until(client, last, timeout=10.0):
    """The versions of run.updated received until version `last` arrived."""
    seen = []
    deadline = time.monotonic() + timeout
    while not seen or seen[-1] < last:
        data = await client.event("run.updated", timeout=max(0.1, deadline - time.monotonic()))
        seen.append(data["version"])
    return seen


def test_run_update_reaches_members_on_both_nodes(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    member_a, member_b, outsider = new_id(), new_id(), new_id()
    place, thread = w.room(member_a, member_b)
    _, elsewhere = w.room(outsider)
    agent, run_id, other_run = w.agent(), new_id(), new_id()
    body = {"status": "running", "title": "Summarise", "steps": [1, 2]}

    async def go():
        ma = await Client.open(a.url, keys.person(member_a))
        mb = await Client.open(b.url, keys.person(member_b))
        out = await Client.open(b.url, keys.person(outsider))
        assert w.run_changed(run_id, thread, agent, 1, body) is True
        got = [await ma.event("run.updated"), await mb.event("run.updated")]
        # the sentinel: a run of a thread the outsider may see comes first
        assert w.run_changed(other_run, elsewhere, agent, 7, {"status": "queued"}) is True
        sentinel = await out.event("run.updated")
        # every delivery admits again: a removed member gets no later version
        assert w.leave(place, member_b) is True
        read_on_b, unreached_b = b.metric(SNAPSHOTS), b.metric(UNREACHED)
        assert w.run_changed(run_id, thread, agent, 2, body) is True
        assert (await ma.event("run.updated"))["version"] == 2
        # b holds no member now: v2's reach leaves it out, b reads nothing
        poll_until(lambda: b.metric(UNREACHED) == unreached_b + 1, timeout=5, what="B heard v2")
        assert b.metric(SNAPSHOTS) == read_on_b
        removed = await mb.before_ack()
        for c in (ma, mb, out):
            await c.close()
        return got, sentinel, removed
    got, sentinel, removed = run(go())
    expected = document(run_id, thread, agent, 1, body)
    assert got == [expected, expected]
    assert sentinel == document(other_run, elsewhere, agent, 7, {"status": "queued"})
    assert removed == []


def test_a_burst_is_coalesced_and_an_older_version_delivers_nothing(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    member_a, member_b = new_id(), new_id()
    _, thread = w.room(member_a, member_b)
    agent, run_id = w.agent(), new_id()

    async def go():
        ma = await Client.open(a.url, keys.person(member_a))
        mb = await Client.open(b.url, keys.person(member_b))
        w.run_versions(run_id, thread, agent, range(1, 31))
        seen = [await versions_until(ma, 30), await versions_until(mb, 30)]
        # an older version: not stored, not signalled ...
        assert w.run_changed(run_id, thread, agent, 12, {"step": 12}) is False
        # ... and a late signal of an older version read again delivers nothing
        w.q("SELECT bothy.publish('gateway.run', jsonb_build_object('node', %s::text, "
            "'run', %s::text, 'thread', %s::text, 'version', 12))", FOREIGN_NODE, run_id, thread)
        # the sentinel: the next version is the next event on both nodes
        assert w.run_changed(run_id, thread, agent, 31, {"step": 31}) is True
        after = [(await ma.event("run.updated"))["version"], (await mb.event("run.updated"))["version"]]
        await ma.close()
        await mb.close()
        return seen, after
    seen, after = run(go())
    for versions in seen:
        assert versions[-1] == 30
        assert all(x < y for x, y in zip(versions, versions[1:])), versions
        assert len(versions) <= 10, versions       # far fewer snapshots than commits
    assert after == [31, 31]
    for node in (a, b):
        assert node.metric("bothy_gateway_runs_coalesced_total") >= 1


def test_the_coalescing_window_is_the_run_coalesce_option(gateways, keys, pg):
    """Ten versions 100 ms apart: a node with --run-coalesce 0 reads each at
    once, one with a 3 s window sends the first at once and the rest in one
    snapshot at the window's end."""
    eager = gateways(1, extra=["--run-coalesce", "0"])
    slow = gateways(1, extra=["--run-coalesce", "3000"])
    w = World(pg)
    on_eager, on_slow = new_id(), new_id()
    _, thread = w.room(on_eager, on_slow)
    agent, run_id = w.agent(), new_id()

    async def go():
        e = await Client.open(eager.url, keys.person(on_eager))
        s = await Client.open(slow.url, keys.person(on_slow))
        w.run_versions(run_id, thread, agent, range(1, 11), pause=0.1)
        seen = [await versions_until(e, 10), await versions_until(s, 10)]
        await e.close()
        await s.close()
        return seen
    eager_seen, slow_seen = run(go())
    assert len(eager_seen) >= 7, eager_seen
    assert all(x < y for x, y in zip(eager_seen, eager_seen[1:])), eager_seen
    assert len(slow_seen) == 2 and slow_seen[-1] == 10, slow_seen
