"""A small stand-in for the gateway's terminal route, for the host service's
process tests: the control connection at /terminal/host and the data
connections at /terminal/stream/<session> as docs/protocol.md fixes them, with
every signature the host sends checked with an Ed25519 verifier of its own
(python3-cryptography), never with the host's code.

It plays the relay too: each data connection is handed to the test, which
then speaks for the device (text ops of the server, the stream's binary
frames).  The server runs in a thread of its own with its asyncio loop;
the test talks to it through thread-safe calls and queues, and every wait
is bounded.
"""
import asyncio
import base64
import json
import os
import queue
import secrets
import struct
import threading
import time
import urllib.error
import urllib.request
import uuid

import websockets
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

UUID_RE_LEN = 36
# A node's default --max-message (docs/gateway.md): a longer message from
# the host closes its connection with 1009, as a real node does.
MAX_MESSAGE = 16384


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def uuid7():
    """A UUIDv7 as the gateway draws conn and grant IDs."""
    ms = int(time.time() * 1000)
    raw = bytearray(ms.to_bytes(6, "big") + secrets.token_bytes(10))
    raw[6] = (raw[6] & 0x0F) | 0x70
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))


def verify(public_key, sig_text, *lines):
    """True when sig_text is the Ed25519 signature of the lines joined by a newline."""
    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(
            unb64url(sig_text), "\n".join(lines).encode())
        return True
    except (InvalidSignature, ValueError):
        return False


class Timeout(AssertionError):
    pass


class Loop:
    """An asyncio loop in a thread of its own, for connections the test's
    thread drives through call() and queues."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def call(self, coro, timeout=10.0):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)


def take(q, timeout, what):
    try:
        return q.get(timeout=timeout)
    except queue.Empty:
        raise Timeout("no %s within %.1f s" % (what, timeout)) from None


STREAM_SUBPROTOCOL = "bothy-terminal-stream"


class Conn:
    """One accepted WebSocket, seen from the test's thread."""

    def __init__(self, server, ws):
        self.server = server
        self.ws = ws
        self.inbox = queue.Queue()      # what the host sent: str or bytes
        self.closed = threading.Event()
        self.close_code = None          # the code of the host's close frame, if any
        self.reading = asyncio.Event()  # cleared: this side stops reading (backpressure)
        self.reading.set()

    def send(self, message):
        """A dict goes as JSON text, bytes as a binary message, str as text."""
        if isinstance(message, dict):
            message = json.dumps(message, separators=(",", ":"))
        self.server.call(self.ws.send(message))

    def close(self, code=1000):
        self.server.call(self.ws.close(code=code))

    def drop(self):
        """The connection ends without a close frame (a node that died)."""
        self.server.loop.call_soon_threadsafe(self.ws.transport.abort)

    def pause(self):
        """Stops reading the host's messages, as a relay whose other side is
        behind: websockets stops reading the socket once its queue is full,
        and TCP's window closes."""
        self.server.loop.call_soon_threadsafe(self.reading.clear)

    def unpause(self):
        self.server.loop.call_soon_threadsafe(self.reading.set)

    def recv(self, timeout=5.0, what="message"):
        return take(self.inbox, timeout, what)

    def recv_json(self, timeout=5.0, what="message"):
        m = self.recv(timeout, what)
        assert isinstance(m, str), "a binary message where %s was due" % what
        return json.loads(m)

    def wait_closed(self, timeout=5.0):
        if not self.closed.wait(timeout):
            raise Timeout("the connection did not close within %.1f s" % timeout)
        return self.close_code


class Control(Conn):
    """A control connection that passed hello (or pair) and got ready."""

    def __init__(self, server, ws):
        super().__init__(server, ws)
        self.hello = None
        self.conn = uuid7()

    def next_op(self, op, timeout=5.0, skip=("heartbeat", "report")):
        """The next message of op, skipping the ones in skip."""
        deadline = time.monotonic() + timeout
        while True:
            m = self.recv_json(max(0.01, deadline - time.monotonic()), op)
            if m["op"] == op:
                return m
            if m["op"] not in skip:
                raise AssertionError("expected %s, got %r" % (op, m))

    def open_session(self, session=None, grant=None, device=None):
        session = session or uuid7()
        grant = grant or uuid7()
        self.send({"op": "session.open", "session": session, "grant": grant,
                   "device": device or str(uuid.uuid4())})
        return session, grant


class Stream(Conn):
    """A data connection whose identify verified."""

    def __init__(self, server, ws, session):
        super().__init__(server, ws)
        self.session = session
        self.identify = None


class Client(Conn):
    """A device's stream to a real relay: identify with a terminal session
    token, then paired (or waiting first), as docs/protocol.md fixes it."""

    _loop = None

    @classmethod
    def open(cls, url, token, timeout=10.0):
        if cls._loop is None:
            cls._loop = Loop()

        async def connect():
            ws = await websockets.connect(url, max_size=1 << 20, ping_interval=None)
            await ws.send(json.dumps({"op": "identify", "side": "device", "token": token}))
            return ws
        client = cls(cls._loop, cls._loop.call(connect(), timeout))
        asyncio.run_coroutine_threadsafe(client._read(), cls._loop.loop)
        return client

    async def _read(self):
        try:
            while True:
                await self.reading.wait()
                self.inbox.put(await self.ws.recv())
        except websockets.ConnectionClosed:
            pass
        finally:
            self.close_code = self.ws.close_code if self.ws.close_code != 1006 else None
            self.closed.set()

    def paired(self, timeout=30.0):
        """Waits for paired (a waiting before it is skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            m = self.recv_json(max(0.01, deadline - time.monotonic()), "paired")
            if m == {"op": "paired"}:
                return self
            assert m == {"op": "waiting"}, "expected waiting or paired, got %r" % m


class FakeServer:
    """The terminal route of one node, as far as a host service sees it.

    hosts: {host ID: raw public key} of the hosts that may say hello;
    pairing: {host ID: code} of the hosts that may pair.
    """

    def __init__(self, heartbeat_ms=1000, state="active", ack_heartbeats=True, ssl=None):
        self.ssl = ssl                  # an ssl.SSLContext: wss:// (https:// for the host)
        self.heartbeat_ms = heartbeat_ms
        self.state = state
        self.ack_heartbeats = ack_heartbeats
        self.hosts = {}
        self.pairing = {}
        self.controls = queue.Queue()
        self.streams = queue.Queue()
        self.connects = []          # monotonic times of every control upgrade
        self.refusals = []          # why a hello, pair or identify was refused
        self.on_login = None        # a callable(ws) -> close code, for tests
        self.loop = asyncio.new_event_loop()
        self.port = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    # --- the thread ----------------------------------------------------------
    def start(self):
        self._thread.start()
        if not self._ready.wait(10):
            raise Timeout("the fake server did not start")
        return self

    def _run(self):
        asyncio.set_event_loop(self.loop)

        async def main():
            # a node answers the stream's subprotocol (protocol.md, "The path")
            self._server = await websockets.serve(self._handle, "127.0.0.1", 0, ssl=self.ssl,
                                                  max_size=MAX_MESSAGE, ping_interval=None,
                                                  subprotocols=[STREAM_SUBPROTOCOL])
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()
            await self._server.wait_closed()

        self.loop.run_until_complete(main())

    def call(self, coro, timeout=10.0):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self):
        async def shut():
            self._server.close()
        if self.port is not None and self._thread.is_alive():
            self.call(shut())
            self._thread.join(10)

    @property
    def url(self):
        if self.ssl is not None:
            return "https://localhost:%d" % self.port
        return "http://127.0.0.1:%d" % self.port

    # --- the test's side -----------------------------------------------------
    def control(self, timeout=10.0):
        return take(self.controls, timeout, "control connection")

    def stream(self, timeout=10.0):
        return take(self.streams, timeout, "data connection")

    # --- the server's side ---------------------------------------------------
    async def _handle(self, ws, path=None):
        path = ws.path
        if path == "/terminal/host":
            await self._control(ws)
        elif path.startswith("/terminal/stream/"):
            await self._stream(ws, path[len("/terminal/stream/"):])
        else:
            await ws.close(code=4002)

    async def _pump(self, conn, on_text=None):
        """Queues what the host sends until it closes; on_text may answer."""
        try:
            while True:
                await conn.reading.wait()
                message = await conn.ws.recv()
                if on_text is not None and isinstance(message, str):
                    if await on_text(json.loads(message)):
                        continue
                conn.inbox.put(message)
        except websockets.ConnectionClosed:
            pass
        finally:
            conn.close_code = conn.ws.close_code if conn.ws.close_code != 1006 else None
            conn.closed.set()

    async def _refuse(self, ws, why, code=4001):
        self.refusals.append(why)
        await ws.close(code=code)

    async def _control(self, ws):
        self.connects.append(time.monotonic())
        nonce = b64url(secrets.token_bytes(32))
        await ws.send(json.dumps({"op": "challenge", "nonce": nonce}))
        try:
            first = json.loads(await asyncio.wait_for(ws.recv(), 10))
        except (asyncio.TimeoutError, websockets.ConnectionClosed, ValueError):
            return
        host = first.get("host")
        if first.get("op") == "hello":
            if set(first) != {"op", "host", "sig", "version"}:
                return await self._refuse(ws, "hello members", 4002)
            key = self.hosts.get(host)
            if key is None or not verify(key, first["sig"], "bothy-host-hello-v1", host, nonce):
                return await self._refuse(ws, "hello signature")
        elif first.get("op") == "pair":
            if set(first) != {"op", "host", "code", "public_key", "sig"}:
                return await self._refuse(ws, "pair members", 4002)
            key = unb64url(first["public_key"])
            if (self.pairing.get(host) != first["code"] or len(key) != 32 or
                    not verify(key, first["sig"], "bothy-host-pair-v1", host, nonce)):
                return await self._refuse(ws, "pair")
            del self.pairing[host]
            self.hosts[host] = key
        else:
            return await self._refuse(ws, "first op", 4002)
        conn = Control(self, ws)
        conn.hello = first
        conn.nonce = nonce
        if self.on_login is not None:
            code = self.on_login(conn)
            if code:
                return await ws.close(code=code)
        state = "confirming" if first["op"] == "pair" else self.state
        await ws.send(json.dumps({"op": "ready", "conn": conn.conn, "state": state,
                                  "heartbeat_ms": self.heartbeat_ms}))
        self.controls.put(conn)

        async def answer(m):
            if m.get("op") == "heartbeat" and self.ack_heartbeats:
                await ws.send('{"op":"heartbeat_ack"}')
            return False

        await self._pump(conn, answer)

    async def _stream(self, ws, session):
        try:
            first = json.loads(await asyncio.wait_for(ws.recv(), 10))
        except (asyncio.TimeoutError, websockets.ConnectionClosed, ValueError):
            return
        if (set(first) != {"op", "side", "host", "session", "grant", "sig"} or
                first["op"] != "identify" or first["side"] != "host" or
                first["session"] != session):
            return await self._refuse(ws, "identify members", 4002)
        key = self.hosts.get(first["host"])
        if key is None or not verify(key, first["sig"], "bothy-host-data-v1", session,
                                     first["grant"]):
            return await self._refuse(ws, "identify signature")
        conn = Stream(self, ws, session)
        conn.identify = first
        self.streams.put(conn)
        await self._pump(conn)


# --- the stream's frames, as a device writes and reads them (docs/host.md) ----

def resume(stream=0, offset=0):
    return b"r" + struct.pack(">QQ", stream, offset)


def input_frame(data):
    return b"i" + data


def resize(rows, cols):
    return b"w" + struct.pack(">HH", rows, cols)


def parse_host_frame(frame):
    """("begin", stream, offset, skipped) or ("output", offset, data)."""
    assert isinstance(frame, bytes), "a text message where a frame was due: %r" % frame
    if frame[:1] == b"b":
        assert len(frame) == 25, "a begin frame of %d bytes" % len(frame)
        return ("begin",) + struct.unpack(">QQQ", frame[1:])
    if frame[:1] == b"o":
        assert 10 <= len(frame) <= MAX_MESSAGE, "an output frame of %d bytes" % len(frame)
        return ("output", struct.unpack(">Q", frame[1:9])[0], frame[9:])
    raise AssertionError("unknown frame type %r" % frame[:1])


def rest_json(base_url, method, path, token, body=None):
    """A device's REST call (docs/terminal.md) to a node or the edge:
    the status and the JSON body (None when empty), an error status too."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base_url + path, data=data, method=method,
                                 headers={"Authorization": "Bearer " + token,
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            text = r.read().decode()
            return r.status, json.loads(text) if text else None
    except urllib.error.HTTPError as e:
        text = e.read().decode()
        return e.code, json.loads(text) if text else None


class Device:
    """The device's side of a paired data connection: resume, then frames.

    stream is the fake relay's Stream (the test says paired for the relay)
    or a Client of a real relay that already said paired (announce=False)."""

    def __init__(self, stream, stream_id=0, offset=0, announce=True):
        self.stream = stream
        if announce:
            self.stream.send({"op": "paired"})
        self.stream.send(resume(stream_id, offset))
        begin = parse_host_frame(self.stream.recv(what="begin frame"))
        assert begin[0] == "begin", "the first frame is %r" % (begin,)
        _, self.stream_id, self.offset, self.skipped = begin
        self.begin = self.offset        # where this device's data starts
        self.pairings = 1               # a real relay may pair it again (_pair_again)
        self.data = bytearray()

    def _pair_again(self, message):
        """A real relay's waiting: the host's data connection went away and
        comes back with the same identify (protocol.md); once paired again
        the device resumes where it was, as at every pairing (host.md)."""
        assert json.loads(message) == {"op": "waiting"}, "unexpected text %r" % message
        self.stream.paired()
        self.stream.send(resume(self.stream_id, self.offset))
        begin = parse_host_frame(self.stream.recv(what="begin frame"))
        assert begin == ("begin", self.stream_id, self.offset, 0), \
            "paired again at %d of stream %x, got %r" % (self.offset, self.stream_id, begin)
        self.pairings += 1

    def send(self, data):
        self.stream.send(input_frame(data))

    def resize(self, rows, cols):
        self.stream.send(resize(rows, cols))

    def read_frame(self, timeout=5.0):
        message = self.stream.recv(timeout, "output frame")
        if isinstance(message, str) and isinstance(self.stream, Client):
            self._pair_again(message)
            return self.read_frame(timeout)
        kind, offset, data = parse_host_frame(message)
        assert kind == "output"
        assert offset == self.offset, "output at %d where %d was due" % (offset, self.offset)
        self.offset += len(data)
        self.data.extend(data)
        return data

    def read_until(self, needle, timeout=10.0):
        """Reads output until needle shows; returns everything read so far.

        The terminal echoes a typed line as it is written, before or after
        the shell's prompt: a needle must not occur in the echo (quote it:
        echo o''ne shows one) nor depend on where the prompt falls."""
        deadline = time.monotonic() + timeout
        searched = 0        # only the new bytes are searched: 10 MB reads stay linear
        while self.data.find(needle, searched) < 0:
            searched = max(0, len(self.data) - len(needle) + 1)
            left = deadline - time.monotonic()
            if left <= 0:
                raise Timeout("%r not seen within %.1f s; got %r" % (needle, timeout,
                                                                     bytes(self.data[-400:])))
            self.read_frame(left)
        return bytes(self.data)
