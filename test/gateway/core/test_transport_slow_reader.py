"""What a client that stops reading sees of its close 4008 (docs/protocol.md,
"Close codes"): the node decides the close (here by --send-timeout, 1 s),
but while the kernel's buffers are full the close frame cannot go out
behind the message they hold.  A client that reads again within the close
grace (2 s) gets the rest of that message and then the close frame 4008; one
that reads only after it gets what was in flight, cut inside the message,
then the end of the TCP connection without a close frame: 1006.

Raw sockets with a small receive window, so that the bytes are seen as they
arrive, and a run document larger than the node's socket buffer can hold
(tcp_wmem's maximum), so that the rest of it waits in the node."""
import json
import struct
import time

from cluster import World
from conftest import new_id, poll_until
from rawsock import frame, raw_ws, read_to_end

CLOSE_GRACE_S = 2.0     # src/gateway/core/conn.c: how long a decided close waits for the client


def frames(data):
    """The server's (unmasked) frames in data as (opcode, payload), and the
    bytes of an incomplete last frame."""
    out = []
    i = 0
    while True:
        if len(data) - i < 2:
            return out, data[i:]
        b0, b1 = data[i], data[i + 1]
        n, head = b1 & 0x7F, 2
        if n == 126:
            if len(data) - i < 4:
                return out, data[i:]
            n, head = struct.unpack("!H", data[i + 2:i + 4])[0], 4
        elif n == 127:
            if len(data) - i < 10:
                return out, data[i:]
            n, head = struct.unpack("!Q", data[i + 2:i + 10])[0], 10
        if len(data) - i < head + n:
            return out, data[i:]
        assert b0 & 0x80, "a fragmented message: the node sends whole frames"
        out.append((b0 & 0x0F, data[i + head:i + head + n]))
        i += head + n


def without_presence(got):
    """The frames but agent.presence_changed: it goes to every person
    connection (protocol.md, "Events"), so the worker's offline of an agent
    an earlier test left can reach this one at any moment before the run
    document; any other frame stays and is asserted on."""
    def presence(op, payload):
        if op != 1:
            return False
        msg = json.loads(payload)
        return msg.get("op") == "event" and msg.get("type") == "agent.presence_changed"
    return [(op, payload) for op, payload in got if not presence(op, payload)]


def stalled_client(gateways, keys, pg):
    """A person's connection that reads `ready` and then nothing, and a run
    document for it too large to fit in the sockets' buffers; returns the
    node, the socket and the bytes after `ready`, once the node has decided
    4008 (the send timeout: 1 s without progress)."""
    with open("/proc/sys/net/ipv4/tcp_wmem") as f:
        most = int(f.read().split()[2])
    size = min(most + 2_000_000, 8_000_000)             # half of --send-queue at most
    node = gateways(1, extra=["--send-queue", "16777216"])
    w = World(pg)
    member = new_id()
    _, thread = w.room(member)
    s = raw_ws(node.port)
    s.sendall(frame(json.dumps({"op": "identify", "token": keys.person(member)})))
    s.settimeout(5)
    seen = b""
    while True:
        got, rest = frames(seen)
        if got:
            break
        chunk = s.recv(4096)
        assert chunk, "closed before ready"
        seen += chunk
    assert json.loads(got[0][1])["op"] == "ready"
    after_ready = rest                  # bytes past ready, if any
    assert w.run_changed(new_id(), thread, w.agent(), 1, {"blob": "x" * size}) is True
    poll_until(lambda: node.metric('bothy_gateway_closes_total{code="4008"}') == 1, timeout=8,
               what="the node deciding 4008 for the client that does not read")
    return node, s, after_ready, size


def test_a_client_that_reads_again_within_the_grace_gets_the_message_then_4008(gateways, keys, pg):
    node, s, early, size = stalled_client(gateways, keys, pg)
    decided = time.monotonic()
    data, how = read_to_end(s, timeout=15)
    s.close()
    assert time.monotonic() - decided < CLOSE_GRACE_S + 15
    got, rest = frames(early + data)
    got = without_presence(got)
    assert rest == b"", "an incomplete frame before the end: %d bytes" % len(rest)
    ops = [op for op, _ in got]
    assert ops == [1, 8], ops                   # the run document whole, then the close frame
    event = json.loads(got[0][1])
    assert event["type"] == "run.updated" and len(event["data"]["blob"]) == size
    code, reason = struct.unpack("!H", got[1][1][:2])[0], got[1][1][2:]
    assert (code, reason) == (4008, b"send queue full")
    assert "client closed: send queue full" in node.log


def test_a_client_that_reads_only_after_the_grace_sees_1006(gateways, keys, pg):
    node, s, early, size = stalled_client(gateways, keys, pg)
    # the node drops the connection once the grace has passed, before any read
    poll_until(lambda: node.metric('bothy_gateway_connections{kind="person"}') == 0,
               timeout=CLOSE_GRACE_S + 5, what="the node dropping the connection after the grace")
    data, how = read_to_end(s, timeout=15)
    s.close()
    got, rest = frames(early + data)
    got = without_presence(got)
    # what was in flight, cut inside the run document: no close frame at all
    assert [op for op, _ in got] == [], [(op, payload[:120]) for op, payload in got]
    assert 0 < len(rest) < size, len(rest)
    assert b'"type":"run.updated"' in rest[:200]
    assert how in ("eof", "reset")
    # the node counts its decision, not what the client saw
    assert node.metric('bothy_gateway_closes_total{code="4008"}') == 1
    assert node.metric('bothy_gateway_closes_total{code="1006"}') == 0
