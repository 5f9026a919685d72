"""Refused upgrades are HTTP/1.1 answers (docs/protocol.md, "Connecting" and
"Terminal streams"): an upgrade of a path no endpoint takes, of a terminal
stream path with a query string, or naming a subprotocol its path does not
take, is answered `404 Not Found` with the body `not found\\n`, at a node
and through the real edge (nginx running the shipped
deploy/nginx/bothy-edge.conf), where a node that dropped the connection
without an answer became a 502.  The status line is read byte for byte: a
strict WebSocket client refuses HTTP/1.0.
"""
import base64
import os
import socket

import pytest

from conftest import keys, new_id  # noqa: F401  (keys is a fixture)
from edge import edge  # noqa: F401  (a fixture)
from terminal_streams import STREAM, SUBPROTOCOL, tnodes, tpg  # noqa: F401


def complete(got):
    """Whether got holds a head with a Content-Length and that much body."""
    head, _, body = got.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False


def answer(port, path, subprotocol=None):
    """The head and body of the answer to a WebSocket upgrade request: the
    head of a 101, or the head and its Content-Length of body (the edge
    keeps its client's connection), else what came until the end."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    protocol = "Sec-WebSocket-Protocol: %s\r\n" % subprotocol if subprotocol else ""
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n%s\r\n"
               % (path, base64.b64encode(os.urandom(16)).decode(), protocol)).encode())
    got = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
            if b"\r\n\r\n" in got and (got.startswith(b"HTTP/1.1 101") or complete(got)):
                break
    finally:
        s.close()
    head, _, body = got.partition(b"\r\n\r\n")
    return head.decode(errors="replace"), body


def refused(head, body):
    return head.split("\r\n")[0] == "HTTP/1.1 404 Not Found" and body == b"not found\n"


def refusals(session):
    """(path, subprotocol) of upgrades every node refuses."""
    return [
        (STREAM + session + "?x=1", None),                 # a query string
        (STREAM + session + "?", None),                    # an empty one
        (STREAM + session + "?x=1", SUBPROTOCOL),
        (STREAM + session + "/", None),                    # not exactly the ID
        (STREAM + session.upper(), None),
        ("/terminal/nothing", None),                       # no endpoint's path
        (STREAM + session, "chat"),                        # another subprotocol
        (STREAM + session, "chat, superchat"),
        (STREAM + session, "bothy-pg"),                    # the node's own database protocol
        (STREAM + session, "bothy-gateway"),               # /gateway's name: a stream takes its own only
        (STREAM + session, "bothy-gateway, " + SUBPROTOCOL),   # the first name the node knows decides
        ("/gateway", SUBPROTOCOL),                         # another path's subprotocol
        ("/gateway", "chat"),
        ("/terminal/host", SUBPROTOCOL),
    ]


def test_a_node_answers_every_refused_upgrade_404_in_http_1_1(tnodes):
    node, = tnodes(1)
    session = new_id()
    for path, subprotocol in refusals(session):
        head, body = answer(node.port, path, subprotocol)
        assert refused(head, body), (path, subprotocol, head, body)
    # what is taken still upgrades: the path exactly, with its subprotocol, the default one or none
    for path, subprotocol in [(STREAM + session, None), (STREAM + session, SUBPROTOCOL),
                              (STREAM + session, "chat, " + SUBPROTOCOL),
                              ("/gateway", None),
                              ("/gateway?v=1", None), ("/gateway", "bothy-gateway")]:
        head, _ = answer(node.port, path, subprotocol)
        assert head.startswith("HTTP/1.1 101"), (path, subprotocol, head)


@pytest.mark.parametrize("subprotocol", ["chat", "bothy-pg"])
def test_the_edge_passes_a_nodes_refusal_of_a_subprotocol_as_404(tnodes, edge, subprotocol):
    node, = tnodes(1)
    e = edge([node])
    head, body = answer(e.port, STREAM + new_id(), subprotocol)
    # nginx answers in its own words (a 502 before: the node had ended the connection)
    assert head.split("\r\n")[0] == "HTTP/1.1 404 Not Found", head
    assert body == b"not found\n", body
