"""The process: /healthz, /readyz and /metrics, the orderly stop on SIGTERM,
and the refusals to start."""
import asyncio
import json
import os
import shutil
import signal
import subprocess

import websockets

from conftest import GATEWAY, Gateway, closed_with, identify, new_id, poll_until, run

METRICS = [
    "bothy_gateway_connections", "bothy_gateway_frames_in_total", "bothy_gateway_frames_out_total",
    "bothy_gateway_closes_total", "bothy_gateway_db_calls_total",
    "bothy_gateway_db_call_duration_seconds", "bothy_gateway_listener_losses_total",
    "bothy_gateway_listener_reconnects_total", "bothy_gateway_signals_received_total",
    "bothy_gateway_signals_dropped_total", "bothy_gateway_send_queue_overflows_total",
]


async def drain(ws, seconds):
    """Every message that arrives on ws within the given seconds."""
    got = []
    try:
        while True:
            got.append(json.loads(await asyncio.wait_for(ws.recv(), seconds)))
    except asyncio.TimeoutError:
        return got


def test_health_ready_metrics(gateways, keys):
    node = gateways(1)
    assert node.http("/healthz") == (200, "ok\n")
    status, body = node.http("/readyz")
    assert status == 200
    assert body.splitlines()[0] == "ready" and "database: up" in body and "listener: up" in body
    assert node.http("/nope")[0] == 404

    async def go():
        person, _ = await identify(node.url, keys.person())
        agent, _ = await identify(node.url, keys.agent())
        raw = await websockets.connect(node.url)
        received = []               # what the person got besides the ack
        await person.send('{"op":"heartbeat"}')
        while (reply := json.loads(await asyncio.wait_for(person.recv(), 5)))["op"] != "heartbeat_ack":
            received.append(reply)
        m = node.metrics()
        # every frame counted before the snapshot reaches the person within this
        received += await drain(person, 0.5)
        for ws in (person, agent, raw):
            await ws.close()
        return m, received
    m, received = run(go())
    assert m['bothy_gateway_connections{kind="person"}'] == 1
    assert m['bothy_gateway_connections{kind="agent"}'] == 1
    assert m['bothy_gateway_connections{kind="unidentified"}'] == 1
    assert m["bothy_gateway_frames_in_total"] == 3
    # two readies, the heartbeat's ack, and the agent's presence to the
    # person; beside them only other agents going offline (the session's
    # database holds the agents of earlier tests, which the maintenance
    # worker sets offline for the whole cluster, this node included)
    others = sum(1 for e in received if e.get("op") == "event" and e["type"] == "agent.presence_changed"
                 and e["data"]["state"] == "offline")
    extra = m["bothy_gateway_frames_out_total"] - 4
    assert 0 <= extra <= others, (extra, received)
    assert m['bothy_gateway_events_delivered_total{type="agent.presence_changed"}'] == 1 + extra
    calls = sum(v for k, v in m.items() if k.startswith("bothy_gateway_db_calls_total"))
    assert calls >= 4          # settings, node_start, device_bind, consumer_take
    assert m['bothy_gateway_db_call_duration_seconds_bucket{le="+Inf"}'] == calls
    assert m["bothy_gateway_db_call_duration_seconds_count"] == calls
    _, text = node.http("/metrics")
    for name in METRICS:
        assert "# TYPE %s " % name in text, name
    poll_until(lambda: node.metric('bothy_gateway_connections{kind="person"}') == 0, timeout=5,
               what="closed connections uncounted")


def test_sigterm_closes_clients_1001_and_deletes_presence(gateways, keys, pg):
    node = gateways(1)
    person, device = new_id(), new_id()

    async def go():
        ws, ready = await identify(node.url, keys.person(person, device))
        agent_id = new_id()
        agent, _ = await identify(node.url, keys.agent(agent_id))
        # the node's presence rows, as its presence writer would flush them
        assert pg.query("SELECT bothy.presence_flush(%s, true, ARRAY[%s]::uuid[], ARRAY[%s]::uuid[], "
                        "ARRAY[%s]::uuid[], ARRAY[NULL]::uuid[], ARRAY[false], '{}')",
                        ready["node"], ready["session"], person, device)[0][0] is True
        assert len(pg.query("SELECT * FROM bothy.presence_read(ARRAY[%s]::uuid[])", person)) == 1
        node.proc.send_signal(signal.SIGTERM)
        codes = [await closed_with(ws), await closed_with(agent)]
        return ready, agent_id, codes
    ready, agent_id, codes = run(go())
    assert codes == [1001, 1001]
    assert node.proc.wait(10) == 0
    assert pg.query("SELECT * FROM bothy.presence_read(ARRAY[%s]::uuid[])", person) == []
    assert pg.query("SELECT count(*) FROM bothy.gateway_presence WHERE node = %s", ready["node"])[0][0] == 0
    assert pg.query("SELECT holder_session FROM bothy.consumer_holder(%s)", agent_id)[0][0] is None
    log = node.log
    steps = ["stopping: refusing new connections", "clients closed", "node stopped, presence rows deleted",
             "listener stopped", 'msg="exit" status=0']
    positions = [log.index(s) for s in steps]
    assert positions == sorted(positions)


def start_fails(*args, env=None):
    return subprocess.run([GATEWAY, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=30, env=env)


def test_refuses_bad_options(pg, keys):
    base = ["serve", "--listen", "127.0.0.1:1", "--database", "dbname=x", "--keys", keys.dir]
    for extra, text in [(["--db-pool", "0"], "--db-pool must be an integer from 1 to 16"),
                        (["--db-timeout", "10x"], "--db-timeout must be an integer"),
                        (["--max-message", " 2048"], "--max-message must be an integer"),
                        (["--frobnicate"], "unknown option"),
                        (["stray"], "unexpected argument")]:
        r = start_fails(*base, *extra)
        assert r.returncode == 2, extra
        assert text in r.stderr, (extra, r.stderr)
    r = start_fails("serve", "--listen", "127.0.0.1:99999", "--database", "x", "--keys", keys.dir)
    assert r.returncode == 2 and "--listen must be ADDR:PORT" in r.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTHY_")}
    r = start_fails("serve", "--listen", "127.0.0.1:1", "--keys", keys.dir, env=env)
    assert r.returncode == 2 and "--database (or BOTHY_DATABASE) is required" in r.stderr
    assert start_fails("frob").returncode == 2
    assert start_fails("serve", "--help").returncode == 0


def test_refuses_a_missing_or_loose_key_store(pg, keys, tmp_path):
    node = Gateway("nokeys", pg, keys)
    missing = list(node.args)
    missing[missing.index("--keys") + 1] = str(tmp_path / "absent")
    r = start_fails(*missing[1:])
    assert r.returncode == 1 and "key store refused" in r.stderr
    loose = tmp_path / "loose"
    shutil.copytree(keys.dir, loose)
    os.chmod(loose, 0o755)
    args = list(node.args)
    args[args.index("--keys") + 1] = str(loose)
    r = start_fails(*args[1:])
    assert r.returncode == 1 and "key store refused" in r.stderr
    os.chmod(loose, 0o700)
    for name in os.listdir(loose):
        os.chmod(loose / name, 0o644)
    r = start_fails(*args[1:])
    assert r.returncode == 1 and "key store refused" in r.stderr


def test_refuses_an_invalid_cluster_configuration(pg, keys):
    pg.reload_with("bothy.presence_ttl = '4s'")      # not more than twice the 2 s flush interval
    try:
        node = Gateway("badconf", pg, keys)
        r = start_fails(*node.args[1:])
        assert r.returncode == 1
        assert "invalid cluster configuration" in r.stderr
        assert "bothy.presence_ttl" in r.stderr and "bothy.presence_flush_interval" in r.stderr
    finally:
        pg.reload_with("bothy.presence_ttl = '10s'")
