"""A seam replaced as docs/sql-api.md, "Replacing the seam", says, of 0.3.0's
form: the application's own schema (app.threads, app.space_members), the
minimal tables left empty, bothy.thread_audience_on joining the bindings,
and bothy.thread_nodes either NULL (every node asks) or the nodes of the
audience's bindings (the reach).  Across two real nodes a typing op and a
run update reach the members on both, never an outsider; a member removed
from the application's table gets nothing more.  The default bodies are
put back afterwards (the database is the session's)."""
import pytest

from cluster import Client, World
from conftest import new_id, run

SEAM = ["bothy.thread_place(uuid)", "bothy.thread_audience(uuid,uuid[])",
        "bothy.thread_audience_on(uuid,uuid)", "bothy.thread_nodes(uuid)"]

SCHEMA = """
CREATE SCHEMA IF NOT EXISTS app;
CREATE TABLE IF NOT EXISTS app.threads (id uuid PRIMARY KEY, space_id uuid NOT NULL);
CREATE TABLE IF NOT EXISTS app.space_members (space_id uuid, person_id uuid,
                                              PRIMARY KEY (space_id, person_id));

CREATE OR REPLACE FUNCTION bothy.thread_place(thread uuid) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$ SELECT t.space_id FROM app.threads t WHERE t.id = thread_place.thread $$;

CREATE OR REPLACE FUNCTION bothy.thread_audience(thread uuid, persons uuid[]) RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT DISTINCT m.person_id FROM app.threads t
      JOIN app.space_members m ON m.space_id = t.space_id
     WHERE t.id = thread_audience.thread AND m.person_id = ANY (thread_audience.persons)
$$;

CREATE OR REPLACE FUNCTION bothy.thread_audience_on(thread uuid, node uuid) RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT DISTINCT b.person
      FROM app.threads t
      JOIN app.space_members m ON m.space_id = t.space_id
      JOIN bothy.device_bindings b ON b.node = thread_audience_on.node AND b.person = m.person_id
     WHERE t.id = thread_audience_on.thread
$$;
"""

NODES = {
    "every node": "SELECT NULL::uuid[]",
    "the audience's nodes": """
    SELECT coalesce(array_agg(DISTINCT b.node), '{}')
      FROM app.threads t
      JOIN app.space_members m ON m.space_id = t.space_id
      JOIN bothy.device_bindings b ON b.person = m.person_id
     WHERE t.id = thread_nodes.thread""",
}


@pytest.fixture
def replaced(pg):
    """Replaces the seam with `body` for thread_nodes; puts the defaults back."""
    defaults = [pg.query("SELECT pg_get_functiondef(%s::regprocedure)", f)[0][0] for f in SEAM]

    def replace(nodes_body):
        pg.query(SCHEMA + """
CREATE OR REPLACE FUNCTION bothy.thread_nodes(thread uuid) RETURNS uuid[]
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$ %s $$;""" % nodes_body)
    yield replace
    for d in defaults:
        pg.query(d)


@pytest.mark.parametrize("nodes", sorted(NODES))
def test_a_replaced_seam_of_the_new_form(gateways, keys, pg, replaced, nodes):
    replaced(NODES[nodes])
    a, b = gateways(2)
    w = World(pg)
    space, thread = new_id(), new_id()
    member_a, member_b, outsider = new_id(), new_id(), new_id()
    pg.query("INSERT INTO app.threads VALUES (%s, %s)", thread, space)
    pg.query("INSERT INTO app.space_members VALUES (%s, %s), (%s, %s)",
             space, member_a, space, member_b)
    agent, run_id = w.agent(), new_id()
    # none of them in the minimal tables: only the replaced bodies can admit
    assert pg.query("SELECT count(*) FROM bothy.memberships WHERE person = ANY (%s::uuid[])",
                    [member_a, member_b])[0][0] == 0

    async def go():
        ma = await Client.open(a.url, keys.person(member_a))
        mb = await Client.open(b.url, keys.person(member_b))
        out = await Client.open(b.url, keys.person(outsider))
        await ma.send({"op": "typing", "thread": thread})
        typing = await mb.event("typing.started")
        assert w.run_changed(run_id, thread, agent, 1, {"s": 1}) is True
        first = [(await ma.event("run.updated"))["version"], (await mb.event("run.updated"))["version"]]
        assert await out.before_ack() == []
        # removed in the application's schema: no later version for member_b
        pg.query("DELETE FROM app.space_members WHERE person_id = %s", member_b)
        assert w.run_changed(run_id, thread, agent, 2, {"s": 2}) is True
        second = (await ma.event("run.updated"))["version"]
        removed = await mb.before_ack()
        for c in (ma, mb, out):
            await c.close()
        return typing, first, second, removed
    typing, first, second, removed = run(go())
    assert typing["principal"] == member_a and typing["thread"] == thread
    assert typing["place"] == space
    assert first == [1, 1] and second == 2
    assert removed == []
