"""Reads on a hot standby (docs/standbys.md): a primary and a streaming
standby made with pg_basebackup -R, two real nodes with --database-read.
A delivery's reads go to the standby once it has replayed the fence of the
signal (the fan-out worker's wal.fence, docs/signals.md); with replay held
back by recovery_min_apply_delay a member removed before the signal never
receives it (the standby still shows the membership, so only the fence
keeps it out) and the fallback to the primary shows in /metrics; a replay
paused for fewer reads than --database-read-misses keeps the standby in
rotation, for that many it leaves and comes back; the fence waits of a
quiet machine; the standby killed in a stream and started again; the
standby promoted; a wrong or unreachable --database-read at start, and a
bad --database-read-misses.  The bothy workers do not run on the standby
(they start only once recovery ended)."""
import os
import signal
import subprocess
import tempfile
import time

import pytest

from cluster import Client, World
from conftest import (GATEWAY, PG_CONF, WORK, Gateway, Instance, new_id, poll_until,
                      run, seal)

BIN = subprocess.run(["pg_config", "--bindir"], stdout=subprocess.PIPE, text=True,
                     check=True).stdout.strip()
PORT = os.environ.get("BOTHY_TEST_PGPORT", "54329")

READS = "bothy_gateway_standby_reads_total"
FALLBACK = 'bothy_gateway_standby_fallbacks_total{reason="%s"}'
IN_ROTATION = 'bothy_gateway_standby_in_rotation{standby="1"}'
WAITS = "bothy_gateway_standby_fence_wait_seconds_count"
WAIT_BUCKET = 'bothy_gateway_standby_fence_wait_seconds_bucket{le="%s"}'
LAG = 'bothy_gateway_standby_lag_bytes{standby="1"}'
MISSES = 'bothy_gateway_standby_fence_misses{standby="1"}'


class Standby:
    """A streaming hot standby of primary: pg_basebackup -R into a
    directory of its own, its socket there, the same port number."""

    def __init__(self, primary):
        self.dir = tempfile.mkdtemp(prefix="standby-", dir=WORK)
        self.data = os.path.join(self.dir, "data")
        subprocess.run([os.path.join(BIN, "pg_basebackup"), "-h", primary.dir, "-p", PORT,
                        "-U", "postgres", "-D", self.data, "-R", "-X", "stream", "-c", "fast"], check=True)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("unix_socket_directories = '%s'\nhot_standby = on\n" % self.dir)
        self.conninfo = "host=%s port=%s dbname=bothy_test user=postgres" % (self.dir, PORT)

    def ctl(self, *args):
        subprocess.run([os.path.join(BIN, "pg_ctl"), "-D", self.data, "-l",
                        os.path.join(self.dir, "server.log"), "-w", *args],
                       check=True, stdout=subprocess.DEVNULL)

    def start(self):
        self.ctl("start")

    def crash(self):
        self.ctl("-m", "immediate", "stop")

    def stop(self):
        subprocess.run([os.path.join(BIN, "pg_ctl"), "-D", self.data, "-m", "fast", "-w",
                        "stop"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def promote(self):
        self.ctl("promote")

    def query(self, sql, *args):
        import psycopg2
        conn = psycopg2.connect(host=self.dir, port=int(PORT), user="postgres",
                                dbname="bothy_test")
        conn.autocommit = True
        try:
            cur = conn.cursor()
            cur.execute(sql, args)
            return cur.fetchall()
        finally:
            conn.close()

    def delay(self, value):
        """recovery_min_apply_delay, reloaded and seen by a new session."""
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("recovery_min_apply_delay = '%s'\n" % value)
        self.query("SELECT pg_reload_conf()")
        poll_until(lambda: self.query("SHOW recovery_min_apply_delay")[0][0] == value,
                   timeout=10, what="recovery_min_apply_delay " + value)

    @property
    def log(self):
        with open(os.path.join(self.dir, "server.log")) as f:
            return f.read()


@pytest.fixture(scope="module")
def primary():
    inst = Instance("primary", PG_CONF)
    inst.start()
    # Until the fan-out worker runs, a producer notifies by itself, without
    # a fence (docs/signals.md, "The fence"), and a node reads that signal's
    # delivery on the primary: a test that counts standby reads would find
    # none (a CI run opened its nodes and changed its run 0.3 s before the
    # worker started).
    inst.wait_fanout()
    yield inst
    inst.close()


@pytest.fixture(scope="module")
def standby(primary):
    sb = Standby(primary)
    sb.start()
    yield sb
    sb.stop()


def replayed(primary, standby):
    """Waits until the standby has replayed everything the primary wrote."""
    lsn = primary.query("SELECT pg_current_wal_lsn()::text")[0][0]
    poll_until(lambda: standby.query("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", lsn)[0][0],
               timeout=10, what="standby replay")


async def read_again(primary, standby, node, client, run):
    """Once the standby caught up and is back in node's rotation (after
    --database-read-retry), the next version of run (run, thread, agent,
    version) reaches client through a read on the standby."""
    replayed(primary, standby)
    poll_until(lambda: node.metric(IN_ROTATION) == 1, timeout=10, what="standby back")
    before = node.metric(READS)
    assert World(primary).run_changed(*run, {"s": run[3]}) is True
    assert (await client.event("run.updated"))["version"] == run[3]
    assert node.metric(READS) > before


def standby_metrics(node):
    """The node's standby figures alone: what a failed assertion shows."""
    return {k: v for k, v in node.metrics().items() if "standby" in k}


def a_run(primary, standby):
    """A thread of one new member and a run of a new agent in it, the
    standby caught up: (world, member, thread, agent, run)."""
    w = World(primary)
    member = new_id()
    _, thread = w.room(member)
    agent, run_id = w.agent(), new_id()
    replayed(primary, standby)
    return w, member, thread, agent, run_id


def a_thread(primary, standby, node, n):
    """A thread of n new persons, the standby caught up and in node's
    rotation: the thread, then the persons."""
    persons = [new_id() for _ in range(n)]
    _, thread = World(primary).room(*persons)
    replayed(primary, standby)
    poll_until(lambda: node.metric(IN_ROTATION) == 1, timeout=10, what="standby in rotation")
    return (thread, *persons)


def reading_node(name, primary, standby, keys, *opts):
    """A node reading on standby with opts, once the standby is in its rotation."""
    node = Gateway(name, primary, keys, ["--database-read", standby.conninfo, *opts]).start()
    poll_until(lambda: node.metric(IN_ROTATION) == 1, timeout=10, what="standby in rotation")
    return node


@pytest.fixture
def nodes(primary, standby, keys):
    made = []

    def make(n=2, read=None, extra=()):
        for i in range(n):
            opts = ["--database-read", read or standby.conninfo, "--database-read-wait", "300",
                    "--database-read-retry", "500", *extra]
            made.append(Gateway("standby-node%d" % i, primary, keys, opts).start())
        return made
    yield make
    for node in made:
        node.stop()


def test_reads_on_the_standby_and_a_removed_member_never_receives_under_lag(
        primary, standby, nodes, keys):
    # one miss takes the standby out here (the default 3: the tests below)
    a, b = nodes(2, extra=["--database-read-misses", "1"])
    w = World(primary)
    # stay_b keeps node b in the reach of every version (docs/signals.md,
    # "Reach"), so b reads each one, the removed member's too
    member_a, member_b, stay_b = new_id(), new_id(), new_id()
    place, thread = w.room(member_a, member_b, stay_b)
    agent, run_id = w.agent(), new_id()
    replayed(primary, standby)
    for node in (a, b):
        poll_until(lambda: node.metric(IN_ROTATION) == 1, timeout=10, what="standby in rotation")

    async def go():
        ma = await Client.open(a.url, keys.person(member_a))
        mb = await Client.open(b.url, keys.person(member_b))
        sb = await Client.open(b.url, keys.person(stay_b))
        assert w.run_changed(run_id, thread, agent, 1, {"s": 1}) is True
        assert (await ma.event("run.updated"))["version"] == 1
        assert (await mb.event("run.updated"))["version"] == 1
        assert (await sb.event("run.updated"))["version"] == 1
        # the standby answered both nodes' reads, after a fence wait each
        for node in (a, b):
            assert node.metric(READS) >= 1, standby_metrics(node)
            assert node.metric(WAITS) >= 1
            assert node.metric(FALLBACK % "wait") == 0

        # replay held back 3 s: the removal and the next version are not
        # visible on the standby when the nodes hear the signal
        standby.delay("3s")
        waits = [a.metric(FALLBACK % "wait"), b.metric(FALLBACK % "wait")]
        assert w.leave(place, member_b) is True
        assert w.run_changed(run_id, thread, agent, 2, {"s": 2}) is True
        assert (await ma.event("run.updated", timeout=5))["version"] == 2
        assert (await sb.event("run.updated", timeout=5))["version"] == 2
        poll_until(lambda: b.metric(FALLBACK % "wait") > waits[1], timeout=5,
                   what="B's read fell back to the primary")
        # the lag, computed at the scrape: the fence is past the replay seen,
        # once the primary confirmed it (its answer may come after the fallback)
        poll_until(lambda: a.metric(LAG) > 0 and b.metric(LAG) > 0, timeout=5,
                   what="the lag of a confirmed fence")
        # the standby still admits member_b: only the fence kept it out
        assert standby.query("SELECT count(*) FROM bothy.thread_audience(%s::uuid, "
                             "ARRAY[%s::uuid])", thread, member_b)[0][0] == 1
        assert await mb.before_ack() == []
        assert a.metric(FALLBACK % "wait") > waits[0]
        # lagging past the bound: out for a while (the record, not the gauge,
        # which --database-read-retry may have turned back already)
        assert "standby out of rotation" in a.log and "reason=lagging misses=1" in a.log
        # replay resumed, the standby back in rotation after --database-read-retry
        standby.delay("0")
        await read_again(primary, standby, a, ma, (run_id, thread, agent, 3))
        assert await mb.before_ack() == []
        for c in (ma, mb, sb):
            await c.close()
    try:
        run(go())
    finally:
        standby.delay("0")
    # the workers stay idle on a standby: they start only when recovery ends
    assert "bothy fan-out worker started" not in standby.log
    assert "terminated by signal" not in standby.log


def test_the_standby_killed_mid_stream_then_started_again(primary, standby, nodes, keys):
    (a,) = nodes(1)
    w = World(primary)
    member = new_id()
    _, thread = w.room(member)
    agent, run_id = w.agent(), new_id()
    replayed(primary, standby)

    async def go():
        m = await Client.open(a.url, keys.person(member))
        last = 0
        for version in range(1, 41):
            if version == 15:
                standby.crash()
            assert w.run_changed(run_id, thread, agent, version, {"s": version}) is True
            time.sleep(0.02)
        # every version once at most, in order, ending at the last
        deadline = time.monotonic() + 10
        while last < 40:
            got = (await m.event("run.updated", timeout=max(0.1, deadline - time.monotonic())))
            assert got["version"] > last
            last = got["version"]
        assert await m.before_ack() == []
        assert a.metric(FALLBACK % "error") + a.metric(FALLBACK % "out") >= 1
        poll_until(lambda: a.metric(IN_ROTATION) == 0, timeout=5, what="standby out")
        standby.start()
        await read_again(primary, standby, a, m, (run_id, thread, agent, 41))
        await m.close()
    run(go())


FOREIGN_NODE = "01890a5d-ac96-774b-bcce-b302099a8057"


def typing_of(thread, typer):
    return ('{"kind":"gateway.typing","node":"%s","thread":"%s","principal":"%s"}'
            % (FOREIGN_NODE, thread, typer))


def notify_from_one_session(primary, payloads):
    """payloads, signed, notified in this order by one session in one
    transaction: one be_pid, as the fan-out worker sends a batch."""
    key = primary.channel_key()
    conn = primary.connect(autocommit=False)
    cur = conn.cursor()
    for payload in payloads:
        cur.execute("SELECT pg_notify('ephemeral', %s)", (seal(key, payload),))
    conn.commit()
    conn.close()


def test_a_payload_of_the_fence_process_not_understood_forgets_the_fence(
        primary, standby, nodes, keys):
    """One session notifies a wal.fence (lsn 1, replayed long ago), then a
    typing: its read goes to the standby under that fence.  With a payload
    the node drops as malformed between the two, the node forgets the fence
    and the typing's read goes to the primary (docs/signals.md, "The
    fence")."""
    (a,) = nodes(1)
    thread, watcher, typer1, typer2 = a_thread(primary, standby, a, 3)

    def notify(typer, between):
        notify_from_one_session(primary, ['{"kind":"wal.fence","lsn":1}', *between,
                                          typing_of(thread, typer)])

    async def go():
        m = await Client.open(a.url, keys.person(watcher))
        reads = a.metric(READS)
        notify(typer1, [])
        assert (await m.event("typing.started"))["principal"] == typer1
        assert a.metric(READS) > reads              # the fence held: a standby read
        reads = a.metric(READS)
        notify(typer2, ['{"kind":"wal.fence","lsn":"1"}'])
        assert (await m.event("typing.started"))["principal"] == typer2
        assert a.metric(READS) == reads             # forgotten: the primary read it
        await m.close()
    run(go())
    assert 'signal dropped as malformed' in a.log


def test_a_fence_from_the_future_keeps_the_standby_in_rotation(primary, standby, nodes, keys):
    """A wal.fence beyond anything the primary wrote (a forgery signed with
    the key, or a bug): the typing after it is delivered, read on the
    primary once the standby missed the fence, and the standby stays in
    rotation, because the primary says it never flushed that position; the
    lag gauge keeps to confirmed fences (docs/security.md, standbys.md
    "A fence from the future")."""
    (a,) = nodes(1)
    thread, watcher, typer = a_thread(primary, standby, a, 2)
    async def go():
        m = await Client.open(a.url, keys.person(watcher))
        waited = a.metric(FALLBACK % "wait")
        notify_from_one_session(primary, ['{"kind":"wal.fence","lsn":%d}' % 2 ** 62,
                                          typing_of(thread, typer)])
        assert (await m.event("typing.started"))["principal"] == typer
        assert a.metric(FALLBACK % "wait") == waited + 1     # the standby missed it
        await m.close()
    run(go())
    poll_until(lambda: a.metric("bothy_gateway_standby_fences_refused_total") == 1, timeout=5,
               what="the primary asked, the fence refused")
    assert a.metric(IN_ROTATION) == 1
    assert a.metric(LAG) < 2 ** 40
    assert "standby out of rotation" not in a.log


def test_a_typing_here_reads_on_the_primary_and_is_not_counted_unfenced(
        primary, standby, nodes, keys):
    """A client of the node types: the node delivers it to the thread's
    other persons here before its signal exists, reading on the primary,
    and counts no fallback: no fence can come with it (docs/standbys.md,
    "What goes where").  A typing signal with no fence (notified by a
    session of its own, as a producer's fallback NOTIFY) reads on the
    primary too, and is counted as unfenced."""
    (a,) = nodes(1)
    thread, typer, watcher, other = a_thread(primary, standby, a, 3)

    async def go():
        t = await Client.open(a.url, keys.person(typer))
        m = await Client.open(a.url, keys.person(watcher))
        unfenced, reads = a.metric(FALLBACK % "unfenced"), a.metric(READS)
        own = a.metric("bothy_gateway_signals_own_total")
        await t.send({"op": "typing", "thread": thread})
        assert (await m.event("typing.started"))["principal"] == typer
        # its signal came back (multi mode) and was known as the node's own
        poll_until(lambda: a.metric("bothy_gateway_signals_own_total") > own, timeout=5,
                   what="the node's own typing signal heard")
        assert a.metric(FALLBACK % "unfenced") == unfenced
        assert a.metric(READS) == reads
        primary.notify_signed(typing_of(thread, other))
        assert (await m.event("typing.started"))["principal"] == other
        assert a.metric(FALLBACK % "unfenced") == unfenced + 1
        assert a.metric(READS) == reads
        for c in (t, m):
            await c.close()
    run(go())


def server_pids(standby):
    """The standby's postmaster and its children."""
    with open(os.path.join(standby.data, "postmaster.pid")) as f:
        postmaster = int(f.readline())
    pids = [postmaster]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == postmaster:
                        pids.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return pids


def test_a_hung_standby_holds_a_read_no_longer_than_the_wait(primary, standby, keys):
    """The standby stopped (SIGSTOP: its connections stay open, nothing
    answers): each delivery's read goes to the primary once
    --database-read-wait has passed, long before --db-timeout.  The first
    two hold the node's two standby connections with checks that never
    answer; the third finds none free, which counts as a miss too (every
    connection held past its bound), so the standby leaves the rotation at
    the default three misses in a row (docs/standbys.md, "Waits,
    fallbacks, rotation")."""
    w, member, thread, agent, run_id = a_run(primary, standby)
    node = reading_node("standby-hung", primary, standby, keys, "--database-read-wait", "200",
                        "--database-read-retry", "1000", "--db-timeout", "20000")
    pids = []
    try:
        async def go():
            m = await Client.open(node.url, keys.person(member))
            assert w.run_changed(run_id, thread, agent, 1, {"s": 1}) is True
            assert (await m.event("run.updated"))["version"] == 1
            pids[:] = server_pids(standby)
            for pid in pids:
                os.kill(pid, signal.SIGSTOP)
            for version in (2, 3, 4):
                fallbacks = node.metric(FALLBACK % "wait") + node.metric(FALLBACK % "busy")
                started = time.monotonic()
                assert w.run_changed(run_id, thread, agent, version, {"s": version}) is True
                assert (await m.event("run.updated", timeout=5))["version"] == version
                # the bound (200 ms) and the primary's answer, not --db-timeout (20 s)
                assert time.monotonic() - started < 3
                assert node.metric(FALLBACK % "wait") + node.metric(FALLBACK % "busy") > fallbacks
                if version < 4:
                    assert node.metric(MISSES) == version - 1, standby_metrics(node)
                    assert "standby out of rotation" not in node.log
            assert node.metric(FALLBACK % "busy") >= 1     # the third: no connection free
            poll_until(lambda: "reason=lagging misses=3" in node.log, timeout=5,
                       what="the standby out after three misses")
            for pid in pids:
                os.kill(pid, signal.SIGCONT)
            pids.clear()
            await read_again(primary, standby, node, m, (run_id, thread, agent, 5))
            await m.close()
        run(go())
        assert node.metric('bothy_gateway_db_calls_total{result="timeout"}') == 0
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)
        node.stop()


def paused(standby):
    """Replay paused on the standby (pg_wal_replay_pause): the standby
    still answers, but applies nothing it receives."""
    standby.query("SELECT pg_wal_replay_pause()")
    poll_until(lambda: standby.query("SELECT pg_get_wal_replay_pause_state()")[0][0] != "not paused",
               timeout=5, what="replay pause requested")


def test_a_replay_paused_for_fewer_reads_than_the_misses_keeps_the_standby(
        primary, standby, nodes, keys):
    """The hiccup: replay paused longer than --database-read-wait (300 ms)
    for two deliveries, fewer than --database-read-misses (3 by default).
    Each read goes to the primary once the wait passed (reason="wait"), the
    standby stays in rotation, and once replay resumed the next read is the
    standby's again and the misses are counted from none (docs/standbys.md,
    "Waits, fallbacks, rotation")."""
    (a,) = nodes(1)
    w, member, thread, agent, run_id = a_run(primary, standby)
    poll_until(lambda: a.metric(IN_ROTATION) == 1, timeout=10, what="standby in rotation")

    async def go():
        m = await Client.open(a.url, keys.person(member))
        reads = a.metric(READS)
        assert w.run_changed(run_id, thread, agent, 1, {"s": 1}) is True
        assert (await m.event("run.updated"))["version"] == 1
        assert a.metric(READS) > reads, standby_metrics(a)
        out = a.metric(FALLBACK % "out")
        paused(standby)
        try:
            for version in (2, 3):
                waits = a.metric(FALLBACK % "wait")
                assert w.run_changed(run_id, thread, agent, version, {"s": version}) is True
                assert (await m.event("run.updated", timeout=5))["version"] == version
                # read on the primary after the wait; the standby stays
                assert a.metric(FALLBACK % "wait") == waits + 1, standby_metrics(a)
                assert a.metric(MISSES) == version - 1
                assert a.metric(IN_ROTATION) == 1
        finally:
            standby.query("SELECT pg_wal_replay_resume()")
        replayed(primary, standby)
        reads = a.metric(READS)
        assert w.run_changed(run_id, thread, agent, 4, {"s": 4}) is True
        assert (await m.event("run.updated"))["version"] == 4
        # after the hiccup: the standby's again, nothing counted as out
        assert a.metric(READS) > reads, standby_metrics(a)
        assert a.metric(MISSES) == 0
        assert a.metric(IN_ROTATION) == 1
        assert a.metric(FALLBACK % "out") == out
        await m.close()
    try:
        run(go())
    finally:
        standby.query("SELECT pg_wal_replay_resume()")
    assert "standby out of rotation" not in a.log


def test_misses_in_a_row_take_the_standby_out_until_the_retry(primary, standby, keys):
    """Sustained lag: replay paused for three deliveries, each of a newer
    fence.  The first two read on the primary after the wait with the
    standby in rotation; the third takes it out (one record naming the
    rule), a delivery meanwhile reads on the primary at once as "out", and
    after --database-read-retry, replay resumed, the standby reads again."""
    w, member, thread, agent, run_id = a_run(primary, standby)
    node = reading_node("standby-misses", primary, standby, keys, "--database-read-wait", "200",
                        "--database-read-retry", "3000")
    try:
        async def go():
            m = await Client.open(node.url, keys.person(member))
            assert w.run_changed(run_id, thread, agent, 1, {"s": 1}) is True
            assert (await m.event("run.updated"))["version"] == 1
            paused(standby)
            try:
                for version in (2, 3, 4):
                    assert w.run_changed(run_id, thread, agent, version, {"s": version}) is True
                    assert (await m.event("run.updated", timeout=5))["version"] == version
                    if version < 4:
                        assert node.metric(IN_ROTATION) == 1, standby_metrics(node)
                        assert node.metric(MISSES) == version - 1
                # the third miss: out, once the primary confirmed the fence
                poll_until(lambda: node.metric(IN_ROTATION) == 0, timeout=2.5,
                           what="the standby out after three misses")
                assert node.metric(FALLBACK % "wait") == 3, standby_metrics(node)
                assert node.log.count("standby out of rotation") == 1
                assert "reason=lagging misses=3" in node.log
                # out: the next read goes to the primary without a wait
                outs = node.metric(FALLBACK % "out")
                assert w.run_changed(run_id, thread, agent, 5, {"s": 5}) is True
                assert (await m.event("run.updated"))["version"] == 5
                assert node.metric(FALLBACK % "out") == outs + 1
                assert node.metric(FALLBACK % "wait") == 3
            finally:
                standby.query("SELECT pg_wal_replay_resume()")
            # back after --database-read-retry, counting from none
            await read_again(primary, standby, node, m, (run_id, thread, agent, 6))
            assert node.metric(MISSES) == 0
            await m.close()
        run(go())
    finally:
        standby.query("SELECT pg_wal_replay_resume()")
        node.stop()


def test_fence_waits_of_a_quiet_machine(keys):
    """A primary and its standby with fsync on (as in production), one node.
    First 150 commits followed on the standby by polling: the standby
    replays a commit once its walreceiver has flushed it, within a few ms
    here.  Then 100 run updates 20 ms apart as they come (each read at
    once, no coalescing window), and 100 with
    the standby's replay held back 10 ms (recovery_min_apply_delay), so
    that nearly every read finds its fence not yet replayed at its first
    check and checks again every millisecond.  Those waits must end soon
    after the 10 ms: at least 90 % within 50 ms (with lws_sul's late
    timers, a check again ran up to 200 ms late: docs/standbys.md, "Why a
    wait may pass the bound").  With -s it prints every distribution."""
    prim = Instance("quiet-primary", PG_CONF + ["fsync = on"])
    prim.start()
    sb = node = None
    try:
        prim.wait_fanout()
        sb = Standby(prim)
        sb.start()
        w, member, thread, agent, run_id = a_run(prim, sb)
        flushed, applied = replay_latency(prim, sb, 150)
        print("\nthe standby's own latency over 150 commits, p50 / p99 / max: flushed by its "
              "walreceiver %s ms, replayed %s ms" % (flushed, applied))
        # each read at its signal, not at the end of a run's coalescing window
        node = reading_node("standby-quiet", prim, sb, keys, "--database-read-wait", "300",
                            "--run-coalesce", "0")
        bounds = ("0.001", "0.005", "0.01", "0.05")

        def waits():
            got = node.metrics()
            return [got[WAITS]] + [got[WAIT_BUCKET % le] for le in bounds]

        async def updates(first, n, what):
            before = waits()
            m = await Client.open(node.url, keys.person(member))
            for version in range(first, first + n):
                assert w.run_changed(run_id, thread, agent, version, {"s": version}) is True
                assert (await m.event("run.updated"))["version"] == version
                time.sleep(0.02)
            await m.close()
            got = [b - a for a, b in zip(before, waits())]
            print("fence waits of %d reads, %s: %s, over 50 ms %d" % (
                got[0], what, ", ".join("<= %g ms %d" % (float(le) * 1000, n)
                                        for le, n in zip(bounds, got[1:])), got[0] - got[-1]))
            return got
        run(updates(1, 100, "as they come"))
        sb.delay("10ms")
        got = run(updates(101, 100, "replay held back 10 ms"))
        assert got[0] >= 90, got
        assert got[-1] >= got[0] * 0.9, got
    finally:
        if node is not None:
            node.stop()
        if sb is not None:
            sb.stop()
        prim.close()


def replay_latency(primary, standby, n):
    """From a commit on primary to its WAL flushed by standby's walreceiver
    (pg_last_wal_receive_lsn) and replayed (pg_last_wal_replay_lsn),
    polled back to back: p50 / p99 / max in ms of each."""
    import psycopg2
    p = primary.connect()
    s = psycopg2.connect(host=standby.dir, port=int(PORT), user="postgres", dbname="bothy_test")
    s.autocommit = True
    flushed, applied = [], []
    try:
        pc, sc = p.cursor(), s.cursor()
        pc.execute("CREATE TABLE IF NOT EXISTS replay_probe (i int)")
        for _ in range(n):
            pc.execute("INSERT INTO replay_probe VALUES (1)")
            pc.execute("SELECT pg_current_wal_flush_lsn()::text")
            lsn = pc.fetchone()[0]
            start, seen = time.monotonic(), None
            while True:
                sc.execute("SELECT pg_last_wal_receive_lsn() >= %s::pg_lsn, "
                           "pg_last_wal_replay_lsn() >= %s::pg_lsn", (lsn, lsn))
                got, done = sc.fetchone()
                now = time.monotonic()
                if got and seen is None:
                    seen = now
                if done or now - start > 10:
                    break
            flushed.append(((seen or now) - start) * 1000)
            applied.append((now - start) * 1000)
            time.sleep(0.02)
    finally:
        p.close()
        s.close()

    def summary(xs):
        xs = sorted(xs)
        return "%.2f / %.2f / %.2f" % (xs[len(xs) // 2], xs[int(len(xs) * 0.99)], xs[-1])
    return summary(flushed), summary(applied)


def test_a_bad_database_read_misses_refuses_the_start(keys):
    for value in ("0", "1001", "3x", " 3", "", "-1"):
        r = subprocess.run([GATEWAY, "serve", "--listen", "127.0.0.1:1", "--database", "x",
                            "--keys", keys.dir, "--database-read", "host=x",
                            "--database-read-misses", value],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=10)
        assert r.returncode == 2, value
        assert "--database-read-misses must be an integer from 1 to 1000" in r.stderr, r.stderr


def test_a_wrong_or_unreachable_database_read_at_start(primary, standby, keys):
    bad = subprocess.run([GATEWAY, "serve", "--listen", "127.0.0.1:1", "--database", "x",
                          "--keys", keys.dir, "--database-read", "host='unterminated"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=10)
    assert bad.returncode == 2
    assert "--database-read is not a valid libpq connection string" in bad.stderr
    assert "unterminated" not in bad.stderr         # a conninfo may hold a password

    w = World(primary)
    member = new_id()
    _, thread = w.room(member)
    agent, run_id = w.agent(), new_id()

    def delivered_without_the_standby(name, conninfo, version):
        """A node with conninfo as its standby delivers version, and no
        read of it went to a standby."""
        node = Gateway(name, primary, keys, ["--database-read", conninfo,
                                             "--database-read-retry", "500"]).start()
        try:
            async def go():
                m = await Client.open(node.url, keys.person(member))
                assert w.run_changed(run_id, thread, agent, version, {"s": version}) is True
                assert (await m.event("run.updated"))["version"] == version
                await m.close()
            run(go())
            assert node.metric(READS) == 0
            return node.log, node.metric(FALLBACK % "out")
        finally:
            node.stop()

    gone = os.path.join(WORK, "no-standby-here")
    log, out = delivered_without_the_standby(
        "standby-unreachable", "host=%s port=%s dbname=bothy_test user=postgres" % (gone, PORT), 1)
    assert out >= 1
    assert "standby unreachable, its reads go to the primary" in log

    # the right standby, another database on it: out of rotation, reads on the
    # primary.  Seen by the connection's first check, or, when that one ran
    # before any primary connection was up (it then counts as failed), by
    # the delivery's own check.
    replayed(primary, standby)
    log, _ = delivered_without_the_standby(
        "standby-wrong-db", standby.conninfo.replace("dbname=bothy_test", "dbname=postgres"), 2)
    assert "reason=wrong_database" in log


def test_a_promoted_standby_leaves_the_rotation(primary, standby, nodes, keys):
    """Last: the standby is a primary of its own afterwards."""
    (a,) = nodes(1)
    w = World(primary)
    member, leaver = new_id(), new_id()
    place, thread = w.room(member, leaver)
    agent, run_id = w.agent(), new_id()
    replayed(primary, standby)
    standby.promote()
    poll_until(lambda: standby.query("SELECT pg_is_in_recovery()")[0][0] is False, timeout=10,
               what="promoted")
    # the promoted server no longer follows: a removal there is never seen
    assert w.leave(place, leaver) is True

    async def go():
        m = await Client.open(a.url, keys.person(member))
        gone = await Client.open(a.url, keys.person(leaver))
        assert w.run_changed(run_id, thread, agent, 1, {"s": 1}) is True
        assert (await m.event("run.updated"))["version"] == 1
        assert await gone.before_ack() == []
        for c in (m, gone):
            await c.close()
    run(go())
    assert a.metric(FALLBACK % "out") >= 1
    assert a.metric(IN_ROTATION) == 0
    assert "reason=not_in_recovery" in a.log
