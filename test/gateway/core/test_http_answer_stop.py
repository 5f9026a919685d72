"""The core's HTTP answers larger than the socket takes at once
(docs/gateway.md, --send-timeout and "Stop: SIGTERM"):
libwebsockets keeps the rest and sends it as the client reads.  A stop
waits for that rest, but at most its grace for a client that reads
nothing, and a client that stops reading is dropped after --send-timeout
with the node still serving.  The big answer is a REST poll of agent
events, the largest answer a route gives."""
import json
import signal
import socket
import time

from cluster import World
from conftest import poll_until
from rawsock import read_to_end

PATH = "/v1/agent/events"


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
