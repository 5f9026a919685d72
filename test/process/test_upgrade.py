"""The upgrade path: every released version, installed and brought up to
date with ALTER EXTENSION bothy UPDATE, has the catalog of a fresh install
of the default version."""
import pytest

from conftest import Instance

# Everything an upgrade must reproduce: tables and columns, constraints,
# indexes, functions with their bodies and settings, privileges, triggers
# (a constraint trigger's deferral too), sequences with their settings,
# views, the tables pg_dump keeps (extconfig and its conditions), the
# comments, and which objects are members of the extension at all.
SNAPSHOT = """
SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
       || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END || ' ' || c.relpersistence::text
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
 WHERE c.relnamespace = 'bothy'::regnamespace AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'constraint ' || conrelid::regclass || ' ' || pg_get_constraintdef(oid)
  FROM pg_constraint WHERE connamespace = 'bothy'::regnamespace
UNION ALL
SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'bothy'
UNION ALL
SELECT 'function ' || pg_get_functiondef(p.oid) || coalesce(p.proacl::text, '')
  FROM pg_proc p WHERE p.pronamespace = 'bothy'::regnamespace
UNION ALL
SELECT 'table acl ' || relname || coalesce(relacl::text, '')
  FROM pg_class WHERE relnamespace = 'bothy'::regnamespace
UNION ALL
SELECT 'trigger ' || pg_get_triggerdef(t.oid)
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
 WHERE c.relnamespace = 'bothy'::regnamespace AND NOT t.tgisinternal
UNION ALL
SELECT 'sequence ' || s.seqrelid::regclass || ' ' || format_type(s.seqtypid, NULL)
       || ' start ' || s.seqstart || ' increment ' || s.seqincrement || ' min ' || s.seqmin
       || ' max ' || s.seqmax || ' cache ' || s.seqcache || ' cycle ' || s.seqcycle
  FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
 WHERE c.relnamespace = 'bothy'::regnamespace
UNION ALL
SELECT 'view ' || viewname || ' ' || definition FROM pg_views WHERE schemaname = 'bothy'
UNION ALL
SELECT 'dumped ' || x.config::regclass || ' ' || coalesce(x.condition, '')
  FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS x(config, condition)
 WHERE e.extname = 'bothy'
UNION ALL
SELECT 'member ' || pg_describe_object(d.classid, d.objid, d.objsubid)
  FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid AND d.refclassid = 'pg_extension'::regclass
 WHERE e.extname = 'bothy' AND d.deptype = 'e'
UNION ALL
SELECT 'comment ' || pg_describe_object(c.classoid, c.objoid, c.objsubid) || ': ' || c.description
  FROM pg_description c
  JOIN pg_depend d ON d.classid = c.classoid AND d.objid = c.objoid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND d.refclassid = 'pg_extension'::regclass
 WHERE e.extname = 'bothy'
ORDER BY 1
"""


def snapshot(inst):
    return [r[0] for r in inst.query(SNAPSHOT)]


@pytest.fixture(scope="module")
def instance():
    inst = Instance("upgrade")
    inst.start()
    yield inst
    inst.close()


def versions(inst):
    default = inst.query("SELECT default_version FROM pg_available_extensions WHERE name = 'bothy'")[0][0]
    older = [r[0] for r in inst.query(
        "SELECT version FROM pg_available_extension_versions WHERE name = 'bothy' AND version <> %s ORDER BY 1",
        default)]
    return default, older


def test_a_fresh_install_is_reproducible(instance):
    fresh = snapshot(instance)
    for kind in ("function ", "trigger ", "sequence ", "dumped ", "member ", "comment "):
        assert any(line.startswith(kind) for line in fresh), kind
    instance.query("DROP EXTENSION bothy")
    instance.query("CREATE EXTENSION bothy")
    assert snapshot(instance) == fresh


def test_every_released_version_updates_to_the_default(instance):
    default, older = versions(instance)
    instance.query("DROP EXTENSION IF EXISTS bothy")
    instance.query("CREATE EXTENSION bothy")
    fresh = snapshot(instance)
    if not older:
        pytest.skip("no version was released before %s: there is no upgrade path to test yet" % default)
    for version in older:
        instance.query("DROP EXTENSION bothy")
        instance.query("CREATE EXTENSION bothy VERSION %s", version)
        instance.query("ALTER EXTENSION bothy UPDATE")
        assert instance.query("SELECT extversion FROM pg_extension WHERE extname = 'bothy'") == [(default,)]
        assert snapshot(instance) == fresh, "upgrade from %s differs from a fresh install" % version


def test_a_dump_restores_on_a_new_server(instance):
    """pg_dump keeps the logged state, and the restore does not collide with
    the row CREATE EXTENSION makes itself (the cluster's node ID).  The
    target is another server's bothy.database: the extension is refused in
    any other database."""
    import os
    import subprocess
    instance.query("DROP EXTENSION IF EXISTS bothy")
    instance.query("CREATE EXTENSION bothy")
    instance.query("SELECT bothy.device_bind('01890a5d-ac96-774b-bcce-b302099a8057', "
                   "'a0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000001', "
                   "'d0000000-0000-4000-8000-000000000001')")
    bin_dir = subprocess.run(["pg_config", "--bindir"], stdout=subprocess.PIPE, text=True).stdout.strip()
    port = os.environ.get("BOTHY_TEST_PGPORT", "54329")
    dump = os.path.join(instance.dir, "bothy.dump")
    subprocess.run([bin_dir + "/pg_dump", "-Fc", "-f", dump, "bothy_test"], check=True,
                   env=dict(os.environ, PGHOST=instance.dir, PGPORT=port, PGUSER="postgres"))
    target = Instance("restored", with_extension=False)
    target.start()
    try:
        env = dict(os.environ, PGHOST=target.dir, PGPORT=port, PGUSER="postgres")
        restore = subprocess.run([bin_dir + "/pg_restore", "--exit-on-error", "-d", "bothy_test", dump],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert restore.returncode == 0, restore.stdout
        assert target.query("SELECT gateway_session::text FROM bothy.device_bindings") == [
            ("a0000000-0000-4000-8000-000000000001",)]
        assert target.query("SELECT count(*) FROM bothy.cluster_identity") == [(1,)]
    finally:
        target.close()
