"""Raw sockets for the tests that need what a WebSocket library hides: a
small receive window that makes the node's output back up, frames sent
byte for byte, and every byte read until the node ends the connection."""
import base64
import os
import socket
import struct
import time


def raw_ws(port, rcvbuf=4096):
    """A WebSocket client on a bare socket with a tiny receive buffer that
    never reads: the server's writes back up into its send queue."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET /gateway HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
               % key).encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = s.recv(4096)
        assert chunk, "handshake refused"
        reply += chunk
    assert reply.startswith(b"HTTP/1.1 101")
    return s


def frame(text):
    """A masked text frame, as a client sends it."""
    payload = text.encode()
    mask = os.urandom(4)
    n = len(payload)
    head = struct.pack("!BB", 0x81, 0x80 | n) if n < 126 else struct.pack("!BBH", 0x81, 0x80 | 126, n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def read_to_end(s, timeout):
    """Every byte until the node ends the connection, and how it ended
    ("eof" or "reset"); fails when it is not ended within timeout seconds.

    A bytearray, not bytes joined as they come: through a small receive
    window megabytes arrive in thousands of small reads, and copying all
    that was read at each of them held the reader for seconds, longer than
    the node gives a client that reads slowly (the 2 s of a stop)."""
    got = bytearray()
    deadline = time.monotonic() + timeout
    while True:
        s.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            chunk = s.recv(1 << 20)
        except ConnectionResetError:
            return bytes(got), "reset"
        except socket.timeout:
            raise AssertionError("the node did not end the connection within %.0f s (%d bytes read)"
                                 % (timeout, len(got)))
        if not chunk:
            return bytes(got), "eof"
        got += chunk
