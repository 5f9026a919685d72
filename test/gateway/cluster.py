"""Helpers of the cross-node tests (D-M7-17-5 to 10): the application's side
seeded through the superuser connection (docs/sql-api.md, "For
applications"), a WebSocket client that reads what arrives strictly in
order, and REST calls with a bearer token.

"Nothing arrived" is never proved by a sleep: a client's queue is one FIFO
per connection, so once the node has decided a delivery (another receiver of
the same decision has it), a later message that does arrive (the answer to a
heartbeat, or a sentinel event) must come first when nothing else was queued.
"""
import asyncio
import datetime
import json
import time
import urllib.error
import urllib.request

import websockets

from conftest import identify, new_id, poll_until

# A node ID of no running gateway (a UUIDv7): its signals are another node's.
FOREIGN_NODE = "01890000-0000-7000-8000-0000000000bb"


class World:
    """The places, threads, memberships, agents, runs, notifications and
    agent events an application would commit."""

    def __init__(self, pg):
        self.pg = pg

    def q(self, sql, *args):
        return self.pg.query(sql, *args)

    def room(self, *members):
        """A new place with one thread and these members: (place, thread)."""
        place, thread = new_id(), new_id()
        self.q("SELECT bothy.place_put(%s)", place)
        self.q("SELECT bothy.thread_put(%s, %s)", thread, place)
        for person in members:
            self.join(place, person)
        return place, thread

    def thread(self, place):
        thread = new_id()
        self.q("SELECT bothy.thread_put(%s, %s)", thread, place)
        return thread

    def join(self, place, person):
        self.q("SELECT bothy.membership_added(%s, %s)", place, person)

    def leave(self, place, person):
        return self.q("SELECT bothy.membership_removed(%s, %s)", place, person)[0][0]

    def agent(self):
        agent = new_id()
        self.q("SELECT bothy.agent_put(%s)", agent)
        return agent

    def run_changed(self, run, thread, agent, version, document):
        return self.q("SELECT bothy.run_changed(%s, %s, %s, %s, %s::jsonb)",
                      run, thread, agent, version, json.dumps(document))[0][0]

    def run_versions(self, run, thread, agent, versions, pause=0.0):
        """run_changed of each version with document {"step": version}, one
        commit each in one session (a burst), `pause` seconds apart."""
        conn = self.pg.connect()
        try:
            for version in versions:
                conn.cursor().execute("SELECT bothy.run_changed(%s, %s, %s, %s, %s::jsonb)",
                                      (run, thread, agent, version, json.dumps({"step": version})))
                time.sleep(pause)
        finally:
            conn.close()

    def notify(self, recipient, kind="mention", quiet=False, count=1, thread=None,
               message=None, target=None):
        return self.q("SELECT bothy.notification_created(%s, %s, %s, %s, %s, %s, %s)::text",
                      recipient, kind, quiet, count, thread, message, target)[0][0]

    def append(self, agent, type="task.created", data=None):
        return self.q("SELECT bothy.agent_event_appended(%s, %s, %s::jsonb)",
                      agent, type, json.dumps(data if data is not None else {}))[0][0]

    def holder(self, agent):
        """(holder_session, holder_kind, acked) of the agent's stream."""
        row = self.q("SELECT holder_session::text, holder_kind, acked "
                     "FROM bothy.consumer_holder(%s)", agent)[0]
        return tuple(row)

    def present(self, person):
        """Whether bothy.presence_read finds a fresh row of the person."""
        return self.q("SELECT count(*) FROM bothy.presence_read(ARRAY[%s]::uuid[])", person)[0][0] > 0


class Client:
    """One ready WebSocket connection.  recv() skips agent.presence_changed
    of agents the test does not watch: the maintenance worker announces
    the offline of earlier tests' agents to every person connection."""

    def __init__(self, ws, ready, watch=()):
        self.ws = ws
        self.ready = ready
        self.watch = set(watch)
        self.kept = []          # what keep_alive read besides its answers

    @classmethod
    async def open(cls, url, token, watch=()):
        ws, ready = await identify(url, token)
        assert ready["op"] == "ready", ready
        return cls(ws, ready, watch)

    async def send(self, message):
        await self.ws.send(json.dumps(message))

    def _noise(self, msg):
        return (msg.get("op") == "event" and msg.get("type") == "agent.presence_changed"
                and msg["data"]["agent"] not in self.watch)

    async def recv(self, timeout=5.0):
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, "no message within %.1f s" % timeout
            try:
                msg = json.loads(await asyncio.wait_for(self.ws.recv(), left))
            except asyncio.TimeoutError:
                raise AssertionError("no message within %.1f s" % timeout) from None
            if not self._noise(msg):
                return msg

    async def event(self, type, timeout=5.0):
        """The next message, which must be an event of this type: its data."""
        msg = await self.recv(timeout)
        assert msg.get("op") == "event" and msg.get("type") == type, (type, msg)
        return msg["data"]

    async def before_ack(self):
        """Sends a heartbeat and returns what arrived before its answer."""
        await self.send({"op": "heartbeat"})
        seen = []
        while True:
            msg = await self.recv()
            if msg == {"op": "heartbeat_ack"}:
                return seen
            seen.append(msg)

    async def collect(self, seconds):
        """Every message within a bounded window (for counting)."""
        seen = []
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return seen
            try:
                msg = json.loads(await asyncio.wait_for(self.ws.recv(), left))
            except asyncio.TimeoutError:
                return seen
            if not self._noise(msg):
                seen.append(msg)

    async def closed(self, timeout=5.0):
        """(close code, the messages that came before the close)."""
        seen = []
        try:
            while True:
                seen.append(json.loads(await asyncio.wait_for(self.ws.recv(), timeout)))
        except websockets.ConnectionClosed as e:
            return e.code, [m for m in seen if not self._noise(m)]

    async def close(self):
        await self.ws.close()


async def keep_alive(client, every=0.5):
    """Heartbeats every `every` s (an agent that stays online) until
    cancelled; it reads the connection meanwhile, keeping what is not an
    answer in client.kept, and returns the close code once the node closed
    the connection."""
    try:
        while True:
            await client.send({"op": "heartbeat"})
            while True:
                msg = await client.recv(10)
                if msg == {"op": "heartbeat_ack"}:
                    break
                client.kept.append(msg)
            await asyncio.sleep(every)
    except websockets.ConnectionClosed as e:
        return e.code


def rest(node, path, token=None, timeout=10.0):
    """(status, decoded JSON body) of GET path on node."""
    request = urllib.request.Request("http://127.0.0.1:%d%s" % (node.port, path))
    if token is not None:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return r.status, json.loads(r.read().decode())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


def rest_started(node, path, token=None, timeout=70.0):
    """rest() in a thread, started at once (a long poll that waits while
    the test goes on): an awaitable of (status, body, seconds it took)."""
    def call():
        start = time.monotonic()
        status, body = rest(node, path, token, timeout)
        return status, body, time.monotonic() - start
    return asyncio.get_running_loop().run_in_executor(None, call)


def parse_time(text):
    """Seconds since the epoch of "2026-12-03T13:45:01.234Z"."""
    assert text.endswith("Z") and len(text) == 24, text
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def wait_present(world, *persons, timeout=8.0):
    """Until the presence writer's flush made every person's row fresh."""
    poll_until(lambda: all(world.present(p) for p in persons), timeout=timeout,
               what="presence rows")
