"""The edge: real nginx running the shipped deploy/nginx/bothy-edge.conf in
front of two real gateway nodes.  Clients reach either node through it, the
shipped timeouts never cut a connection before the node would, and when a
node is killed its clients come back through the edge on the survivor:
same session (resume), the device bound there, the agent's stream taken
over there, the dead node's presence aged out.  The edge logs no address,
no request line and no token.

The REST long poll through the edge is in the plan but not in the gateway
yet, so it is not tested here."""
import asyncio
import json
import re
import subprocess
import time
import urllib.error
import urllib.request

from conftest import GATEWAY, closed_with, identify, new_id, poll_until, run
from edge import edge, shipped_text  # noqa: F401  (edge is a fixture)

# GET /v1/agent/events wait_ms: 0..60000, default 25000 (the protocol plan;
# the REST poll is not in the binary yet, so its range cannot be read there).
PLAN_RANGES = {"wait_ms": (25000, 60000)}


async def ready_on(url, token, node, tries=8, op="identify"):
    """Connects through the edge until the connection lands on `node`
    (round robin: every other one does); the others are closed."""
    for _ in range(tries):
        ws, ready = await identify(url, token, op)
        assert ready["op"] == "ready", ready
        if ready["node"] == node:
            return ws, ready
        await ws.close()
    raise AssertionError("no connection reached the node in %d tries" % tries)


async def acked(ws):
    """A heartbeat answered: events that come first (agent presence, say)
    are skipped."""
    await ws.send('{"op":"heartbeat"}')
    deadline = time.monotonic() + 5
    while True:
        reply = json.loads(await asyncio.wait_for(ws.recv(), deadline - time.monotonic()))
        if reply.get("op") != "event":
            return reply


async def node_id(node, keys):
    ws, ready = await identify(node.url, keys.person())
    await ws.close()
    return ready["node"]


def edge_get(e, path):
    try:
        with urllib.request.urlopen(e.http_url + path, timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as err:
        return err.code


def test_person_and_agent_reach_both_nodes_through_the_edge(gateways, keys, edge):
    a, b = gateways(2)
    e = edge([a, b])

    async def go():
        ids = {await node_id(a, keys), await node_id(b, keys)}
        person, p_ready = await identify(e.url, keys.person())
        agent, g_ready = await identify(e.url, keys.agent())
        acks = [await acked(person), await acked(agent)]
        others = [await identify(e.url, keys.person()) for _ in range(4)]
        seen = {p_ready["node"], g_ready["node"]} | {ready["node"] for _, ready in others}
        for ws in [person, agent] + [ws for ws, _ in others]:
            await ws.close()
        return ids, p_ready, g_ready, acks, seen
    ids, p_ready, g_ready, acks, seen = run(go())
    assert len(ids) == 2
    assert p_ready["op"] == "ready" and p_ready["node"] in ids
    assert g_ready["op"] == "ready" and g_ready["acked"] == 0 and g_ready["node"] in ids
    assert acks == [{"op": "heartbeat_ack"}] * 2
    assert seen == ids                   # the connections spread over both nodes
    # the per-node endpoints are asked of each node, not of the edge
    assert [edge_get(e, p) for p in ("/healthz", "/readyz", "/metrics", "/")] == [404] * 4
    assert a.http("/healthz")[0] == 200


# --- the shipped timeouts ----------------------------------------------------

TIMEOUT = re.compile(r"^\s*(\w+_timeout)\s+(\S+)\s*;")
BOUND = re.compile(r"^\s*#\s*(bound|equals):\s*(.*)$")
UNITS = {"ms": 1, "s": 1000, "m": 60000, "h": 3600000, "d": 86400000}


def nginx_ms(value):
    """An nginx time ("1h", "90s", "1m30s", "500ms", "30") in milliseconds."""
    parts = re.findall(r"(\d+)(ms|s|m|h|d)?", value)
    assert parts and "".join(n + (u or "") for n, u in parts) == value, value
    return sum(int(n) * UNITS[u or "s"] for n, u in parts)


def gateway_ranges():
    """{"--heartbeat": (default, max), ...} from `bothy-gateway serve --help`."""
    usage = subprocess.run([GATEWAY, "serve", "--help"], check=True, stdout=subprocess.PIPE,
                           text=True).stdout
    ranges = {}
    for entry in re.split(r"\n(?=  --)", usage):
        m = re.search(r"^  (--[\w-]+).*?\d+\.\.(\d+) \(default (\d+)\)", entry, re.S)
        if m:
            ranges[m.group(1)] = (int(m.group(3)), int(m.group(2)))
    assert "--heartbeat" in ranges and "--send-timeout" in ranges, usage
    return ranges


def bound_ms(expr, ranges, which):
    """"2 x --heartbeat + --db-timeout" at the settings' defaults (which=0)
    or maxima (which=1)."""
    total = 0
    for term in expr.split("+"):
        m = re.fullmatch(r"\s*(?:(\d+)\s*x\s*)?(\S+)\s*", term)
        assert m and m.group(2) in ranges, "unknown bound %r" % term
        total += int(m.group(1) or 1) * ranges[m.group(2)][which]
    return total


def shipped_timeouts():
    """(directive, value, kind, expression) of every *_timeout in the shipped
    edge; kind is "bound" or "equals", from the comment line just above it."""
    found, bound = [], None
    for line in shipped_text().splitlines():
        if BOUND.match(line):
            bound = BOUND.match(line).groups()
        elif TIMEOUT.match(line):
            name, value = TIMEOUT.match(line).groups()
            found.append((name, value) + (bound or (None, None)))
            bound = None
        elif not line.lstrip().startswith("#"):
            bound = None
    return found


def settings_ms(pg):
    """{"bothy.terminal_idle_timeout": ms or count, ...} of bothy.settings():
    the defaults, which the session's instance does not change for these."""
    return {"bothy." + name: int(value) for name, value in
            pg.query("SELECT name, setting FROM bothy.settings() WHERE name LIKE 'terminal_%%'")}


def settings_value(expr, settings):
    """"bothy.a + bothy.b" or "bothy.a x bothy.b" over the settings."""
    if " x " in expr:
        a, b = (settings[t.strip()] for t in expr.split(" x "))
        return a * b
    return sum(settings[t.strip()] for t in expr.split("+"))


def test_shipped_timeouts_exceed_the_gateway_settings_they_follow(pg):
    ranges = dict(gateway_ranges(), **PLAN_RANGES)
    settings = settings_ms(pg)
    timeouts = shipped_timeouts()
    names = [name for name, _, kind, _ in timeouts if kind == "bound"]
    # the WebSocket's three timers and the long poll's wait are all set
    assert names.count("proxy_read_timeout") == 2 and "proxy_send_timeout" in names
    assert names.count("send_timeout") == 2
    # the terminal's: the control connection's and the stream's three timers
    equal = [(name, expr) for name, _, kind, expr in timeouts if kind == "equals"]
    assert len(equal) == 6 and {e for _, e in equal} == {
        "bothy.terminal_host_heartbeat_interval x bothy.terminal_host_heartbeat_miss_limit",
        "bothy.terminal_idle_timeout + bothy.terminal_idle_grace"}
    for name, value, kind, bound in timeouts:
        assert bound, "%s %s names no gateway setting (# bound: or # equals:)" % (name, value)
        if kind == "equals":
            # the cluster settings' defaults, exactly (D-M2-47-9)
            assert nginx_ms(value) == settings_value(bound, settings), (name, value, bound)
            continue
        if bound.startswith("none"):
            assert name == "proxy_connect_timeout", "only the TCP handshake has no bound"
            continue
        for which in (0, 1):            # the default and the largest value accepted
            assert nginx_ms(value) > bound_ms(bound, ranges, which), (name, value, bound, which)


def test_shipped_edge_never_buffers_and_logs_nothing():
    lines = {line.strip() for line in shipped_text().splitlines()}
    for directive in ("proxy_buffering off;", "proxy_request_buffering off;",
                      "proxy_max_temp_file_size 0;", "access_log off;", "error_log stderr crit;"):
        assert directive in lines, directive


# --- a node dies -------------------------------------------------------------

def presence_nodes(pg, persons):
    """{device: node} of bothy.presence_read for these persons."""
    return dict(pg.query("SELECT device::text, node::text FROM bothy.presence_read(%s::uuid[])",
                         persons))


def setting_s(pg, name):
    return int(pg.query("SELECT setting FROM bothy.settings() WHERE name = %s", name)[0][0]) / 1000.0


def test_killed_node_clients_come_back_through_the_edge_on_the_survivor(gateways, keys, edge, pg):
    a, b = gateways(2)
    e = edge([a, b])
    flush, ttl = setting_s(pg, "presence_flush_interval"), setting_s(pg, "presence_ttl")
    person, device, bystander, by_device, agent = new_id(), new_id(), new_id(), new_id(), new_id()
    person_token, by_token, agent_token = (keys.person(person, device),
                                           keys.person(bystander, by_device), keys.agent(agent))

    async def go():
        ws, first = await identify(e.url, person_token)
        victim = first["node"]
        # the bystander and the agent on the same node as the person
        by_ws, _ = await ready_on(e.url, by_token, victim)
        ag_ws, ag_first = await ready_on(e.url, agent_token, victim)
        assert [await acked(ws), await acked(ag_ws)] == [{"op": "heartbeat_ack"}] * 2
        dead, survivor = (a, b) if await node_id(a, keys) == victim else (b, a)
        survivor_id = await node_id(survivor, keys)
        # both persons are present on the victim before it dies
        poll_until(lambda: presence_nodes(pg, [person, bystander]) == {device: victim, by_device: victim},
                   timeout=2 * flush + 3, what="presence rows on the victim")

        dead.proc.kill()
        dead.proc.wait()
        killed_at = time.monotonic()
        codes = await asyncio.gather(closed_with(ws), closed_with(by_ws), closed_with(ag_ws))

        ws, second = await identify(e.url, first["resume"], op="resume")
        ag_ws, ag_second = await identify(e.url, agent_token)
        acks = [await acked(ws), await acked(ag_ws)]
        # the bystander never comes back: its row ages out with the dead node's
        # marker; the person's row is the survivor's now
        left = ttl + 1.5 - (time.monotonic() - killed_at)
        poll_until(lambda: presence_nodes(pg, [person, bystander]) == {device: survivor_id},
                   timeout=max(left, 0.1), what="the dead node's presence gone within presence_ttl")
        await ws.close()
        await ag_ws.close()
        return victim, survivor_id, first, second, ag_first, ag_second, codes, acks

    victim, survivor_id, first, second, ag_first, ag_second, codes, acks = run(go())
    assert codes == [1006] * 3          # no close frame: the node is gone
    assert acks == [{"op": "heartbeat_ack"}] * 2
    # the edge skipped the dead node; the resume kept the session, with a fresh bind
    assert second["op"] == "ready" and second["node"] == survivor_id != victim
    assert second["session"] == first["session"] and second["bind"] > first["bind"]
    binding = pg.query("SELECT gateway_session::text, bind_id::text, node::text "
                       "FROM bothy.device_binding(%s)", device)[0]
    assert binding == (first["session"], second["bind"], survivor_id)
    # the agent's stream is held by its new session on the survivor
    assert ag_second["op"] == "ready" and ag_second["node"] == survivor_id
    assert ag_second["session"] != ag_first["session"]
    # a consumer connection holds under its bind ID
    holder = pg.query("SELECT holder_session::text, node::text FROM bothy.consumer_holder(%s)", agent)[0]
    assert holder == (ag_second["bind"], survivor_id)
    # nothing the edge wrote names an address, a request or a token
    logs = e.logs()
    for secret in ("127.0.0.1", "client:", "/gateway", "Bearer", person_token, agent_token,
                   first["resume"], device, agent):
        assert secret not in logs, "the edge logged %r" % secret
