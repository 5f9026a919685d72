"""A fake host service for the terminal tests: it speaks the control
protocol of docs/protocol.md ("The terminal: control connection") with a
real Ed25519 key (python3-cryptography), over a real WebSocket
(python3-websockets), and the host side of a data connection.

What a test can make it do: pair or say hello, report, heartbeat every
heartbeat_ms or stop, answer probes or ignore them, run twice with one
key (two ControlConnections of one HostKey, on two nodes), answer
session.open with session.started, and open a data connection with the
pinned identify signature.

Everything it receives is kept in order with its arrival time; probes
and heartbeat acknowledgements are handled by its reader and kept too.
"""
import asyncio
import base64
import hashlib
import json
import time

import websockets
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


def b64e(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def b64d(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class HostKey:
    """An Ed25519 key pair, as a host service keeps it."""

    def __init__(self, seed=None):
        self.private = (Ed25519PrivateKey.from_private_bytes(seed) if seed is not None
                        else Ed25519PrivateKey.generate())
        self.public = self.private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    def sign(self, *lines):
        """The signature of ASCII lines joined by "\\n", no trailing newline."""
        return b64e(self.private.sign("\n".join(lines).encode("ascii")))

    @property
    def fingerprint(self):
        """SHA256: and the standard base64 of SHA-256 of the raw key, unpadded."""
        return "SHA256:" + base64.b64encode(hashlib.sha256(self.public).digest()).decode().rstrip("=")


class Closed(Exception):
    def __init__(self, code):
        super().__init__("closed with %s" % code)
        self.code = code


class ControlConnection:
    """One control connection of a host service at /terminal/host."""

    def __init__(self, base_url, key, host=None):
        self.url = base_url.rstrip("/") + "/terminal/host"
        self.key = key
        self.host = host
        self.answer_probes = True
        self.ws = None
        self.nonce = None
        self.ready = None
        self.received = []          # (monotonic time, message) of everything after the challenge
        self.probes = []            # monotonic times of the probes received
        self.close_code = None
        self._queue = asyncio.Queue()
        self._reader = None
        self._beater = None

    # --- connecting ---------------------------------------------------------

    async def connect(self):
        self.ws = await websockets.connect(self.url, max_size=None)
        challenge = json.loads(await asyncio.wait_for(self.ws.recv(), 5))
        assert challenge["op"] == "challenge" and set(challenge) == {"op", "nonce"}, challenge
        self.nonce = challenge["nonce"]
        self._reader = asyncio.ensure_future(self._read())
        return self

    async def hello(self, host=None, version="fakehost/1", sig=None):
        """hello; returns ready, or raises Closed with the close code."""
        self.host = host or self.host
        await self.send({"op": "hello", "host": self.host, "version": version,
                         "sig": sig or self.key.sign("bothy-host-hello-v1", self.host, self.nonce)})
        self.ready = await self.expect("ready")
        return self.ready

    async def pair(self, host, code, sig=None):
        """pair with the one-time code; returns ready (state confirming)."""
        self.host = host
        await self.send({"op": "pair", "host": host, "code": code,
                         "public_key": b64e(self.key.public),
                         "sig": sig or self.key.sign("bothy-host-pair-v1", host, self.nonce)})
        self.ready = await self.expect("ready")
        return self.ready

    async def report(self, sessions=()):
        await self.send({"op": "report", "sessions": list(sessions)})

    # --- heartbeats -----------------------------------------------------------

    def start_heartbeats(self, every_ms=None):
        """A heartbeat every heartbeat_ms of ready (or every_ms) until stopped."""
        every = (every_ms or self.ready["heartbeat_ms"]) / 1000.0

        async def beat():
            try:
                while True:
                    await self.send({"op": "heartbeat"})
                    await asyncio.sleep(every)
            except (websockets.ConnectionClosed, Closed):
                pass
        self._beater = asyncio.ensure_future(beat())

    def stop_heartbeats(self):
        if self._beater is not None:
            self._beater.cancel()
            self._beater = None

    # --- messages ---------------------------------------------------------------

    async def send(self, message):
        await self.ws.send(json.dumps(message, separators=(",", ":")))

    async def send_raw(self, text):
        await self.ws.send(text)

    async def _read(self):
        try:
            async for text in self.ws:
                msg = json.loads(text)
                now = time.monotonic()
                self.received.append((now, msg))
                if msg.get("op") == "probe":
                    self.probes.append(now)
                    if self.answer_probes:
                        await self.send({"op": "probe_ack", "sig": self.key.sign(
                            "bothy-host-probe-v1", self.host, msg["nonce"])})
                    continue
                if msg.get("op") == "heartbeat_ack":
                    continue
                await self._queue.put(msg)
        except websockets.ConnectionClosed as e:
            self.close_code = e.code
        finally:
            if self.close_code is None:
                self.close_code = self.ws.close_code
            await self._queue.put(None)

    async def next(self, timeout=5.0):
        """The next message that is neither a probe nor a heartbeat_ack;
        Closed once the connection closed."""
        try:
            msg = await asyncio.wait_for(self._queue.get(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError("no message within %.1f s" % timeout) from None
        if msg is None:
            await self._queue.put(None)     # every later call sees the close too
            raise Closed(self.close_code)
        return msg

    async def expect(self, op, timeout=5.0):
        msg = await self.next(timeout)
        assert msg.get("op") == op, (op, msg)
        return msg

    async def nothing_for(self, seconds):
        """Nothing but probes and acks arrives for seconds (the connection stays open)."""
        try:
            msg = await asyncio.wait_for(self._queue.get(), seconds)
        except asyncio.TimeoutError:
            return
        if msg is None:
            await self._queue.put(None)
            raise Closed(self.close_code)
        raise AssertionError("unexpected %r" % msg)

    async def closed(self, timeout=5.0):
        """The close code, skipping what arrives before it."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "not closed within %.1f s" % timeout
            try:
                await self.next(left)
            except Closed as e:
                return e.code

    async def started(self, session, grant):
        await self.send({"op": "session.started", "session": session, "grant": grant})

    def times_of(self, op):
        return [t for t, m in self.received if m.get("op") == op]

    async def close(self):
        self.stop_heartbeats()
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            try:
                await asyncio.wait_for(self._reader, 5)
            except asyncio.TimeoutError:
                self._reader.cancel()


async def data_connection(base_url, key, host, session, grant):
    """The host's data connection of a session: the WebSocket at
    /terminal/stream/<session> after its identify (signed over
    bothy-host-data-v1, session, grant)."""
    ws = await websockets.connect("%s/terminal/stream/%s" % (base_url.rstrip("/"), session),
                                  max_size=None)
    await ws.send(json.dumps({"op": "identify", "side": "host", "host": host, "session": session,
                              "grant": grant,
                              "sig": key.sign("bothy-host-data-v1", session, grant)},
                             separators=(",", ":")))
    return ws
