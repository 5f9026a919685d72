"""Cases a review of the gateway found, each made to happen: a long poll
past lws' own 10 s timeout, a stop while a poll's take is in flight, an ack
the database refuses, events appended while a lease had lapsed, an empty
query argument, typing in many threads, and a person flooding autocomplete."""
import asyncio
import json
import signal
import socket
import time

from cluster import Client, World, rest, rest_started
from conftest import new_id, poll_until, run
from rawsock import read_to_end

PATH = "/v1/agent/events"


def test_a_long_poll_waits_past_ten_seconds(gateways, keys, pg):
    node = gateways(1)
    agent = World(pg).agent()
    start = time.monotonic()
    status, body = rest(node, PATH + "?wait_ms=11000", keys.agent(agent), timeout=20)
    took = time.monotonic() - start
    assert (status, body["events"]) == (200, [])
    assert 10.9 < took < 14.0


def test_a_stop_while_a_poll_takes_the_stream_answers_it_and_exits_cleanly(gateways, keys, pg):
    node = gateways(1)
    w = World(pg)
    agent = w.agent()
    w.q("SELECT bothy.consumer_take(%s, '01890a5d-ac96-774b-bcce-b302099a8057', gen_random_uuid(), "
        "'poll', '30 seconds')", agent)
    lock = pg.connect(autocommit=False)
    try:
        lock.cursor().execute("SELECT * FROM bothy.consumer_holds WHERE agent = %s FOR UPDATE", (agent,))

        async def go():
            waiting = rest_started(node, PATH + "?wait_ms=20000", keys.agent(agent), timeout=30)
            poll_until(lambda: pg.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                                        " AND query LIKE '%%consumer_take%%'")[0][0] == 1,
                       timeout=5, what="the poll's take waiting for the row")
            node.proc.send_signal(signal.SIGTERM)
            await asyncio.sleep(0.3)
            lock.commit()           # the take goes on, into a stopping node
            return await waiting
        status, body, took = run(go())
    finally:
        lock.close()
    assert (status, body["events"]) == (200, [])     # answered at once, not after its wait
    assert took < 5.0
    assert node.proc.wait(10) == 0


def test_a_stop_writes_the_whole_answer_of_every_poll_it_ends(gateways, keys, pg):
    """A stop answers a waiting poll: its headers go at one writeable and its
    body at the next, while the stop's own node_stop call runs.  The stop
    waits for the body (a client once read the headers and then nothing).
    The race is timing's: some stops, each with a poll waiting."""
    w = World(pg)
    for _ in range(12):
        node = gateways(1)
        agent = w.agent()

        async def go():
            waiting = rest_started(node, PATH + "?wait_ms=20000", keys.agent(agent), timeout=30)
            poll_until(lambda: w.holder(agent)[1] == "poll", timeout=5, what="the poll holding the stream")
            node.proc.send_signal(signal.SIGTERM)
            return await waiting
        status, body, took = run(go())     # a cut body raises IncompleteRead here
        assert (status, body["events"]) == (200, [])
        assert took < 5.0
        assert node.proc.wait(10) == 0


def test_an_ack_the_database_refuses_leaves_the_stream_working(gateways, keys, pg):
    node = gateways(1)      # bothy.consumer_lease = 3s: a renewal every second
    w = World(pg)
    agent = w.agent()
    w.append(agent)

    async def go():
        c = await Client.open(node.url, keys.agent(agent))
        assert (await c.event("agent.event"))["id"] == 1
        await c.send({"op": "ack", "event": 1000000})       # beyond the last event
        refused = await c.recv()
        await asyncio.sleep(2.5)                            # renewals after the refusal
        holder = w.holder(agent)
        w.append(agent)
        second = await c.event("agent.event")
        await c.send({"op": "ack", "event": 2})
        assert await c.before_ack() == []
        await c.close()
        return c.ready, refused, holder, second
    ready, refused, holder, second = run(go())
    assert refused == {"op": "error", "request": "ack", "code": "rejected"}
    assert holder[:2] == (ready["bind"], "connection")      # the renewals held on
    assert second["id"] == 2
    poll_until(lambda: w.holder(agent)[2] == 2, timeout=5, what="the valid ack saved")
    assert node.metric('bothy_gateway_closes_total{code="4015"}') == 0


def test_events_appended_while_the_lease_lapsed_arrive_after_it_is_held_again(gateways, keys, pg):
    node = gateways(1)      # bothy.consumer_lease = 3s
    w = World(pg)
    agent = w.agent()

    async def go():
        c = await Client.open(node.url, keys.agent(agent))
        lock = pg.connect(autocommit=False)
        try:
            # the renewals wait for this lock while the lease runs out
            lock.cursor().execute("SELECT * FROM bothy.consumer_holds WHERE agent = %s FOR UPDATE", (agent,))
            poll_until(lambda: w.q("SELECT lease_until < now() FROM bothy.consumer_holds WHERE agent = %s",
                                   agent)[0][0], timeout=6, what="the lease lapsed")
            w.append(agent)                 # read as nothing: the lease lapsed
            await asyncio.sleep(0.5)
            lock.commit()
        finally:
            lock.close()
        got = await c.event("agent.event", timeout=5)
        await c.close()
        return got
    got = run(go())
    assert got["id"] == 1
    assert node.metric("bothy_gateway_consumer_resumes_total") >= 1


def test_an_empty_query_argument_is_refused(gateways, keys, pg):
    node = gateways(1)
    token = keys.agent(World(pg).agent())
    for query in ("?wait_ms=0&&bogus=1", "?&bogus=1&wait_ms=0", "?wait_ms=0&&max=1", "?wait_ms=0&"):
        assert rest(node, PATH + query, token) == (400, {"error": "bad_request"}), query
    assert rest(node, PATH + "?wait_ms=0&max=1", token)[0] == 200


def test_typing_in_more_threads_than_the_limit_is_held_to_it(gateways, keys, pg):
    node = gateways(1, extra=["--typing-interval", "5000"])
    w = World(pg)
    sender = new_id()
    place, first = w.room(sender)
    threads = [first] + [w.thread(place) for _ in range(5)]

    async def go():
        s = await Client.open(node.url, keys.person(sender))
        for t in threads:
            await s.send({"op": "typing", "thread": t})
        await s.before_ack()
        await s.close()
    run(go())
    # four threads pass per interval, the fifth and sixth are dropped
    assert node.metric("bothy_gateway_typing_dropped_total") == 2


def test_one_person_cannot_crowd_autocomplete(gateways, keys, pg):
    node = gateways(1, extra=["--autocomplete-timeout", "3000"])
    w = World(pg)
    agent = w.agent()

    async def go():
        consumer = await Client.open(node.url, keys.agent(agent), watch=[agent])
        person = await Client.open(node.url, keys.person())
        for i in range(5):                      # the consumer never answers
            await person.send({"op": "autocomplete", "agent": agent, "ref": "r%d" % i, "query": "q"})
        start = time.monotonic()
        fifth = await person.recv()             # the fifth ends at once, empty
        took = time.monotonic() - start
        for c in (consumer, person):
            await c.close()
        return fifth, took
    fifth, took = run(go())
    assert fifth == {"op": "autocomplete_result", "ref": "r4", "items": []}
    assert took < 2.0
    assert node.metric('bothy_gateway_autocomplete_total{outcome="forwarded"}') == 4
    assert node.metric('bothy_gateway_autocomplete_total{outcome="no_consumer"}') == 1


def big_answer_requested(node, keys, pg):
    """A poll of 100 events, twice as large in all as the most the kernel
    lets a socket buffer for sending (tcp_wmem's maximum), so that however
    the socket's buffer grows, most of the answer waits in the node; sent
    from a socket with a small receive window that reads nothing yet.
    Returns the socket once the answer is being written."""
    with open("/proc/sys/net/ipv4/tcp_wmem") as f:
        most = int(f.read().split()[2])
    w = World(pg)
    agent = w.agent()
    for _ in range(100):
        w.append(agent, data={"text": "x" * max(20000, 2 * most // 100)})
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)    # before connect: a small window
    s.connect(("127.0.0.1", node.port))
    s.sendall(("GET %s?after=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n"
               % (PATH, keys.agent(agent))).encode())
    poll_until(lambda: w.holder(agent)[1] == "poll", timeout=5, what="the poll holding the stream")
    time.sleep(0.5)                         # the answer is written as far as the socket takes it
    return s


def test_a_stop_waits_for_a_big_answer_the_client_reads_slowly(gateways, keys, pg):
    """An answer larger than the socket takes at once: libwebsockets keeps
    the rest and sends it as the client reads.  A stop must wait for that
    rest too (it once counted the body written when lws had taken it, and
    the node exited with the rest unsent)."""
    node = gateways(1)
    s = big_answer_requested(node, keys, pg)
    node.proc.send_signal(signal.SIGTERM)   # the stop runs while most of the body still waits
    got, _ = read_to_end(s, timeout=10.0)   # the node ends the connection as it exits
    s.close()
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head[:40]
    events = json.loads(body.decode())["events"]     # a cut body does not parse
    assert [e["id"] for e in events] == list(range(1, 101))
    assert node.proc.wait(10) == 0


def test_a_client_that_stops_reading_a_big_answer_is_dropped_after_the_send_timeout(gateways, keys, pg):
    node = gateways(1)                      # --send-timeout 1000
    s = big_answer_requested(node, keys, pg)
    time.sleep(3.0)                         # reads nothing for longer than --send-timeout
    got, _ = read_to_end(s, timeout=3.0)    # what was in flight, then the end the node made
    s.close()
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    length = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
              if line.lower().startswith(b"content-length:")]
    # ended with the part lws kept unsent (the socket's buffer still drains)
    assert length and 0 < len(body) < length[0]
    assert node.http("/healthz")[0] == 200


def test_a_stop_waits_at_most_its_grace_for_a_client_that_does_not_read(gateways, keys, pg):
    node = gateways(1, extra=("--send-timeout", "30000"))  # the send timeout would not end it
    s = big_answer_requested(node, keys, pg)
    start = time.monotonic()
    node.proc.send_signal(signal.SIGTERM)
    assert node.proc.wait(10) == 0
    took = time.monotonic() - start
    s.close()
    assert 1.9 < took < 4.5                 # the 2 s grace, not --stop-timeout (5 s, exit 1)
