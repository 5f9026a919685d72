"""The seam's audience of a thread costs the same with planner statistics,
without them, and with statistics from before a place grew (issue 17, goal
3): a new installation, or a place that grew after the last ANALYZE, must
not make every delivery slow until autovacuum happens to analyze.

One instance with autovacuum off, so that nothing analyzes behind the
test's back.  Each case starts from a new extension (new tables: no
statistics) and times bothy.thread_audience asked about all 5,110 members
of a place (the size measured in the issue) in one state of the statistics
against another.  The timing runs in the server (clock_timestamp() around
each call, the best of several rounds), so the client, the socket and the
parsing of the array stay out of it; each round plans the function's
statement anew, with the statistics of that moment.  The body of 0.2.0,
which left the membership test to the planner (m.person = ANY (persons)),
took 40 to 42 ms without statistics and with the old ones, against 3.7 to
3.9 ms analyzed; the bound, 1.5 times the reference plus 2 ms, fails it
clearly and leaves a loaded machine room (the probing body: 5.3 to 6.2 ms
against 5.1 to 5.4)."""
import time

import pytest

from conftest import Instance

MEMBERS = 5110
ROUNDS = 7
BATCHES = 4
PLACE = "11111111-1111-4111-8111-111111111111"
THREAD = "22222222-2222-4222-8222-222222222222"
PERSON = "00000000-0000-4000-8000-%012x"

# The best of ROUNDS calls, in ms, and how many persons the last one admitted.
TIMER = """
CREATE FUNCTION pg_temp.audience_ms(thread uuid, persons uuid[], rounds int,
                                    OUT best float8, OUT admitted bigint)
    LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz;
    ms float8;
BEGIN
    FOR i IN 1 .. rounds LOOP
        t0 := clock_timestamp();
        SELECT count(*) INTO admitted FROM bothy.thread_audience(thread, persons);
        ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
        IF best IS NULL OR ms < best THEN
            best := ms;
        END IF;
    END LOOP;
END $$
"""


@pytest.fixture(scope="module")
def instance():
    inst = Instance("seam-plans", ["autovacuum = off"])
    inst.start()
    yield inst
    inst.close()


@pytest.fixture
def conn(instance):
    c = instance.connect()
    cur = c.cursor()
    cur.execute("DROP EXTENSION bothy")
    cur.execute("CREATE EXTENSION bothy")
    cur.execute(TIMER)
    yield c
    c.close()


def add_members(cur, place, first, count):
    cur.execute("SELECT bothy.place_put(%s)", (place,))
    cur.execute("SELECT bothy.membership_added(%s, ('00000000-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid)"
                "  FROM generate_series(%s, %s) i", (place, first, first + count - 1))


def timed(cur):
    """The best of BATCHES batches of ROUNDS calls, after ROUNDS untimed: a
    session's first calls also pay for growing the backend's memory
    (first-touch page faults, 2 to 3 ms a call here), whatever the plan.
    The batches are apart in time, so that one burst of another process
    on a loaded machine cannot slow every call of a state (a CI run once
    measured 12.4 ms without statistics against 6.0 analyzed, in one
    batch each)."""
    persons = [PERSON % i for i in range(1, MEMBERS + 1)]
    bests = []
    for batch in range(1 + BATCHES):
        if batch > 1:
            time.sleep(0.1)
        cur.execute("SELECT * FROM pg_temp.audience_ms(%s, %s::uuid[], %s)", (THREAD, persons, ROUNDS))
        best, admitted = cur.fetchone()
        assert admitted == MEMBERS
        if batch > 0:
            bests.append(best)
    return min(bests)


def has_statistics(cur):
    cur.execute("SELECT count(*) FROM pg_stats WHERE schemaname = 'bothy' AND tablename = 'memberships'")
    return cur.fetchone()[0] > 0


def assert_as_fast(measured, reference, what, reference_what):
    assert measured <= 1.5 * reference + 2.0, (
        "the audience read took %.1f ms %s, %.1f ms %s" % (measured, what, reference, reference_what))


def test_a_new_installation_is_as_fast_as_an_analyzed_one(conn):
    cur = conn.cursor()
    add_members(cur, PLACE, 1, MEMBERS)
    cur.execute("SELECT bothy.thread_put(%s, %s)", (THREAD, PLACE))
    assert not has_statistics(cur)
    cur.execute("SELECT reltuples FROM pg_class WHERE oid = 'bothy.memberships'::regclass")
    assert cur.fetchone()[0] < 0, "the table was never vacuumed nor analyzed"
    fresh = timed(cur)
    cur.execute("ANALYZE bothy.threads, bothy.memberships")
    assert has_statistics(cur)
    assert_as_fast(fresh, timed(cur), "without statistics", "once analyzed")


def test_other_places_and_old_statistics_change_nothing(conn):
    """Statistics that say every place has two members, then the place of
    5,110 added: timed so, then analyzed again, against the same place
    alone in the table, analyzed (the old body took 40 ms in both states
    here, against 4 ms alone)."""
    cur = conn.cursor()
    cur.execute("SELECT bothy.place_put(('aaaaaaaa-0000-4000-8000-' || lpad(to_hex(p), 12, '0'))::uuid)"
                "  FROM generate_series(1, 10000) p")
    cur.execute("SELECT bothy.membership_added(('aaaaaaaa-0000-4000-8000-' || lpad(to_hex(p), 12, '0'))::uuid,"
                "  ('00000000-0000-4000-8000-' || lpad(to_hex(100000 + 2 * p + i), 12, '0'))::uuid)"
                "  FROM generate_series(1, 10000) p, generate_series(0, 1) i")
    cur.execute("SELECT bothy.place_put(%s)", (PLACE,))
    cur.execute("SELECT bothy.thread_put(%s, %s)", (THREAD, PLACE))
    cur.execute("ANALYZE bothy.threads, bothy.memberships")
    add_members(cur, PLACE, 1, MEMBERS)
    stale = timed(cur)
    cur.execute("ANALYZE bothy.threads, bothy.memberships")
    analyzed = timed(cur)
    cur.execute("DELETE FROM bothy.places WHERE place <> %s", (PLACE,))
    cur.execute("VACUUM ANALYZE bothy.threads, bothy.memberships")
    alone = timed(cur)
    assert_as_fast(stale, alone, "with statistics from before the place grew", "alone, analyzed")
    assert_as_fast(analyzed, alone, "among 10,000 small places, analyzed", "alone, analyzed")
