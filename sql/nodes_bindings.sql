-- Node lifecycle and device binding (D-M7-17-3), single mode.
\set VERBOSITY terse
-- each file starts from a fresh extension (and proves DROP and CREATE work)
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
-- node IDs are UUIDv7
SELECT bothy.node_start('01890a5d-ac96-774b-bcce-b302099a8057');
SELECT bothy.node_start('01890a5d-ac96-774b-bcce-b302099a8057');
SELECT count(*) AS nodes FROM bothy.gateway_nodes;
SELECT bothy.node_start('11111111-1111-4111-8111-111111111111');
SELECT bothy.node_start(NULL);
-- each bind gets a fresh UUIDv7 bind ID, and the newest binding is kept
CREATE TEMP TABLE binds (n serial, bind uuid);
INSERT INTO binds (bind) SELECT bothy.device_bind('01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000001', 'd0000000-0000-4000-8000-000000000001');
INSERT INTO binds (bind) SELECT bothy.device_bind('01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000002', 'b0000000-0000-4000-8000-000000000001', 'd0000000-0000-4000-8000-000000000001');
SELECT bool_and(substr(bind::text, 15, 1) = '7') AS v7, count(DISTINCT bind) AS distinct_binds FROM binds;
SELECT (SELECT bind FROM binds WHERE n = 1) < (SELECT bind FROM binds WHERE n = 2) AS ordered;
SELECT gateway_session, bind_id = (SELECT bind FROM binds WHERE n = 2) AS newest, node
  FROM bothy.device_binding('d0000000-0000-4000-8000-000000000001');
-- an older bind ID never replaces a newer one, whatever the commit order
UPDATE bothy.device_bindings SET bind_id = '7fffffff-ffff-7fff-bfff-ffffffffffff'
 WHERE device = 'd0000000-0000-4000-8000-000000000001';
SELECT bothy.device_bind('01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000003', 'b0000000-0000-4000-8000-000000000001', 'd0000000-0000-4000-8000-000000000001') IS NOT NULL AS bound;
SELECT gateway_session, bind_id FROM bothy.device_binding('d0000000-0000-4000-8000-000000000001');
-- an unknown device has no binding
SELECT * FROM bothy.device_binding('d0000000-0000-4000-8000-00000000ffff');
-- bad input
SELECT bothy.device_bind('11111111-1111-4111-8111-111111111111', 'a0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000001', 'd0000000-0000-4000-8000-000000000001');
SELECT bothy.device_bind('01890a5d-ac96-774b-bcce-b302099a8057', NULL, 'b0000000-0000-4000-8000-000000000001', 'd0000000-0000-4000-8000-000000000001');
SELECT bothy.device_bind('01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000001', NULL, 'd0000000-0000-4000-8000-000000000001');
SELECT bothy.device_bind('01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000001', NULL);
-- many binds at once: a row per element, by its position, each a fresh bind ID
CREATE TEMP TABLE batch AS SELECT * FROM bothy.device_bind_batch('01890a5d-ac96-774b-bcce-b302099a8057',
    '{a0000000-0000-4000-8000-000000000011,a0000000-0000-4000-8000-000000000012,a0000000-0000-4000-8000-000000000013}',
    '{b0000000-0000-4000-8000-000000000001,b0000000-0000-4000-8000-000000000001,b0000000-0000-4000-8000-000000000002}',
    '{d0000000-0000-4000-8000-000000000011,d0000000-0000-4000-8000-000000000010,d0000000-0000-4000-8000-000000000011}');
SELECT ord, substr(bind_id::text, 15, 1) = '7' AS v7 FROM batch ORDER BY ord;
SELECT count(DISTINCT bind_id) AS distinct_binds FROM batch;
-- one device twice in a batch: the later element gets the newer bind ID, and it is kept
SELECT (SELECT bind_id FROM batch WHERE ord = 3) > (SELECT bind_id FROM batch WHERE ord = 1) AS later_is_newer;
SELECT gateway_session, bind_id = (SELECT bind_id FROM batch WHERE ord = 3) AS newest
  FROM bothy.device_binding('d0000000-0000-4000-8000-000000000011');
-- the rows are bound in the order of their devices (the order of their locks)
SELECT (SELECT bind_id FROM batch WHERE ord = 2) < (SELECT bind_id FROM batch WHERE ord = 1) AS device_order;
-- a batch never replaces a newer binding either
SELECT bind_id < '7fffffff-ffff-7fff-bfff-ffffffffffff' AS older FROM bothy.device_bind_batch('01890a5d-ac96-774b-bcce-b302099a8057',
    '{a0000000-0000-4000-8000-000000000004}', '{b0000000-0000-4000-8000-000000000001}', '{d0000000-0000-4000-8000-000000000001}');
SELECT gateway_session, bind_id FROM bothy.device_binding('d0000000-0000-4000-8000-000000000001');
-- an empty batch binds nothing
SELECT count(*) AS bound FROM bothy.device_bind_batch('01890a5d-ac96-774b-bcce-b302099a8057', '{}', '{}', '{}');
-- bad input
SELECT * FROM bothy.device_bind_batch('11111111-1111-4111-8111-111111111111', '{a0000000-0000-4000-8000-000000000001}', '{b0000000-0000-4000-8000-000000000001}', '{d0000000-0000-4000-8000-000000000001}');
SELECT * FROM bothy.device_bind_batch('01890a5d-ac96-774b-bcce-b302099a8057', NULL, '{b0000000-0000-4000-8000-000000000001}', '{d0000000-0000-4000-8000-000000000001}');
SELECT * FROM bothy.device_bind_batch('01890a5d-ac96-774b-bcce-b302099a8057', '{a0000000-0000-4000-8000-000000000001}', '{b0000000-0000-4000-8000-000000000001}', '{}');
SELECT * FROM bothy.device_bind_batch('01890a5d-ac96-774b-bcce-b302099a8057', '{a0000000-0000-4000-8000-000000000001}', '{NULL}', '{d0000000-0000-4000-8000-000000000001}');
SELECT count(*) AS bindings FROM bothy.device_bindings;
-- stop deletes the node's presence rows and releases its connections' holds
SELECT bothy.presence_flush('01890a5d-ac96-774b-bcce-b302099a8057', true,
    '{a0000000-0000-4000-8000-000000000001}', '{b0000000-0000-4000-8000-000000000001}',
    '{d0000000-0000-4000-8000-000000000001}', '{NULL}', '{false}', '{}');
SELECT bothy.consumer_take('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000009', 'connection');
SELECT bothy.node_stop('01890a5d-ac96-774b-bcce-b302099a8057') AS presence_rows_deleted;
SELECT count(*) AS rows_left FROM bothy.gateway_presence;
SELECT count(*) AS nodes_left FROM bothy.gateway_nodes;
SELECT holder_session, holder_kind, node, acked FROM bothy.consumer_holder('e0000000-0000-4000-8000-000000000001');
SELECT bothy.node_stop('01890a5d-ac96-774b-bcce-b302099a8057') AS presence_rows_deleted_again;
