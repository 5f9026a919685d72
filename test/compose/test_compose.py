"""The Compose files on images built from the Debian packages, each
brought up and down with the commands of docs/operations.md "Compose" as
written there (docker-compose 1.29), the edge the default stand-in:
compose.yaml (one node, started once the database is healthy; a client
through the edge), then the overlay (compose/compose.multi-node.yaml,
D-M2-47-10 and D-M2-47-20) through the edge on 127.0.0.1 only: both nodes
identify, typing crosses nodes, a shell of the host service's container
(images/host) opened through the edge, one node killed with docker kill
and every one of its clients resumed on the other; each teardown leaving
no container, network or volume of the project."""
import asyncio
import json
import os
import time

import pytest
import websockets

from conftest import REPORT, ROOT, VERSION, Stack, new_id, poll_until, run, shell_through_the_edge


async def recv_op(ws, op, timeout=15):
    """The next message with this op, skipping events of other kinds."""
    deadline = time.monotonic() + timeout
    while True:
        m = json.loads(await asyncio.wait_for(ws.recv(), max(0.01, deadline - time.monotonic())))
        if m.get("op") == op:
            return m


async def identify(stack, token):
    ws = await websockets.connect(stack.ws + "/gateway", ping_interval=None)
    await ws.send(json.dumps({"op": "identify", "token": token}))
    return ws, await recv_op(ws, "ready")


async def on_both_nodes(stack, persons, limit=24):
    """Connections through the edge, each a new device, two of each person
    in turn, until each person has one on each node: the edge spreads
    /gateway round robin per worker (one person a turn would meet the same
    node every time).  Returns [(person, ws, ready)]."""
    conns = []
    for i in range(limit):
        person = persons[(i // 2) % len(persons)]
        ws, ready = await identify(stack, stack.token(person, new_id()))
        conns.append((person, ws, ready))
        nodes = {r["node"] for _, _, r in conns}
        have = {(p, r["node"]) for p, _, r in conns}
        if len(nodes) == 2 and all((p, n) in have for p in persons for n in nodes):
            return conns
    raise AssertionError("within %d connections no person had one on each of two nodes" % limit)


def events(project, since):
    """docker's events of the project's containers since SINCE (a Unix
    time), as (time in ns, action, service), oldest first."""
    out = run("docker", "events", "--since", "%.3f" % since, "--until", "%.3f" % time.time(),
              "--filter", "label=com.docker.compose.project=" + project,
              "--format", "{{.TimeNano}} {{index .Actor.Attributes \"com.docker.compose.service\"}} {{.Action}}").stdout
    return [(int(t), action, service) for t, service, action in
            (line.split(" ", 2) for line in out.splitlines() if line.strip())]


def test_compose_yaml_as_operations_md_says(images):
    """compose.yaml alone, the documented first run: `docker-compose up -d`
    in a copy of compose/ whose .env is .env.example with the passwords and
    the port changed (the edge the default, the stand-in images/build
    made); the node started only once the database was healthy; a client
    identifies through the edge; `docker-compose down -v` leaves nothing."""
    s = Stack([])
    try:
        t0, started = time.time() - 1, time.monotonic()
        s.up(services=("db", "node"))
        poll_until(s.edge_answers, 60, "the edge answering")
        REPORT.append("compose.yaml up and healthy in %.0f s" % (time.monotonic() - started))
        seen = events(s.project, t0)
        db_healthy = [t for t, action, service in seen if service == "db" and action == "health_status: healthy"]
        node_start = [t for t, action, service in seen if service == "node" and action == "start"]
        assert db_healthy and node_start, seen
        assert node_start[0] > db_healthy[0], "the node started before the database was healthy: %s" % seen
        info = json.loads(run("docker", "inspect", s.container("edge")).stdout)[0]
        assert info["Config"]["Image"] == "nginxinc/nginx-unprivileged:bookworm-debian"

        async def identify_through_the_edge():
            ws, ready = await identify(s, s.token(new_id(), new_id()))
            await ws.close()
            return ready
        assert asyncio.run(identify_through_the_edge())["op"] == "ready"
        s.documented(s.down_command, timeout=120)
        assert s.leftovers() == []
    finally:
        s.down()


def test_the_images_keep_their_contract(stack):
    """Non-root users; the edge and both nodes read-only without
    capabilities (node-2 by extends, D-M2-47-10: the edge's hardening
    equals the nodes'); the edge published on 127.0.0.1 only, the nodes
    without ports; node-2 with node's /readyz healthcheck."""
    users, infos = {}, {}
    for service in ("db", "node", "node-2", "edge"):
        info = infos[service] = json.loads(run("docker", "inspect", stack.container(service)).stdout)[0]
        users[service] = run("docker", "exec", stack.container(service), "id", "-u").stdout.strip()
        if service != "db":
            assert info["HostConfig"]["ReadonlyRootfs"] is True, service
            assert info["HostConfig"]["CapDrop"] == ["ALL"], service
            assert "no-new-privileges:true" in info["HostConfig"]["SecurityOpt"], service
        if service == "edge":
            bindings = info["HostConfig"]["PortBindings"]
            assert bindings == {"8080/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(stack.port)}]}
        if service.startswith("node"):
            assert not info["HostConfig"]["PortBindings"], "a node publishes a port"
    assert all(uid != "0" for uid in users.values()), users
    assert users["edge"] == "101"
    # each image labelled with the packages' version and the licence
    for service in ("db", "node", "node-2", "edge"):
        labels = json.loads(run("docker", "image", "inspect", infos[service]["Config"]["Image"]).stdout)[0][
            "Config"]["Labels"]
        assert (labels.get("org.opencontainers.image.version"), labels.get("org.opencontainers.image.licenses")) == \
            (VERSION, "PostgreSQL"), (service, labels)
    check = infos["node"]["Config"]["Healthcheck"]
    assert "/usr/lib/bothy/bothy-wait-ready" in check["Test"] and "127.0.0.1:8081" in check["Test"]
    assert infos["node-2"]["Config"]["Healthcheck"] == check


def test_identify_on_both_nodes_and_typing_crosses_nodes(stack):
    place, thread = new_id(), new_id()
    ada, grace = new_id(), new_id()
    stack.sql("SELECT bothy.place_put(:'v0'); SELECT bothy.thread_put(:'v1', :'v0');"
              "SELECT bothy.membership_added(:'v0', :'v2'); SELECT bothy.membership_added(:'v0', :'v3');",
              place, thread, ada, grace)

    async def scenario():
        conns = await on_both_nodes(stack, [ada, grace])
        _, typer, typer_ready = next(c for c in conns if c[0] == ada)
        # Ada types from one node; Grace's connections on the other node
        # hear it through the signal (multi mode)
        elsewhere = [ws for person, ws, r in conns if person == grace and r["node"] != typer_ready["node"]]
        assert elsewhere
        await typer.send(json.dumps({"op": "typing", "thread": thread}))
        for ws in elsewhere:
            event = await recv_op(ws, "event")
            while event["type"] != "typing.started":
                event = await recv_op(ws, "event")
            assert event["data"]["thread"] == thread and event["data"]["principal"] == ada
        for _, ws, _ in conns:
            await ws.close()
    asyncio.run(scenario())


def test_a_shell_through_the_edge_with_the_host_container(stack):
    person = new_id()
    token = stack.token(person, new_id())
    (row,) = stack.sql("SELECT host || ' ' || pairing_code FROM bothy.terminal_host_register(:'v0', 'compose')",
                       person)
    host, code = row.split()
    name = stack.project + "_host_test"
    run("docker", "run", "-d", "--rm", "--name", name, "--network", stack.project + "_default",
        "--read-only", "--cap-drop", "ALL", "--security-opt", "no-new-privileges:true",
        "--tmpfs", "/tmp", "--tmpfs", "/var/lib/bothy-host:uid=%s,mode=0700" % host_uid(),
        "-e", "BOTHY_HOST_SERVER=http://edge:8080", "-e", "BOTHY_HOST_ID=" + host, "-e", "BOTHY_HOST_CODE=" + code,
        "bothy/host:" + VERSION)
    try:
        fingerprint = poll_until(lambda: [l for l in run("docker", "logs", name).stdout.splitlines()
                                          if l.startswith("SHA256:")], 60, "the host paired")[0]
        assert stack.sql("SELECT bothy.terminal_host_confirm(:'v0', :'v1')", host, fingerprint) == ["active"]

        shell_through_the_edge(stack, token, host)
    finally:
        run("docker", "stop", "-t", "10", name, check=False)
        assert poll_until(lambda: run("docker", "ps", "-a", "-q", "-f", "name=" + name).stdout.strip() == "",
                          30, "the host container gone")


def host_uid():
    return run("docker", "run", "--rm", "--entrypoint", "id", "bothy/host:" + VERSION, "-u").stdout.strip()


def test_docker_kill_of_a_node_and_every_client_resumes_on_the_other(stack):
    persons = [new_id(), new_id()]

    async def scenario():
        conns = await on_both_nodes(stack, persons)
        run("docker", "kill", stack.container("node"))
        dropped, kept = [], []
        for _, ws, ready in conns:
            try:
                await ws.send(json.dumps({"op": "heartbeat"}))
                await recv_op(ws, "heartbeat_ack", timeout=5)
                kept.append((ws, ready))
            except (websockets.ConnectionClosed, asyncio.TimeoutError):
                dropped.append(ready)
        assert dropped and kept, "the kill left %d dropped and %d kept" % (len(dropped), len(kept))
        alive = {r["node"] for _, r in kept}
        assert len(alive) == 1 and not alive & {r["node"] for r in dropped}
        for ready in dropped:
            ws = await websockets.connect(stack.ws + "/gateway", ping_interval=None)
            await ws.send(json.dumps({"op": "resume", "token": ready["resume"]}))
            resumed = await recv_op(ws, "ready")
            assert resumed["session"] == ready["session"] and resumed["node"] in alive
            await ws.close()
        for ws, _ in kept:
            await ws.close()
    asyncio.run(scenario())
    assert stack.health("node-2") == "healthy"


def test_a_node_brought_back_then_the_documented_edge_restart(stack):
    """What replaces depends_on's restart: true on 1.29 (operations.md,
    "After a node was recreated"): the killed node brought back by the
    documented up, then the edge restarted with the documented command;
    the edge then serves both nodes again."""
    import conftest
    restart = stack.up_command[:-2] + ["restart", "edge"]
    prose = " ".join(conftest.doc_section("operations.md", "### Compose").split())
    assert "`%s`" % " ".join(restart) in prose
    stack.up(services=("node", "node-2"))
    run(*restart, cwd=stack.project_dir, env=stack.env, timeout=120)
    poll_until(stack.edge_answers, 60, "the edge answering after its restart")

    async def scenario():
        conns = await on_both_nodes(stack, [new_id()])
        for _, ws, _ in conns:
            await ws.close()
    asyncio.run(scenario())


def test_sigterm_stops_every_container_cleanly_and_down_leaves_nothing(stack):
    """docker-compose stop sends SIGTERM and SIGKILL after 10 s: each
    container left running exits 0 (a SIGKILL would be 137) in that time,
    the database with PostgreSQL's fast shutdown; then the documented
    teardown leaves no container, network or volume of the project."""
    assert stack.leftovers(), "the project has nothing to take down"
    stack.compose("stop", "-t", "10", timeout=120)
    for service in ("db", "node", "node-2", "edge"):
        state = json.loads(run("docker", "inspect", "-f", "{{json .State}}", stack.container(service)).stdout)
        assert (state["Status"], state["ExitCode"], state["OOMKilled"]) == ("exited", 0, False), (service, state)
    stack.documented(stack.down_command, timeout=120)
    assert stack.leftovers() == []


def test_the_files_keep_the_rulings_keys_as_1_29_takes_them():
    """What the running tests do not see of D-M2-47-10 and D-M2-47-20, in
    the form docker-compose 1.29 accepts (compose/README.md): no
    depends_on restart (1.29 refuses it), every node extending node.yaml
    (1.29 refuses to extend a service with depends_on) and waiting for the
    database and the key store; the edge's default image the stand-in
    images/build makes."""
    import yaml

    def services(name):
        with open(os.path.join(ROOT, "compose", name)) as f:
            return yaml.safe_load(f)["services"]
    base, overlay, node = services("compose.yaml"), services("compose.multi-node.yaml"), services("node.yaml")
    waits = {"db": {"condition": "service_healthy"}, "keys": {"condition": "service_completed_successfully"}}
    assert overlay["edge"]["depends_on"] == {"node": {"condition": "service_healthy"},
                                             "node-2": {"condition": "service_healthy"}}
    for name, service in (("node", base["node"]), ("node-2", overlay["node-2"]),
                          ("node-published", overlay["node-published"])):
        assert service["extends"] == {"file": "node.yaml", "service": "node"}, name
        assert service["depends_on"] == waits, name
    assert "depends_on" not in node["node"] and "ports" not in node["node"]
    assert overlay["edge"]["profiles"] == ["direct"] and overlay["node-2"]["profiles"] == ["direct"]
    assert "ports" not in base["node"] and "ports" not in overlay["node-2"]
    assert overlay["db"]["environment"]["BOTHY_CLUSTER_MODE"] == "multi"
    assert base["edge"]["ports"] == ["127.0.0.1:${BOTHY_EDGE_PORT:-8080}:8080"]
    assert base["edge"]["image"] == "nginxinc/nginx-unprivileged:${BOTHY_NGINX_VERSION:-bookworm-debian}"
    with open(os.path.join(ROOT, "compose", "edge", "server.conf")) as f:
        server = f.read()
    assert "proxy_request_buffering off;" in server and "proxy_max_temp_file_size 0;" in server


def test_every_header_and_doc_gives_the_1_29_commands():
    """operations.md, compose/README.md, README.md and the files' headers
    name docker-compose (1.29), never Compose v2's `docker compose` as the
    command; the headers give the documented up and teardown."""
    import conftest
    for path in ("docs/operations.md", "compose/README.md", "README.md", "compose/compose.yaml",
                 "compose/compose.multi-node.yaml"):
        with open(os.path.join(ROOT, path)) as f:
            text = f.read()
        commands = [l for l in text.splitlines() if l.lstrip("# ").startswith("docker compose ")]
        assert commands == [], (path, commands)
        assert "No Compose file is shipped" not in text, path
    for files, (up, down) in conftest.documented_compose().items():
        header = "compose/compose.multi-node.yaml" if len(files) > 1 else "compose/compose.yaml"
        with open(os.path.join(ROOT, header)) as f:
            lines = [l.lstrip("# ").split("  #")[0].strip() for l in f if l.startswith("#")]
        assert " ".join(up) in lines and " ".join(down) in lines, (header, up, down)
