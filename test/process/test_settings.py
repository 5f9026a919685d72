"""The cluster settings across server start and reload, and the preload rule."""
import psycopg2
import pytest

from conftest import Instance, NODE_A

PAIR = "bothy.presence_ttl must be more than twice bothy.presence_flush_interval"


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
        assert len(inst.query("SELECT * FROM bothy.settings()")) == 9
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
