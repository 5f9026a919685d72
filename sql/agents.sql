-- Agent heartbeats persisted monotonically (D-M7-17-10).
\set VERBOSITY terse
-- each file starts from a fresh extension (and proves DROP and CREATE work)
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
\set a '''01890a5d-ac96-774b-bcce-b302099a8057'''
\set b '''01890a5d-ac96-7aaa-8bbb-000000000002'''
SELECT bothy.agent_heartbeat_persist('e0000000-0000-4000-8000-000000000001', :a, '2026-01-01 10:00:00+00', 'online') AS stored;
-- a newer heartbeat of another node takes the row
SELECT bothy.agent_heartbeat_persist('e0000000-0000-4000-8000-000000000001', :b, '2026-01-01 10:00:05+00', 'busy', 'metered', 'b0000000-0000-4000-8000-000000000001') AS stored;
-- an older or equal heartbeat (of any node) changes nothing
SELECT bothy.agent_heartbeat_persist('e0000000-0000-4000-8000-000000000001', :a, '2026-01-01 10:00:03+00', 'online') AS stored;
SELECT bothy.agent_heartbeat_persist('e0000000-0000-4000-8000-000000000001', :b, '2026-01-01 10:00:05+00', 'online') AS stored_equal;
SELECT node = :b AS from_b, state, billing_mode, actor, heartbeat_at FROM bothy.agent_status('{e0000000-0000-4000-8000-000000000001}');
-- a heartbeat from a clock ahead of the database is stored as now
SELECT bothy.agent_heartbeat_persist('e0000000-0000-4000-8000-000000000001', :a, now() + interval '1 hour', 'online') AS stored;
SELECT heartbeat_at <= now() AND heartbeat_at > now() - interval '1 minute' AS clamped FROM bothy.agent_status('{e0000000-0000-4000-8000-000000000001}');
-- several agents, unknown ones absent
SELECT bothy.agent_heartbeat_persist('e0000000-0000-4000-8000-000000000002', :a, now(), 'offline') AS stored;
SELECT agent, state FROM bothy.agent_status('{e0000000-0000-4000-8000-000000000002,e0000000-0000-4000-8000-000000000001,e0000000-0000-4000-8000-00000000ffff}');
-- bad input
SELECT bothy.agent_heartbeat_persist('e0000000-0000-4000-8000-000000000001', :a, now(), 'away');
SELECT bothy.agent_heartbeat_persist('e0000000-0000-4000-8000-000000000001', :a, now(), 'online', 'prepaid');
SELECT bothy.agent_heartbeat_persist('e0000000-0000-4000-8000-000000000001', :a, NULL, 'online');
SELECT bothy.agent_heartbeat_persist('e0000000-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111', now(), 'online');
SELECT * FROM bothy.agent_status(NULL);
