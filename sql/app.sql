-- Application-side calls and the seam lookups.
\set VERBOSITY terse
-- each file starts from a fresh extension (and proves DROP and CREATE work)
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
-- places, threads, memberships
SELECT bothy.place_put('c0000000-0000-4000-8000-000000000001');
SELECT bothy.place_put('c0000000-0000-4000-8000-000000000001');
SELECT bothy.thread_put('f0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000001');
SELECT bothy.thread_put('f0000000-0000-4000-8000-000000000002', 'c0000000-0000-4000-8000-00000000ffff');
SELECT bothy.thread_place('f0000000-0000-4000-8000-000000000001');
SELECT bothy.thread_place('f0000000-0000-4000-8000-00000000ffff') IS NULL AS unknown_thread;
SELECT bothy.membership_added('c0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000001');
SELECT bothy.membership_added('c0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000002');
SELECT bothy.membership_added('c0000000-0000-4000-8000-00000000ffff', 'b0000000-0000-4000-8000-000000000002');
SELECT * FROM bothy.thread_audience('f0000000-0000-4000-8000-000000000001', '{b0000000-0000-4000-8000-000000000001,b0000000-0000-4000-8000-000000000002,b0000000-0000-4000-8000-000000000003}') ORDER BY 1;
SELECT bothy.membership_removed('c0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000002') AS removed;
SELECT bothy.membership_removed('c0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-000000000002') AS removed_again;
SELECT * FROM bothy.thread_audience('f0000000-0000-4000-8000-000000000001', '{b0000000-0000-4000-8000-000000000001,b0000000-0000-4000-8000-000000000002}');
-- agents and runs: only a newer version is stored
SELECT bothy.agent_known('e0000000-0000-4000-8000-000000000001') AS known_before;
SELECT bothy.agent_put('e0000000-0000-4000-8000-000000000001');
SELECT bothy.agent_known('e0000000-0000-4000-8000-000000000001') AS known_after;
SELECT bothy.run_changed('90000000-0000-4000-8000-000000000001', 'f0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001', 1, '{"status":"queued"}') AS stored;
SELECT bothy.run_changed('90000000-0000-4000-8000-000000000001', 'f0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001', 3, '{"status":"running","step":2}') AS stored;
SELECT bothy.run_changed('90000000-0000-4000-8000-000000000001', 'f0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001', 2, '{"status":"stale"}') AS stored;
SELECT bothy.run_changed('90000000-0000-4000-8000-000000000001', 'f0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001', 3, '{"status":"same"}') AS stored;
SELECT bothy.run_document('90000000-0000-4000-8000-000000000001');
SELECT bothy.run_document('90000000-0000-4000-8000-00000000ffff') IS NULL AS unknown_run;
SELECT bothy.run_changed('90000000-0000-4000-8000-000000000002', 'f0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-00000000ffff', 1, '{}');
SELECT bothy.run_changed('90000000-0000-4000-8000-000000000002', 'f0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001', -1, '{}');
SELECT bothy.run_changed('90000000-0000-4000-8000-000000000002', 'f0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001', 1, '[]');
SELECT bothy.run_changed('90000000-0000-4000-8000-000000000002', NULL, 'e0000000-0000-4000-8000-000000000001', 1, '{}');
-- notifications: stored with a UUIDv7 ID
SELECT substr(bothy.notification_created('b0000000-0000-4000-8000-000000000001', 'mention', false, 1, 'f0000000-0000-4000-8000-000000000001')::text, 15, 1) AS v7;
SELECT bothy.notification_created('b0000000-0000-4000-8000-000000000001', 'direct', true, 2, NULL, 'aa000000-0000-4000-8000-000000000001', 'ab000000-0000-4000-8000-000000000001') IS NOT NULL AS created;
SELECT recipient, hint_kind, quiet, count, thread, message, target FROM bothy.notifications ORDER BY nid;
SELECT bothy.notification_created('b0000000-0000-4000-8000-000000000001', 'like', false, 1);
SELECT bothy.notification_created('b0000000-0000-4000-8000-000000000001', 'mention', false, -1);
SELECT bothy.notification_created('b0000000-0000-4000-8000-000000000001', 'mention', NULL, 1);
SELECT bothy.notification_created(NULL, 'mention', false, 1);
-- agent events: numbered per agent from 1
SELECT bothy.agent_put('e0000000-0000-4000-8000-000000000002');
SELECT bothy.agent_event_appended('e0000000-0000-4000-8000-000000000001', 'message.created', '{"n":1}');
SELECT bothy.agent_event_appended('e0000000-0000-4000-8000-000000000002', 'message.created', '{"n":1}');
SELECT bothy.agent_event_appended('e0000000-0000-4000-8000-000000000001', 'message.created', '{"n":2}');
SELECT bothy.agent_event_appended('e0000000-0000-4000-8000-000000000001', 'Message Created', '{}');
SELECT bothy.agent_event_appended('e0000000-0000-4000-8000-000000000001', 'message.created', NULL);
SELECT bothy.agent_event_appended('e0000000-0000-4000-8000-00000000ffff', 'message.created', '{}');
SELECT agent, id, type FROM bothy.agent_events ORDER BY agent, id;
