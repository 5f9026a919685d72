-- Presence flush and read (D-M7-17-6).  Node A and node B, two persons.
\set VERBOSITY terse
-- each file starts from a fresh extension (and proves DROP and CREATE work)
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
\set a '''01890a5d-ac96-774b-bcce-b302099a8057'''
\set b '''01890a5d-ac96-7aaa-8bbb-000000000002'''
-- a delta before any full flush applies nothing and asks for a full one
SELECT bothy.presence_flush(:a, false, '{a0000000-0000-4000-8000-000000000001}', '{b0000000-0000-4000-8000-000000000001}', '{d0000000-0000-4000-8000-000000000001}', '{NULL}', '{false}', '{}') AS applied;
SELECT count(*) AS rows FROM bothy.gateway_presence;
-- a full flush writes every row and marks the node fresh
SELECT bothy.presence_flush(:a, true, '{a0000000-0000-4000-8000-000000000001,a0000000-0000-4000-8000-000000000002}', '{b0000000-0000-4000-8000-000000000001,b0000000-0000-4000-8000-000000000002}', '{d0000000-0000-4000-8000-000000000001,d0000000-0000-4000-8000-000000000002}', '{f0000000-0000-4000-8000-000000000001,NULL}', '{false,true}', '{}') AS applied;
SELECT person, device, gateway_session, focus, idle FROM bothy.presence_read('{b0000000-0000-4000-8000-000000000001,b0000000-0000-4000-8000-000000000002}');
-- a delta touches only what changed: one focus change, one session ended
UPDATE bothy.gateway_presence SET updated_at = now() - interval '1 minute';
SELECT bothy.presence_flush(:a, false, '{a0000000-0000-4000-8000-000000000001}', '{b0000000-0000-4000-8000-000000000001}', '{d0000000-0000-4000-8000-000000000001}', '{NULL}', '{false}', '{a0000000-0000-4000-8000-000000000002}') AS applied;
SELECT gateway_session, focus, updated_at > now() - interval '1 second' AS touched FROM bothy.gateway_presence ORDER BY gateway_session;
-- an unchanged row in a delta is not rewritten
UPDATE bothy.gateway_presence SET updated_at = now() - interval '1 minute';
SELECT bothy.presence_flush(:a, false, '{a0000000-0000-4000-8000-000000000001}', '{b0000000-0000-4000-8000-000000000001}', '{d0000000-0000-4000-8000-000000000001}', '{NULL}', '{false}', '{}') AS applied;
SELECT updated_at < now() - interval '30 seconds' AS untouched FROM bothy.gateway_presence;
-- a session that ended and came back within one interval stays present
SELECT bothy.presence_flush(:a, false, '{a0000000-0000-4000-8000-000000000001}', '{b0000000-0000-4000-8000-000000000001}', '{d0000000-0000-4000-8000-000000000001}', '{NULL}', '{true}', '{a0000000-0000-4000-8000-000000000001}') AS applied;
SELECT gateway_session, idle FROM bothy.gateway_presence;
-- the same device on two nodes (it moved): the read keeps the newest row
SELECT bothy.presence_flush(:b, true, '{a0000000-0000-4000-8000-000000000003}', '{b0000000-0000-4000-8000-000000000001}', '{d0000000-0000-4000-8000-000000000001}', '{NULL}', '{false}', '{}') AS applied;
UPDATE bothy.gateway_presence SET updated_at = now() - interval '1 second' WHERE node = :a;
SELECT person, device, node = :b AS on_b, gateway_session FROM bothy.presence_read('{b0000000-0000-4000-8000-000000000001}');
-- a full flush replaces the node's rows: sessions not in it go
SELECT bothy.presence_flush(:a, true, '{a0000000-0000-4000-8000-000000000004}', '{b0000000-0000-4000-8000-000000000002}', '{d0000000-0000-4000-8000-000000000002}', '{NULL}', '{false}', '{}') AS applied;
SELECT gateway_session FROM bothy.gateway_presence WHERE node = :a;
-- a node silent for longer than the TTL: readers ignore its rows at once
UPDATE bothy.gateway_presence_nodes SET flushed_at = now() - interval '11 seconds' WHERE node = :b;
SELECT count(*) AS fresh_rows_of_b FROM bothy.presence_read('{b0000000-0000-4000-8000-000000000001}');
SELECT count(*) AS stored_rows_of_b FROM bothy.gateway_presence WHERE node = :b;
-- and the next flush of any node deletes them
SELECT bothy.presence_flush(:a, false, '{}', '{}', '{}', '{}', '{}', '{}') AS applied;
SELECT count(*) AS stored_rows_of_b, (SELECT count(*) FROM bothy.gateway_presence_nodes WHERE node = :b) AS marker_of_b FROM bothy.gateway_presence WHERE node = :b;
-- the silent node comes back: its delta is refused, its full flush restores its rows
SELECT bothy.presence_flush(:b, false, '{}', '{}', '{}', '{}', '{}', '{}') AS applied;
SELECT bothy.presence_flush(:b, true, '{a0000000-0000-4000-8000-000000000003}', '{b0000000-0000-4000-8000-000000000001}', '{d0000000-0000-4000-8000-000000000001}', '{NULL}', '{false}', '{}') AS applied;
SELECT count(*) AS fresh_rows_of_b FROM bothy.presence_read('{b0000000-0000-4000-8000-000000000001}');
-- a node that itself failed to flush for longer than the TTL expires its own rows, then refills
UPDATE bothy.gateway_presence_nodes SET flushed_at = now() - interval '1 minute' WHERE node = :b;
SELECT bothy.presence_flush(:b, false, '{}', '{}', '{}', '{}', '{}', '{}') AS applied;
-- bad input
SELECT bothy.presence_flush(:a, false, '{a0000000-0000-4000-8000-000000000001}', '{}', '{}', '{}', '{}', '{}');
SELECT bothy.presence_flush(:a, false, '{a0000000-0000-4000-8000-000000000001,a0000000-0000-4000-8000-000000000001}', '{b0000000-0000-4000-8000-000000000001,b0000000-0000-4000-8000-000000000001}', '{d0000000-0000-4000-8000-000000000001,d0000000-0000-4000-8000-000000000001}', '{NULL,NULL}', '{false,false}', '{}');
SELECT bothy.presence_flush(:a, false, '{NULL}', '{b0000000-0000-4000-8000-000000000001}', '{d0000000-0000-4000-8000-000000000001}', '{NULL}', '{false}', '{}');
SELECT bothy.presence_flush(:a, false, '{a0000000-0000-4000-8000-000000000001}', '{b0000000-0000-4000-8000-000000000001}', '{d0000000-0000-4000-8000-000000000001}', '{NULL}', '{NULL}', '{}');
SELECT bothy.presence_flush(:a, NULL, '{}', '{}', '{}', '{}', '{}', '{}');
SELECT bothy.presence_flush(:a, false, '{}', '{}', '{}', '{}', '{}', NULL);
SELECT bothy.presence_flush('11111111-1111-4111-8111-111111111111', true, '{}', '{}', '{}', '{}', '{}', '{}');
SELECT * FROM bothy.presence_read(NULL);
SELECT * FROM bothy.presence_read('{}');
