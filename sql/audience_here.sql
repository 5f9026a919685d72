-- The seam's node-shaped defaults (src/extension/members_here.c):
-- bothy._place_members_on (a place's members with a device bound to a
-- node) against the plain definition, and bothy._place_nodes (the nodes
-- the devices of a place's members are bound to), on places of many
-- sizes, nodes holding few or many, persons with several devices, dead
-- row versions, and the seam functions over them.
\set VERBOSITY terse
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
SELECT setseed(0.34);
CREATE TEMP TABLE people AS
    SELECT i, md5(i::text || 'person')::uuid AS person FROM generate_series(1, 6000) i;
-- node A holds persons 1..5000 (person 4 on a second device too), node B
-- persons 4001..6000 (4001..5000 on both: a device each), node C nobody
CREATE TEMP TABLE nodes (name text, node uuid);
INSERT INTO nodes VALUES ('A', '018f0000-0000-7000-8000-00000000000a'),
    ('B', '018f0000-0000-7000-8000-00000000000b'), ('C', '018f0000-0000-7000-8000-00000000000c');
INSERT INTO bothy.device_bindings (device, person, gateway_session, bind_id, node)
    SELECT md5(i::text || 'deviceA')::uuid, person, md5(i::text || 's')::uuid, bothy.uuidv7(),
           (SELECT node FROM nodes WHERE name = 'A') FROM people WHERE i <= 5000;
INSERT INTO bothy.device_bindings (device, person, gateway_session, bind_id, node)
    SELECT md5(i::text || 'deviceA2')::uuid, person, md5(i::text || 's2')::uuid, bothy.uuidv7(),
           (SELECT node FROM nodes WHERE name = 'A') FROM people WHERE i = 4;
INSERT INTO bothy.device_bindings (device, person, gateway_session, bind_id, node)
    SELECT md5(i::text || 'deviceB')::uuid, person, md5(i::text || 't')::uuid, bothy.uuidv7(),
           (SELECT node FROM nodes WHERE name = 'B') FROM people WHERE i > 4000;
-- place 1: 20 members (every 300th person); place 2: 3,000 members
-- (persons 1..3000); place 3: 2,000 members (2001..4000) around them;
-- place 4: 300 members
INSERT INTO bothy.places SELECT ('c0000000-0000-4000-8000-00000000000' || k)::uuid FROM generate_series(1, 4) k;
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-000000000001', person FROM people WHERE i % 300 = 0;
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-000000000002', person FROM people WHERE i <= 3000;
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-000000000003', person FROM people WHERE i BETWEEN 2001 AND 4000;
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-000000000004', person FROM people WHERE i % 20 = 0;
-- one call against the plain definition, per node
CREATE FUNCTION pg_temp.check_on(place uuid, node_name text)
    RETURNS TABLE (node text, found bigint, same boolean)
LANGUAGE sql AS $$
    WITH n AS (SELECT node FROM nodes WHERE name = node_name)
    SELECT node_name,
           (SELECT count(*) FROM bothy._place_members_on(place, (SELECT node FROM n))),
           (SELECT array_agg(p ORDER BY p) FROM bothy._place_members_on(place, (SELECT node FROM n)) p)
             IS NOT DISTINCT FROM
           (SELECT array_agg(DISTINCT m.person ORDER BY m.person) FROM bothy.memberships m
             WHERE m.place = check_on.place
               AND EXISTS (SELECT FROM bothy.device_bindings b
                            WHERE b.node = (SELECT node FROM n) AND b.person = m.person))
$$;
SELECT c.* FROM generate_series(1, 4) k, LATERAL (VALUES ('A'), ('B'), ('C')) v(name),
    LATERAL pg_temp.check_on(('c0000000-0000-4000-8000-00000000000' || k)::uuid, v.name) c
    ORDER BY k, v.name;
-- a small place among 5,000 bound persons costs seeks per member, not per
-- person bound: the two indexes' scans of one call, counted
BEGIN;
SELECT pg_stat_get_xact_numscans('bothy.device_bindings_node_person'::regclass) AS scans \gset
SELECT count(*) AS small_place FROM bothy._place_members_on('c0000000-0000-4000-8000-000000000001',
    (SELECT node FROM nodes WHERE name = 'A'));
SELECT pg_stat_get_xact_numscans('bothy.device_bindings_node_person'::regclass) - :scans <= 2 * 20 + 1
    AS seeks_follow_the_place;
COMMIT;
-- nothing: an unknown place, NULLs, a node with no binding
SELECT count(*) AS unknown_place FROM bothy._place_members_on('c0000000-0000-4000-8000-00000000ffff',
    (SELECT node FROM nodes WHERE name = 'A'));
SELECT count(*) AS null_place FROM bothy._place_members_on(NULL, (SELECT node FROM nodes WHERE name = 'A'));
SELECT count(*) AS null_node FROM bothy._place_members_on('c0000000-0000-4000-8000-000000000001', NULL);
-- dead versions: members removed (and some added again), a device that
-- moved from A to B; no vacuum between, so the index keeps dead entries
DELETE FROM bothy.memberships WHERE place = 'c0000000-0000-4000-8000-000000000002'
    AND person IN (SELECT person FROM people WHERE i % 10 = 0 AND i <= 3000);
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-000000000002', person FROM people
    WHERE i % 20 = 0 AND i <= 3000;
SELECT * FROM pg_temp.check_on('c0000000-0000-4000-8000-000000000002', 'A');
UPDATE bothy.device_bindings SET node = (SELECT node FROM nodes WHERE name = 'B')
    WHERE device = md5('300deviceA')::uuid;
-- the moved device's person may still be named on A (a dead entry narrows
-- nothing wrongly: A finds no connection of it), never a non-member
SELECT count(*) FILTER (WHERE NOT EXISTS (SELECT FROM bothy.memberships m
                         WHERE m.place = 'c0000000-0000-4000-8000-000000000001' AND m.person = p))
           AS non_members,
       bool_and(p IS NOT NULL) AS all_named
  FROM bothy._place_members_on('c0000000-0000-4000-8000-000000000001', (SELECT node FROM nodes WHERE name = 'A')) p;
SELECT * FROM pg_temp.check_on('c0000000-0000-4000-8000-000000000001', 'B');
-- a removal in this transaction is seen (the statement's snapshot)
BEGIN;
DELETE FROM bothy.memberships WHERE place = 'c0000000-0000-4000-8000-000000000001';
SELECT count(*) AS after_removal FROM bothy._place_members_on('c0000000-0000-4000-8000-000000000001',
    (SELECT node FROM nodes WHERE name = 'A'));
ROLLBACK;
-- _place_nodes: the nodes of a small place's members, sorted here to compare
SELECT k AS place, (SELECT array_agg(n.name ORDER BY n.name) FROM nodes n
                     WHERE n.node = ANY (bothy._place_nodes(('c0000000-0000-4000-8000-00000000000' || k)::uuid)))
           AS nodes,
       bothy._place_nodes(('c0000000-0000-4000-8000-00000000000' || k)::uuid) IS NULL AS every_node
  FROM generate_series(1, 4) k ORDER BY k;
-- a place whose members have no device bound anywhere: no node
INSERT INTO bothy.places VALUES ('c0000000-0000-4000-8000-000000000005');
INSERT INTO bothy.memberships VALUES ('c0000000-0000-4000-8000-000000000005', md5('nobody')::uuid);
SELECT bothy._place_nodes('c0000000-0000-4000-8000-000000000005') AS no_bound_member;
-- a place with no member in these tables (a replaced seam's place): NULL
SELECT bothy._place_nodes('c0000000-0000-4000-8000-00000000ffff') IS NULL AS unknown_place_every_node,
       bothy._place_nodes(NULL) IS NULL AS null_place;
-- the seam over them: a thread's place
INSERT INTO bothy.threads VALUES ('f0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000001');
SELECT count(*) AS thread_audience_on FROM bothy.thread_audience_on('f0000000-0000-4000-8000-000000000001',
    (SELECT node FROM nodes WHERE name = 'B'));
SELECT count(*) AS unknown_thread FROM bothy.thread_audience_on('f0000000-0000-4000-8000-00000000ffff',
    (SELECT node FROM nodes WHERE name = 'B'));
SELECT cardinality(bothy.thread_nodes('f0000000-0000-4000-8000-000000000001')) AS thread_nodes,
       bothy.thread_nodes('f0000000-0000-4000-8000-00000000ffff') IS NULL AS unknown_thread_every_node;
-- read-only: they run in a read-only transaction (a standby's)
BEGIN TRANSACTION READ ONLY;
SELECT count(*) AS read_only FROM bothy.thread_audience_on('f0000000-0000-4000-8000-000000000001',
    (SELECT node FROM nodes WHERE name = 'B'));
SELECT cardinality(bothy.thread_nodes('f0000000-0000-4000-8000-000000000001')) AS read_only_nodes;
COMMIT;
