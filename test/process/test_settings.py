"""The cluster settings across server start and reload, and the preload rule."""
import psycopg2
import pytest

from conftest import Instance, NODE_A, poll_until

PAIR = "bothy.presence_ttl must be more than twice bothy.presence_flush_interval"
PROBE = "bothy.terminal_open_timeout must be more than twice bothy.terminal_host_duplicate_probe_timeout"
POLL = "bothy.terminal_open_timeout must be more than twice bothy.terminal_log_poll_interval"
OPEN = ("SELECT outcome FROM bothy.terminal_session_open('b0000000-0000-4000-8000-000000000001', "
        "'d0000000-0000-4000-8000-000000000001', '01890a5d-ac96-7000-8000-00000000dead')")


def test_server_refuses_to_start_on_an_inconsistent_pair():
    inst = Instance("badpair", ["bothy.presence_ttl = '4s'", "bothy.presence_flush_interval = '2s'"],
                    with_extension=False)
    result = inst.start(check=False)
    assert result.returncode != 0
    assert PAIR in inst.log
    assert "bothy.presence_ttl is 4000 ms and bothy.presence_flush_interval is 2000 ms" in inst.log


def test_a_reload_to_an_inconsistent_pair_stops_the_functions_until_fixed():
    inst = Instance("reload")
    inst.start()
    try:
        assert len(inst.query("SELECT * FROM bothy.settings()")) == 17
        inst.reload_with("bothy.presence_ttl = '3s'")
        for sql in ("SELECT * FROM bothy.settings()",
                    "SELECT * FROM bothy.presence_read('{}')",
                    "SELECT bothy.node_start('%s')" % NODE_A):
            with pytest.raises(psycopg2.errors.InvalidParameterValue, match=PAIR):
                inst.query(sql)
        inst.reload_with("bothy.presence_flush_interval = '1s'")
        assert dict((n, v) for n, v, _ in inst.query("SELECT * FROM bothy.settings()"))["presence_ttl"] == "3000"
    finally:
        inst.close()


def test_reload_changes_the_mode_the_gateways_read():
    inst = Instance("mode")
    inst.start()
    try:
        assert ("cluster_mode", "single", None) in inst.query("SELECT * FROM bothy.settings()")
        inst.reload_with("bothy.cluster_mode = 'multi'")
        assert ("cluster_mode", "multi", None) in inst.query("SELECT * FROM bothy.settings()")
    finally:
        inst.close()


def test_the_extension_refuses_to_load_without_preload():
    inst = Instance("nopreload", ["shared_preload_libraries = ''"], with_extension=False)
    inst.start()
    try:
        with pytest.raises(psycopg2.errors.ObjectNotInPrerequisiteState,
                           match="bothy must be loaded via shared_preload_libraries"):
            inst.query("CREATE EXTENSION bothy")
    finally:
        inst.close()


@pytest.mark.parametrize("lines, rule, detail", [
    (["bothy.terminal_open_timeout = '10s'", "bothy.terminal_host_duplicate_probe_timeout = '5s'"], PROBE,
     "bothy.terminal_open_timeout is 10000 ms and bothy.terminal_host_duplicate_probe_timeout is 5000 ms"),
    (["bothy.terminal_open_timeout = '2s'", "bothy.terminal_host_duplicate_probe_timeout = '500ms'",
      "bothy.terminal_log_poll_interval = '1s'"], POLL,
     "bothy.terminal_open_timeout is 2000 ms and bothy.terminal_log_poll_interval is 1000 ms"),
])
def test_server_refuses_to_start_on_an_inconsistent_terminal_pair(lines, rule, detail):
    inst = Instance("badterminal", lines, with_extension=False)
    result = inst.start(check=False)
    assert result.returncode != 0
    assert rule in inst.log
    assert detail in inst.log


def test_a_terminal_rule_stops_the_terminal_and_the_worker_and_spares_presence():
    """A reload that breaks a terminal rule: no grant is drawn and no
    gateway starts on it (bothy.settings()), the worker pauses naming the
    rule; presence keeps working.  A fix brings everything back."""
    inst = Instance("reloadterminal")
    inst.start()
    try:
        assert inst.query(OPEN) == [("forbidden",)]
        inst.reload_with("bothy.terminal_log_poll_interval = '15s'")
        for sql in ("SELECT * FROM bothy.settings()", OPEN):
            with pytest.raises(psycopg2.errors.InvalidParameterValue, match=POLL):
                inst.query(sql)
        poll_until(lambda: "bothy maintenance is paused: " + POLL in inst.log, timeout=10, what="the pause")
        assert inst.query("SELECT count(*) FROM bothy.presence_read('{}')") == [(0,)]
        inst.query("SELECT bothy.node_start('%s')" % NODE_A)
        working = inst.log.count("bothy maintenance is working")
        inst.reload_with("bothy.terminal_open_timeout = '31s'")
        assert inst.query(OPEN) == [("forbidden",)]
        assert len(inst.query("SELECT * FROM bothy.settings()")) == 17
        poll_until(lambda: inst.log.count("bothy maintenance is working") > working, timeout=10,
                   what="the resume")
    finally:
        inst.close()
