#!/usr/bin/python3
"""demo/driver.py: the application and the agent of the demo, so that the
page has something live to show.  Started by demo/cluster with its settings
in the environment (the agent's token is never on the command line):

- an agent consumer, connected through the edge like any client, that
  heartbeats every heartbeat_ms / 2 (so its presence shows online) and
  resumes its session after a dropped connection;
- a run whose document advances every second through bothy.run_changed
  with a rising version, finishes, and starts again with the next task;
- a notification every BOTHY_DEMO_NOTIFY_EVERY seconds to Ada or Grace in
  turn, through bothy.notification_created.

The database calls use the login bothy_demo_app (role bothy_app): only the
application functions.  Debian's python3-psycopg2 and python3-websockets;
SIGTERM or SIGINT ends it with a normal close.
"""
import asyncio
import json
import os
import signal
import sys
import time

import psycopg2
import websockets

EDGE = os.environ["BOTHY_DEMO_EDGE"]
DSN = os.environ["BOTHY_DEMO_DSN"]
AGENT_TOKEN = os.environ["BOTHY_DEMO_AGENT_TOKEN"]
NOTIFY_EVERY = float(os.environ.get("BOTHY_DEMO_NOTIFY_EVERY", "10"))
RUN = os.environ["DEMO_RUN"]
THREAD = os.environ["DEMO_THREAD"]
AGENT = os.environ["DEMO_AGENT"]
PEOPLE = [os.environ["DEMO_ADA"], os.environ["DEMO_GRACE"]]

# What the agent works on, one task after the other: a title and its steps.
TASKS = [
    ("Summarise this week's support tickets",
     ["Fetching tickets", "Reading ticket {n} of 112", "Grouping by topic",
      "Drafting the summary", "Checking the figures"]),
    ("Draft the release notes for 0.2",
     ["Collecting merged changes", "Reading change {n} of 48", "Sorting by area",
      "Writing the highlights", "Proofreading"]),
    ("Triage new bug reports",
     ["Loading the queue", "Reproducing report {n} of 17", "Labelling",
      "Assigning owners", "Posting the summary"]),
]
RUN_SECONDS = 24          # one task from 0 to 100 %
DONE_SECONDS = 4          # a finished task stays on the page this long
HINT_KINDS = ["mention", "reply", "run", "direct"]


def log(msg):
    print(time.strftime("%H:%M:%S"), msg, flush=True)


class Database:
    """One autocommit connection, opened again after a failure."""

    def __init__(self):
        self.conn = None

    def call(self, sql, args):
        for attempt in (1, 2):
            try:
                if self.conn is None or self.conn.closed:
                    self.conn = psycopg2.connect(DSN, connect_timeout=5)
                    self.conn.autocommit = True
                with self.conn.cursor() as cur:
                    cur.execute(sql, args)
                    return cur.fetchone()[0]
            except psycopg2.OperationalError as e:
                self.conn = None
                if attempt == 2:
                    raise
                log("database connection lost (%s), connecting again" % type(e).__name__)


class Versions:
    """Rising run versions that stay above those of a previous start:
    milliseconds of the clock, or one more than the last when faster."""

    def __init__(self):
        self.last = 0

    def next(self):
        self.last = max(self.last + 1, int(time.time() * 1000))
        return self.last


async def run_loop(db, stop):
    versions = Versions()
    task = 0
    while not stop.is_set():
        title, steps = TASKS[task % len(TASKS)]
        log("run: started %r" % title)
        ticks = RUN_SECONDS
        for tick in range(ticks + 1):
            progress = tick / ticks
            step = steps[min(int(progress * len(steps)), len(steps) - 1)]
            doc = {"title": title, "status": "running", "progress": round(progress, 3),
                   "step": step.format(n=1 + tick * 3), "task": task + 1}
            if tick == ticks:
                doc.update(status="succeeded", step="Done")
            await call(db, "SELECT bothy.run_changed(%s, %s, %s, %s, %s)",
                       (RUN, THREAD, AGENT, versions.next(), json.dumps(doc)))
            if await wait(stop, 1.0):
                return
        log("run: finished %r" % title)
        if await wait(stop, DONE_SECONDS):
            return
        task += 1


async def notify_loop(db, stop):
    n = 0
    while not await wait(stop, NOTIFY_EVERY):
        recipient = PEOPLE[n % len(PEOPLE)]
        kind = HINT_KINDS[n % len(HINT_KINDS)]
        if await call(db, "SELECT bothy.notification_created(%s, %s, false, %s, %s)",
                      (recipient, kind, n + 1, THREAD)):
            log("notification %d (%s) to %s" % (n + 1, kind, "Ada" if n % 2 == 0 else "Grace"))
        n += 1


async def call(db, sql, args):
    """One database call off the loop; a failure is logged and skipped, so
    a restarting database pauses the demo instead of ending it."""
    try:
        await asyncio.to_thread(db.call, sql, args)
        return True
    except psycopg2.Error as e:
        log("database call failed (%s)" % type(e).__name__)
        return False


async def wait(stop, seconds):
    """Sleeps, or returns True at once when the driver stops."""
    try:
        await asyncio.wait_for(stop.wait(), seconds)
        return True
    except asyncio.TimeoutError:
        return False


async def agent_loop(stop):
    """The agent consumer: identify, then resume after every drop, with a
    back-off; a refused resume token or a fence means identify again."""
    resume = None
    backoff = 0.5
    while not stop.is_set():
        try:
            async with websockets.connect(EDGE, open_timeout=5, ping_interval=None,
                                          close_timeout=1) as ws:
                op = "resume" if resume else "identify"
                await ws.send(json.dumps({"op": op, "token": resume or AGENT_TOKEN}))
                ready = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if ready.get("op") != "ready":
                    raise RuntimeError("%s answered %s" % (op, ready.get("code", ready.get("op"))))
                resume, backoff = ready["resume"], 0.5
                log("agent: %s, node ...%s" % ("resumed" if op == "resume" else "online",
                                               ready["node"][-4:]))
                await serve_agent(ws, ready["heartbeat_ms"] / 2000.0, stop)
        except websockets.ConnectionClosed as e:
            code = e.rcvd.code if e.rcvd else 1006
            log("agent: connection closed (%d)" % code)
            if code in (4001, 4002, 4015):
                resume = None        # refused, malformed or fenced: start over
        except (OSError, asyncio.TimeoutError, websockets.WebSocketException, RuntimeError) as e:
            log("agent: cannot connect (%s)" % type(e).__name__)
        if await wait(stop, backoff):
            return
        backoff = min(backoff * 2, 8)


async def serve_agent(ws, beat_every, stop):
    async def beat():
        while not await wait(stop, beat_every):
            await ws.send('{"op":"heartbeat"}')
        await ws.close(1000, "driver stopping")

    beating = asyncio.create_task(beat())
    try:
        async for raw in ws:
            msg = json.loads(raw)
            if msg.get("op") == "event" and msg.get("type") == "agent.event":
                # nothing to do for the demo's agent: done at once
                await ws.send(json.dumps({"op": "ack", "event": msg["data"]["id"]}))
    finally:
        beating.cancel()


async def main():
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    db = Database()
    log("driver: started")
    tasks = [asyncio.create_task(c) for c in (run_loop(db, stop), notify_loop(db, stop),
                                                agent_loop(stop))]
    # a task that fails is a bug: stop the others too, so the driver exits
    await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    stop.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    failed = [r for r in results if isinstance(r, BaseException)]
    for r in failed:
        log("driver: %s: %s" % (type(r).__name__, r))
    log("driver: stopped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
