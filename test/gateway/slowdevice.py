"""A device on a bare socket that reads its stream at a fixed rate
(docs/terminal.md, "Slow networks"): a small receive buffer, a budget of
bytes a tick, and the pong a browser or any WebSocket library sends by
itself to each ping (RFC 6455), only once it read the ping, that is
everything before it.  Used through the real edge by the slow-reader tests
and, reading nothing and answering nothing, as a device that is gone.
"""
import base64
import json
import os
import queue
import socket
import struct
import threading
import time

from terminal_streams import STREAM, SUBPROTOCOL

TICK_S = 0.05


def masked(opcode, payload):
    """One masked frame of a client (payload under 65536 bytes)."""
    mask = os.urandom(4)
    n = len(payload)
    head = struct.pack("!BB", 0x80 | opcode, 0x80 | n) if n < 126 else \
        struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
    keystream = (mask * (n // 4 + 1))[:n]
    return head + mask + (int.from_bytes(payload, "big") ^ int.from_bytes(keystream, "big")).to_bytes(n, "big")


class SlowDevice(threading.Thread):
    """Connects to port, identifies, then reads `rate` bytes a second (0:
    never reads) until stop() or the close frame.  read: the binary
    payload bytes read; pongs: pongs sent; bad_marks: the payloads of
    pings that were not the count of binary payload bytes read before
    them (docs/protocol.md, "Pings"); close_code: the close frame's code,
    or None; pong_sent: the count the last pong handed to the socket
    echoed.  What it sends (pongs, send()) goes in order from a thread of
    its own, as a browser's writes never stop its reading."""

    def __init__(self, port, session, rate, rcvbuf=8192, identify=None, outbox=0):
        super().__init__(daemon=True)
        self.rate = rate
        self.read = 0
        self.pongs = 0
        self.pong_sent = 0          # the count of the last pong handed to the socket
        self.texts = []
        self.bad_marks = []
        self._out = queue.Queue(outbox)     # 0: unbounded; else send() blocks when full
        self.close_code = None
        self.ended = None           # monotonic time of the close frame or EOF
        self._halt = threading.Event()
        self._buf = bytearray()
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.connect(("127.0.0.1", port))
        s.sendall(("GET %s%s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                   "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
                   "Sec-WebSocket-Protocol: %s\r\n\r\n"
                   % (STREAM, session.id, base64.b64encode(os.urandom(16)).decode(), SUBPROTOCOL)).encode())
        head = b""
        s.settimeout(5)
        while b"\r\n\r\n" not in head:
            chunk = s.recv(1)       # the head only: the stream is read at the rate
            assert chunk, "handshake refused"
            head += chunk
        assert head.startswith(b"HTTP/1.1 101"), head
        s.sendall(masked(0x1, json.dumps(identify or session.device_identify()).encode()))
        self.sock = s

    def wait_text(self, op, timeout=10):
        """Reads (at once, whatever the rate) until a text message of op came."""
        deadline = time.monotonic() + timeout
        while not any(json.loads(t)["op"] == op for t in self.texts):
            assert time.monotonic() < deadline, "no %s: %s" % (op, self.texts)
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            chunk = self.sock.recv(4096)
            assert chunk, "closed before %s" % op
            self._frames(chunk)

    def _frames(self, chunk):
        self._buf += chunk
        while True:
            b = self._buf
            if len(b) < 2:
                return
            opcode, n, at = b[0] & 0x0F, b[1] & 0x7F, 2
            if n == 126:
                if len(b) < 4:
                    return
                n, at = struct.unpack("!H", b[2:4])[0], 4
            elif n == 127:
                if len(b) < 10:
                    return
                n, at = struct.unpack("!Q", b[2:10])[0], 10
            if len(b) < at + n:
                return
            payload = bytes(b[at:at + n])
            del self._buf[:at + n]
            if opcode in (0x0, 0x2):
                self.read += n
                self.binary(payload)
            elif opcode == 0x1:
                self.texts.append(payload.decode())
            elif opcode == 0x9:
                if payload and payload != str(self.read).encode():
                    self.bad_marks.append((payload, self.read))
                self._out.put((masked(0xA, payload), payload))
                self.pongs += 1
            elif opcode == 0x8:
                self.close_code = struct.unpack("!H", payload[:2])[0] if n >= 2 else 1005
                self.ended = time.monotonic()
                return

    def binary(self, payload):
        """Each binary message's payload, as it is read: a subclass that
        reads the stream's frames overrides it."""

    def send(self, data, piece=4096):
        """Binary messages of data, piece bytes each, after what waits."""
        for at in range(0, len(data), piece):
            frame = masked(0x2, data[at:at + piece])
            while not self._halt.is_set():
                try:
                    self._out.put((frame, None), timeout=0.2)
                    break
                except queue.Full:
                    pass

    def _writer(self):
        # a socket of its own: the reader's short timeout would cut a
        # sendall that waits for the node to read again (a paused side)
        out = self.sock.dup()
        out.settimeout(60)
        while not self._halt.is_set():
            item = self._out.get()
            if item is None:
                break
            frame, pong = item
            try:
                out.sendall(frame)
            except OSError:
                break
            if pong and pong.isdigit():
                self.pong_sent = int(pong)
        out.close()

    def run(self):
        writer = threading.Thread(target=self._writer, daemon=True)
        writer.start()
        self.sock.settimeout(TICK_S)
        while not self._halt.is_set() and self.ended is None:
            start = time.monotonic()
            budget = int(self.rate * TICK_S)
            while budget > 0 and self.ended is None:
                try:
                    chunk = self.sock.recv(budget)
                except socket.timeout:
                    break
                except OSError:
                    chunk = b""
                if not chunk:
                    self.ended = time.monotonic()
                    break
                budget -= len(chunk)
                self._frames(chunk)
            time.sleep(max(0.0, TICK_S - (time.monotonic() - start)))

    def stop(self):
        self._halt.set()
        try:
            self._out.put_nowait(None)
        except queue.Full:
            pass
        try:
            self.sock.shutdown(socket.SHUT_RDWR)    # wakes a writer blocked in sendall
        except OSError:
            pass
        if self.is_alive():
            self.join(5)
        self.sock.close()
