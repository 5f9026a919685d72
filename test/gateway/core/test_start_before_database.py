"""A node started before its database (issue 33): it waits quietly, is
ready within 5 s of the database accepting connections, and gives up with
exit 1 at --start-timeout when the database never comes; a database that
refuses it is named by libpq's reason, as a code (docs/gateway.md,
"database connection failed").

The database here is a real PostgreSQL on a TCP port of its own, as a
container's or another machine's is: while it is down the port refuses
connections, the case that spun a core before (core/pgconn.c,
detach_socket: a refused socket's wsi stayed readable and starved lws's
timers, so nothing was retried and the start timeout never fired).
"""
import os
import subprocess
import time
import types

import psycopg2

from conftest import PG_CONF, ROOT, Gateway, Instance, free_port, poll_until

# A node waiting for its database may use at most this share of one core.
MAX_CPU = 0.05
# Seconds the CPU is measured over.
CPU_WINDOW = 3.0


class TcpInstance(Instance):
    """An instance listening on 127.0.0.1 at a port of its own (pg-temp's
    default is its Unix socket only, at the shared BOTHY_TEST_PGPORT)."""

    def __init__(self, name, conf_lines=()):
        self.port = free_port()
        super().__init__(name, list(conf_lines) + ["listen_addresses = '127.0.0.1'"])

    def _pg_temp(self, *args, check=True):
        env = dict(os.environ, BOTHY_TEST_PGPORT=str(self.port))
        return subprocess.run([os.path.join(ROOT, "test", "lib", "pg-temp"), *args],
                              env=env, check=check, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)

    def connect(self, autocommit=True, dbname="bothy_test"):
        conn = psycopg2.connect(host="127.0.0.1", port=self.port, user="postgres", dbname=dbname)
        conn.autocommit = autocommit
        return conn


def tcp_node(name, keys, pg_port, start_timeout_ms):
    """A node (not started) whose --database is 127.0.0.1:pg_port."""
    # Gateway's own conninfo names an instance's socket directory: replaced
    node = Gateway(name, types.SimpleNamespace(dir="unused"), keys)
    node.conninfo = "host=127.0.0.1 port=%d dbname=bothy_test user=postgres" % pg_port
    node.args[node.args.index("--database") + 1] = node.conninfo
    node.args[node.args.index("--start-timeout") + 1] = str(start_timeout_ms)
    return node


def cpu_share(pid, seconds):
    """The share of one core the process used over the next seconds
    (utime + stime of /proc/PID/stat)."""
    def ticks():
        with open("/proc/%d/stat" % pid) as f:
            # the fields after the command's closing parenthesis; utime and stime are 14 and 15
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    hz = os.sysconf("SC_CLK_TCK")
    before, start = ticks(), time.monotonic()
    time.sleep(seconds)
    used, elapsed = ticks() - before, time.monotonic() - start
    return used / hz / elapsed


def test_a_node_started_before_its_database(keys):
    """Started while the database's port refuses connections: under 5 % of
    a core while waiting, ready within 5 s of the database accepting
    connections.  Then the database goes away and comes back while the node
    runs: quiet again while it is away, ready again within 5 s."""
    pg = TcpInstance("early-pg", PG_CONF)
    node = None
    try:
        pg.start()          # the cluster, its database and the extension made once
        pg.stop()
        node = tcp_node("early-node", keys, pg.port, 120000)
        node.start(wait=False)
        poll_until(lambda: node.http("/healthz")[0] == 200, timeout=10, what="the node answering")
        assert node.http("/readyz")[0] == 503
        # the first attempts (the immediate one, then the pool's back-off) are spent
        time.sleep(1.5)
        waiting = cpu_share(node.proc.pid, CPU_WINDOW)
        assert waiting < MAX_CPU, "%.1f %% of a core while waiting for the database" % (100 * waiting)
        assert node.http("/readyz")[0] == 503

        pg.restart()        # pg_ctl start -w: back once it accepts connections
        took = poll_until(lambda: node.http("/readyz")[0] == 200, timeout=5, interval=0.1,
                          what="ready after the database accepts connections")
        print("waiting: %.2f %% of a core; ready %.2f s after the database" % (100 * waiting, took))
        assert "database connection open" in node.log

        # away and back while running
        pg.stop()
        poll_until(lambda: node.http("/readyz")[0] == 503, timeout=10, what="not ready")
        time.sleep(1.5)
        away = cpu_share(node.proc.pid, CPU_WINDOW)
        assert away < MAX_CPU, "%.1f %% of a core while the database was away" % (100 * away)
        pg.restart()
        poll_until(lambda: node.http("/readyz")[0] == 200, timeout=5, interval=0.1,
                   what="ready after the database came back")
    finally:
        if node is not None:
            node.stop()
        pg.close()


def test_start_timeout_exits_1_when_the_database_never_comes(keys):
    """--start-timeout ends the start with exit 1 (docs/gateway.md), and the
    node waits for it quietly."""
    port = free_port()          # nothing listens there
    node = tcp_node("never-node", keys, port, 3000)
    start = time.monotonic()
    node.start(wait=False)
    try:
        poll_until(lambda: node.http("/healthz")[0] == 200, timeout=5, what="the node answering")
        assert cpu_share(node.proc.pid, 1.0) < MAX_CPU
        code = node.proc.wait(timeout=3.0 + 3.0)
        took = time.monotonic() - start
    finally:
        node.stop()
    assert code == 1
    assert 3.0 <= took < 6.0, took
    assert 'level=error msg="database not reachable at start"' in node.log
    # why, once for the whole wait (an attempt a second)
    assert node.log.count('msg="database connection failed"') == 1
    assert 'level=warn msg="database connection failed" reason=connection_refused\n' in node.log


def test_libpq_reason_reaches_the_log_as_a_code(keys):
    """sslmode=require against a server without TLS logged only "database
    call timed out" before; now libpq's reason, as a code and never its
    text (which names the address and the user: the autouse logs_clean
    fixture checks every node's log for an address)."""
    pg = TcpInstance("refusing-pg", PG_CONF)
    nodes = []
    try:
        pg.start()
        assert pg.query("SHOW ssl")[0][0] == "off"
        cases = [("sslmode=require", "ssl_not_supported"),
                 ("sslmode=verify-full", "ssl_not_supported"),
                 ("dbname=no_such_database", "database_missing"),
                 ("user=no_such_role", "authentication_failed")]
        for extra, _ in cases:
            node = tcp_node("refused-node", keys, pg.port, 30000)
            node.args[node.args.index("--database") + 1] = node.conninfo + " " + extra
            nodes.append(node.start(wait=False))
        for node, (extra, reason) in zip(nodes, cases):
            line = 'level=warn msg="database connection failed" reason=%s\n' % reason
            poll_until(lambda: line in node.log, timeout=10, what="%s: reason=%s" % (extra, reason))
            assert node.http("/readyz")[0] == 503
        # the attempts go on, a second apart, the reason logged once
        time.sleep(2.5)
        for node in nodes:
            assert node.log.count('msg="database connection failed"') == 1, node.log
            assert "SSL" not in node.log and "no_such" not in node.log
    finally:
        for node in nodes:
            node.stop()
        pg.close()
