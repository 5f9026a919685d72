"""Only bothy speaks on ephemeral (docs/security.md, "The channel"), tried
as the attackers of the threat model: a login with no bothy role, the
application's login, and, for what stays possible, a gateway login that
lies (it may publish).

Every forgery is tried each way a login can: the NOTIFY command and
pg_notify with the channel written out are refused in the database
(42501); pg_notify with a computed channel, and a payload dressed in a
fake envelope, reach the channel unsigned and every node refuses them
unread (bothy_gateway_signals_refused_total).  A gateway login's lie
passes the envelope, and the node then checks the database before it acts:
the device stays connected, the run's document reaches no other place and
real updates keep coming, the host stays active and is never probed, and
no invented event reaches anyone.  Real nodes, real clients, the real
bothy-host; on the build before the channel was guarded every one of these
forgeries took effect.
"""
import json
import os

import psycopg2
import psycopg2.errors
import pytest

from cluster import FOREIGN_NODE, Client, World
from conftest import connected_on, new_id, poll_until, run
from conftest import keys  # noqa: F401  (keys is a fixture)
from realhost import RealHost
from terminal_streams import terminal, tnodes, tpg  # noqa: F401  (fixtures)

PLAIN, APP, GATEWAY = "forge_nobody", "forge_app", "forge_gateway"
REFUSED = 'bothy_gateway_signals_refused_total{reason="%s"}'


@pytest.fixture(scope="module")
def pg(tpg):
    """One instance for the module, the terminal's settings (short heartbeats)."""
    tpg.query("""DO $$ BEGIN
        CREATE ROLE forge_nobody LOGIN;
        CREATE ROLE forge_app LOGIN IN ROLE bothy_app;
        CREATE ROLE forge_gateway LOGIN IN ROLE bothy_gateway;
    END $$""")
    return tpg


def login(pg, role):
    conn = psycopg2.connect(host=pg.dir, port=int(os.environ.get("BOTHY_TEST_PGPORT", "54329")),
                            user=role, dbname="bothy_test")
    conn.autocommit = True
    return conn


def compact(signal):
    return json.dumps(signal, separators=(",", ":"))


def forge(pg, role, payload):
    """Every way role may try to put payload on ephemeral: the two written
    out are refused; the computed channel and a fake envelope get through
    PostgreSQL, unsigned (one of each per call)."""
    conn = login(pg, role)
    try:
        cur = conn.cursor()
        for sql in ("NOTIFY ephemeral, %s", "SELECT pg_notify('ephemeral', %s)"):
            with pytest.raises(psycopg2.errors.InsufficientPrivilege, match='channel "ephemeral"'):
                cur.execute(sql, (payload,))
        for wire in (payload, '{"mac":"%s",%s' % ("0" * 32, payload[1:])):
            cur.execute("SELECT pg_notify(c, %s) FROM (VALUES ('ephemeral')) v(c)", (wire,))
    finally:
        conn.close()


def lie(pg, payload):
    """A gateway login publishes payload: signed by bothy, a lie all the same."""
    conn = login(pg, GATEWAY)
    try:
        conn.cursor().execute("SELECT bothy.publish(%s::text)", (payload,))
    finally:
        conn.close()


def refused(node):
    return node.metric(REFUSED % "unsigned") + node.metric(REFUSED % "forged")


def forge_as_both(pg, nodes, payload):
    """forge() as the plain and the application login; returns once every
    node has refused the four payloads that reached the channel."""
    before = [refused(n) for n in nodes]
    for role in (PLAIN, APP):
        forge(pg, role, payload)
    for n, b in zip(nodes, before):
        poll_until(lambda: refused(n) == b + 4, timeout=5, what="forged payloads refused")


def test_listening_and_the_key_are_bothy_gateways(pg):
    """Only members of bothy_gateway hear the channel or hold its key."""
    for role in (PLAIN, APP):
        conn = login(pg, role)
        try:
            with pytest.raises(psycopg2.errors.InsufficientPrivilege, match="listen on channel"):
                conn.cursor().execute("LISTEN ephemeral")
            with pytest.raises(psycopg2.errors.InsufficientPrivilege):
                conn.cursor().execute("SELECT bothy.channel_key()")
        finally:
            conn.close()
    conn = login(pg, GATEWAY)
    try:
        conn.cursor().execute("LISTEN ephemeral")
    finally:
        conn.close()


def test_a_forged_device_signal_closes_no_device(gateways, keys, pg):
    a, b = gateways(2)
    person, device = new_id(), new_id()

    async def go():
        c = await Client.open(a.url, keys.person(person, device))
        # a binding newer than the connection's, which the database never made
        newer = pg.query("SELECT bothy.uuidv7()::text")[0][0]
        payload = compact({"kind": "gateway.device", "node": FOREIGN_NODE, "device": device,
                           "gateway_session": new_id(), "bind_id": newer})
        forge_as_both(pg, (a, b), payload)
        lie(pg, payload)
        poll_until(lambda: a.metric("bothy_gateway_device_signal_checks_total") == 1, timeout=5,
                   what="the lie checked against the binding")
        assert await c.before_ack() == []       # connected, and told nothing
        await c.close()
    run(go())
    assert a.metric('bothy_gateway_closes_total{code="4017"}') == 0


def test_a_forged_run_signal_leaks_no_document_and_holds_back_no_update(gateways, keys, pg):
    a, b = gateways(2)
    w = World(pg)
    member, outsider = new_id(), new_id()
    _, thread = w.room(member)
    _, elsewhere = w.room(outsider)
    agent, run_id, sentinel = w.agent(), new_id(), new_id()
    contradicted = "bothy_gateway_run_signals_contradicted_total"
    payload = compact({"kind": "gateway.run", "node": FOREIGN_NODE, "run": run_id,
                       "thread": elsewhere, "version": 9007199254740991})

    async def go():
        m = await Client.open(a.url, keys.person(member))
        o = await Client.open(b.url, keys.person(outsider))
        w.run_changed(run_id, thread, agent, 1, {"step": 1})
        assert (await m.event("run.updated"))["version"] == 1
        forge_as_both(pg, (a, b), payload)
        lie(pg, payload)
        # each node read the document: its thread and version, not the signal's
        poll_until(lambda: a.metric(contradicted) >= 1 and b.metric(contradicted) >= 1,
                   timeout=5, what="the lie read against the document")
        w.run_changed(run_id, thread, agent, 2, {"step": 2})
        assert (await m.event("run.updated"))["version"] == 2      # not held back
        w.run_changed(sentinel, elsewhere, agent, 1, {"step": 1})
        assert (await o.event("run.updated"))["run"] == sentinel   # the first it ever got
        await m.close()
        await o.close()
    run(go())


def test_a_forged_host_announcement_probes_no_host(tnodes, terminal, keys, pg):
    a, b = tnodes(2)
    host = RealHost(a, terminal, "forgery", "/bin/sh")
    try:
        poll_until(lambda: connected_on(b, keys, host.owner, host.host), timeout=10,
                   what="the host announced to the other node")
        newer = pg.query("SELECT bothy.uuidv7()::text")[0][0]
        payload = compact({"kind": "terminal.host_present", "host_id": host.host, "conn_id": newer})
        forge_as_both(pg, (a, b), payload)
        lie(pg, payload)
        poll_until(lambda: a.metric("bothy_terminal_presence_unknown_total") >= 1, timeout=5,
                   what="the unknown connection not probed for")
        assert a.metric('bothy_terminal_probes_total{outcome="answered"}') == 0
        assert terminal.q("SELECT state FROM bothy.terminal_host_states(ARRAY[%s::uuid])",
                          host.host) == [("active",)]
        assert connected_on(a, keys, host.owner, host.host)
        assert a.metric('bothy_gateway_closes_total{code="4112"}') == 0
        assert host.proc.poll() is None
    finally:
        host.stop()


def test_invented_events_reach_no_one(gateways, keys, pg):
    """Typing, a hint with the largest count and an unknown agent's presence,
    forged: a person who could see each of them is told nothing."""
    node = gateways(1)
    w = World(pg)
    person, typer = new_id(), new_id()
    _, thread = w.room(person, typer)
    forged = [
        {"kind": "gateway.typing", "node": FOREIGN_NODE, "thread": thread, "principal": typer},
        {"kind": "gateway.hint", "node": FOREIGN_NODE, "recipient": person, "nid": new_id(),
         "hint_kind": "mention", "quiet": False, "count": 2147483647, "thread": thread},
        {"kind": "gateway.agent_presence", "node": FOREIGN_NODE, "agent": new_id(),
         "state": "online"},
    ]

    async def go():
        c = await Client.open(node.url, keys.person(person), watch=[forged[2]["agent"]])
        for signal in forged:
            forge_as_both(pg, (node,), compact(signal))
        seen = await c.before_ack() + await c.collect(0.5)
        await c.close()
        return seen
    assert run(go()) == []
    for signal in forged:
        assert node.metric('bothy_gateway_signals_received_total{kind="%s"}' % signal["kind"]) == 0
