"""The reach of audience signals (docs/signals.md, "Reach"), as a listener on
the channel hears them from the real fan-out worker: gateway.run and
gateway.typing name the nodes that devices of the thread's members are
bound to, whatever reach a producer gave; a place above 256
members, or a thread the seam does not know, goes without one (every node
asks); and a seam that fails sends the batch without one, counted and
logged, losing nothing."""
import json
import uuid

from conftest import NODE_A, NODE_B, new_id, poll_until


def nodes_of(reach):
    """The node IDs a reach names (32 hex digits each), as UUID text."""
    assert len(reach) % 32 == 0
    return {str(uuid.UUID(reach[i:i + 32])) for i in range(0, len(reach), 32)}


def room(conn, members):
    place, thread = new_id(), new_id()
    cur = conn.cursor()
    cur.execute("SELECT bothy.place_put(%s)", (place,))
    cur.execute("SELECT bothy.thread_put(%s, %s)", (thread, place))
    cur.execute("SELECT bothy.membership_added(%s, p) FROM unnest(%s::uuid[]) p", (place, members))
    return thread


def bind(conn, node, person):
    conn.cursor().execute("SELECT bothy.device_bind(%s, %s, %s, %s)", (node, new_id(), person, new_id()))


def run_changed(conn, thread, agent):
    conn.cursor().execute("SELECT bothy.run_changed(%s, %s, %s, 1, '{}')", (new_id(), thread, agent))


def next_of(listener, kind):
    while True:
        payload = json.loads(listener.next())
        if payload["kind"] == kind:
            return payload


def test_the_worker_sets_the_reach_of_the_members_nodes(multi, listener_of):
    multi.wait_fanout()         # a producer's fallback NOTIFY carries no reach
    listener = listener_of(multi)
    a, b, unbound = new_id(), new_id(), new_id()
    with multi.connect() as conn:
        conn.cursor().execute("SELECT bothy.agent_put(%s)", (agent := new_id(),))
        thread = room(conn, [a, b, unbound])
        bind(conn, NODE_A, a)
        bind(conn, NODE_B, b)
    with multi.connect() as conn:
        run_changed(conn, thread, agent)
    assert nodes_of(next_of(listener, "gateway.run")["reach"]) == {NODE_A, NODE_B}
    # a producer's own reach (here: nobody) is dropped; the worker's stands
    typing = {"kind": "gateway.typing", "node": NODE_A, "thread": thread, "principal": a, "reach": ""}
    with multi.connect() as conn:
        conn.cursor().execute("SELECT bothy.publish(%s)", (json.dumps(typing, separators=(",", ":")),))
    assert nodes_of(next_of(listener, "gateway.typing")["reach"]) == {NODE_A, NODE_B}
    # b's device moves to node A: the next event reaches A alone
    with multi.connect() as conn:
        conn.cursor().execute("UPDATE bothy.device_bindings SET node = %s WHERE person = %s", (NODE_A, b))
        run_changed(conn, thread, agent)
    assert nodes_of(next_of(listener, "gateway.run")["reach"]) == {NODE_A}


def test_a_large_place_or_an_unknown_thread_goes_without_reach(multi, listener_of):
    multi.wait_fanout()
    listener = listener_of(multi)
    members = [new_id() for _ in range(257)]
    with multi.connect() as conn:
        conn.cursor().execute("SELECT bothy.agent_put(%s)", (agent := new_id(),))
        large = room(conn, members)
        bind(conn, NODE_A, members[0])
        run_changed(conn, large, agent)
    assert "reach" not in next_of(listener, "gateway.run")
    with multi.connect() as conn:
        run_changed(conn, new_id(), agent)
    assert "reach" not in next_of(listener, "gateway.run")


def test_a_failing_seam_sends_without_reach(multi, listener_of):
    multi.wait_fanout()
    listener = listener_of(multi)
    default = multi.query("SELECT pg_get_functiondef('bothy.thread_nodes(uuid)'::regprocedure)")[0][0]
    errors = "SELECT value FROM bothy.stat_metrics WHERE metric = 'worker_errors' AND label = 'reach'"
    before = multi.query(errors)[0][0]
    member = new_id()
    with multi.connect() as conn:
        conn.cursor().execute("SELECT bothy.agent_put(%s)", (agent := new_id(),))
        thread = room(conn, [member])
        bind(conn, NODE_A, member)
    multi.query("""CREATE OR REPLACE FUNCTION bothy.thread_nodes(thread uuid) RETURNS uuid[]
                   LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
                   AS $$ BEGIN RAISE EXCEPTION 'the seam is broken'; END $$""")
    try:
        with multi.connect() as conn:
            run_changed(conn, thread, agent)
        assert "reach" not in next_of(listener, "gateway.run")
        poll_until(lambda: multi.query(errors)[0][0] > before, timeout=5, what="worker_errors{reach}")
        assert "bothy fan-out could not ask bothy.thread_nodes" in multi.log
        assert "the seam is broken" in multi.log
    finally:
        multi.query(default)
    with multi.connect() as conn:
        run_changed(conn, thread, agent)
    assert nodes_of(next_of(listener, "gateway.run")["reach"]) == {NODE_A}
