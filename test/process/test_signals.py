"""Signals the SQL API stages, as a real LISTEN connection receives them.

"Nothing was sent" is proven without sleeping: a sentinel signal is
committed after the operation on the same connection, and signals arrive in
commit order, so the sentinel arriving first proves the operation sent none.
"""
import json

import psycopg2
import pytest

from conftest import NODE_A, new_id, seal
from test_presence import FLUSH


def sentinel(conn):
    host = new_id()
    conn.cursor().execute("SELECT bothy.publish('terminal.host_close', jsonb_build_object('host_id', %s::text))", (host,))
    return json.dumps({"kind": "terminal.host_close", "host_id": host}, separators=(",", ":"))


def call(conn, sql, *args):
    cur = conn.cursor()
    cur.execute(sql, args)
    return cur.fetchone()[0] if cur.description else None


def test_device_bind_signals_in_multi_mode(multi, listener_of):
    listener = listener_of(multi)
    with multi.connect() as conn:
        session, person, device = new_id(), new_id(), new_id()
        bind = call(conn, "SELECT bothy.device_bind(%s, %s, %s, %s)", NODE_A, session, person, device)
    payload = listener.next()
    assert payload == json.dumps({"kind": "gateway.device", "node": NODE_A, "device": device,
                                  "gateway_session": session, "bind_id": bind}, separators=(",", ":"))
    assert multi.query("SELECT bothy.signal_check(%s)", payload) == [("gateway.device",)]


def test_device_bind_batch_signals_each_bind_in_multi_mode(multi, listener_of):
    listener = listener_of(multi)
    sessions, persons, devices = ([new_id() for _ in range(3)] for _ in range(3))
    with multi.connect() as conn:
        cur = conn.cursor()
        cur.execute("SELECT ord, bind_id::text FROM bothy.device_bind_batch(%s, %s::uuid[], %s::uuid[], %s::uuid[])",
                    (NODE_A, sessions, persons, devices))
        binds = dict(cur.fetchall())
    # one signal per bind, in the order the rows were bound: by device
    expected = [json.dumps({"kind": "gateway.device", "node": NODE_A, "device": devices[i - 1],
                            "gateway_session": sessions[i - 1], "bind_id": binds[i]}, separators=(",", ":"))
                for i in sorted(binds, key=lambda i: devices[i - 1])]
    assert [listener.next() for _ in expected] == expected


def test_device_bind_batch_sends_nothing_in_single_mode(single, listener_of):
    listener = listener_of(single)
    with single.connect() as conn:
        call(conn, "SELECT count(*) FROM bothy.device_bind_batch(%s, %s::uuid[], %s::uuid[], %s::uuid[])",
             NODE_A, [new_id()], [new_id()], [new_id()])
        expected = sentinel(conn)
    assert listener.next() == expected


def test_consumer_take_signals_in_multi_mode(multi, listener_of):
    listener = listener_of(multi)
    agent, session = new_id(), new_id()
    with multi.connect() as conn:
        call(conn, "SELECT bothy.consumer_take(%s, %s, %s, 'connection')", agent, NODE_A, session)
    assert json.loads(listener.next()) == {"kind": "gateway.consumer", "node": NODE_A,
                                           "agent": agent, "gateway_session": session}


def test_gateway_events_send_nothing_in_single_mode(single, listener_of):
    listener = listener_of(single)
    with single.connect() as conn:
        call(conn, "SELECT bothy.device_bind(%s, %s, %s, %s)", NODE_A, new_id(), new_id(), new_id())
        call(conn, "SELECT bothy.consumer_take(%s, %s, %s, 'connection')", new_id(), NODE_A, new_id())
        expected = sentinel(conn)
    assert listener.next() == expected


def database_produced(instance, listener):
    """run_changed and the maintenance worker's hints carry the cluster's own node ID."""
    cluster_node = instance.query("SELECT node::text FROM bothy.cluster_identity")[0][0]
    agent, place, thread, run, person = (new_id() for _ in range(5))
    with instance.connect() as conn:
        call(conn, "SELECT bothy.agent_put(%s)", agent)
        call(conn, "SELECT bothy.run_changed(%s, %s, %s, 4, '{\"status\":\"running\"}')", run, thread, agent)
        call(conn, "SELECT bothy.run_changed(%s, %s, %s, 3, '{\"status\":\"stale\"}')", run, thread, agent)
        expected_sentinel = sentinel(conn)
    assert json.loads(listener.next()) == {"kind": "gateway.run", "node": cluster_node, "run": run,
                                           "thread": thread, "version": 4}
    # the stale version sent nothing
    assert listener.next() == expected_sentinel
    # the recipient is connected: the worker sends a hint, optional members only when given
    with instance.connect() as conn:
        call(conn, FLUSH, NODE_A, True, [new_id()], [person], [new_id()], [None], [False], [])
        nid = call(conn, "SELECT bothy.notification_created(%s, 'mention', false, 2, %s)", person, thread)
    assert json.loads(listener.next()) == {"kind": "gateway.hint", "node": cluster_node, "recipient": person,
                                           "nid": nid, "hint_kind": "mention", "quiet": False, "count": 2,
                                           "thread": thread}
    # an appended agent event wakes the holder's node: the ID only, never the data
    with instance.connect() as conn:
        first = call(conn, "SELECT bothy.agent_event_appended(%s, 'run.requested', '{\"secret\":1}')", agent)
        second = call(conn, "SELECT bothy.agent_event_appended(%s, 'run.requested', '{}')", agent)
    assert (first, second) == (1, 2)
    payloads = [json.loads(listener.next())]
    if payloads[0]["event"] == 1:           # not coalesced: both batches sent
        payloads.append(json.loads(listener.next()))
    assert payloads[-1] == {"kind": "gateway.agent_event", "node": cluster_node, "agent": agent, "event": 2}
    assert cluster_node not in (None, NODE_A)


def test_database_produced_signals_in_multi_mode(multi, listener_of):
    database_produced(multi, listener_of(multi))


def test_database_produced_signals_in_single_mode(single, listener_of):
    database_produced(single, listener_of(single))


def test_rolled_back_signals_never_arrive(multi, listener_of):
    listener = listener_of(multi)
    conn = multi.connect(autocommit=False)
    try:
        call(conn, "SELECT bothy.device_bind(%s, %s, %s, %s)", NODE_A, new_id(), new_id(), new_id())
        conn.rollback()
        cur = conn.cursor()
        cur.execute("SELECT bothy.consumer_take(%s, %s, %s, 'connection')", (new_id(), NODE_A, new_id()))
        cur.execute("SAVEPOINT s")
        cur.execute("SELECT bothy.device_bind(%s, %s, %s, %s)", (NODE_A, new_id(), new_id(), new_id()))
        cur.execute("ROLLBACK TO SAVEPOINT s")
        expected = sentinel(conn)
        conn.commit()
    finally:
        conn.close()
    assert json.loads(listener.next())["kind"] == "gateway.consumer"
    assert listener.next() == expected


def test_every_staged_payload_passes_the_codec(multi, listener_of):
    listener = listener_of(multi)
    with multi.connect() as conn:
        call(conn, "SELECT bothy.device_bind(%s, %s, %s, %s)", NODE_A, new_id(), new_id(), new_id())
        call(conn, "SELECT bothy.consumer_take(%s, %s, %s, 'poll', '10 seconds')", new_id(), NODE_A, new_id())
        person = new_id()
        call(conn, FLUSH, NODE_A, True, [new_id()], [person], [new_id()], [None], [False], [])
        call(conn, "SELECT bothy.notification_created(%s, 'system', true, 0)", person)
    kinds = [multi.query("SELECT bothy.signal_check(%s)", listener.next())[0][0] for _ in range(3)]
    assert kinds == ["gateway.device", "gateway.consumer", "gateway.hint"]


def test_a_whole_signal_is_published_in_the_codecs_own_encoding(multi, listener_of):
    """bothy.publish(signal text), the gateways' form, sends what the two-argument form sends."""
    listener = listener_of(multi)
    thread = new_id()
    loose, other = new_id(), new_id()   # two runs: the worker coalesces a run's versions
    text = ' { "version" : 7, "thread":"%s", "kind": "gateway.run", "run":"%s", "node":"%s" } ' % (thread, loose, NODE_A)
    with multi.connect() as conn:
        call(conn, "SELECT bothy.publish(%s::text)", text)
        call(conn, "SELECT bothy.publish('gateway.run', %s::jsonb)",
             json.dumps({"version": 7, "thread": thread, "run": other, "node": NODE_A}))

    def compact(run):
        return json.dumps({"kind": "gateway.run", "node": NODE_A, "run": run, "thread": thread, "version": 7},
                          separators=(",", ":"))
    assert listener.next() == compact(loose)
    assert listener.next() == compact(other)


def padded(signal, size):
    """A valid signal padded with spaces inside its object to exactly size bytes."""
    assert signal.endswith("}") and len(signal) < size
    return signal[:-1] + " " * (size - len(signal)) + "}"


def test_the_codecs_largest_signal_passes_notify_and_one_byte_more_fails_both(multi, listener_of):
    """D-M2-47-19: the codec's limit is the one NOTIFY enforces, less the
    envelope every payload travels in (docs/signals.md, "The envelope").
    A signal of exactly the codec's largest size, sealed, is exactly the
    largest payload NOTIFY carries: it crosses a real NOTIFY whole and
    decodes where it arrives; one byte more is refused by NOTIFY and, at the
    producer, by the codec with its documented error."""
    listener = listener_of(multi)
    host = new_id()
    key = multi.channel_key()
    largest = padded(json.dumps({"kind": "terminal.host_close", "host_id": host}), 7958)
    assert len(largest.encode()) == 7958 and len(seal(key, largest).encode()) == 7999
    with multi.connect() as conn:
        call(conn, "SELECT pg_notify('ephemeral', %s)", seal(key, largest))
    arrived = listener.next()
    assert arrived == largest
    assert multi.query("SELECT bothy.signal_check(%s)", arrived) == [("terminal.host_close",)]

    too_long = largest[:-1] + " }"
    assert len(seal(key, too_long).encode()) == 8000
    with pytest.raises(psycopg2.errors.InvalidParameterValue, match="payload string too long"):
        multi.query("SELECT pg_notify('ephemeral', %s)", seal(key, too_long))
    with pytest.raises(psycopg2.errors.InvalidParameterValue,
                       match="malformed signal: payload is longer than 7958 bytes"):
        multi.query("SELECT bothy.publish(%s::text)", too_long)

    # the largest whole signal is staged and sent, in the codec's compact form
    with multi.connect() as conn:
        call(conn, "SELECT bothy.publish(%s::text)", largest)
    assert listener.next() == json.dumps({"kind": "terminal.host_close", "host_id": host},
                                         separators=(",", ":"))
