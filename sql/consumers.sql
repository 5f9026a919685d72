-- Consumer takeover, the guarded save and the run start CAS (D-M7-17-4).
\set VERBOSITY terse
-- each file starts from a fresh extension (and proves DROP and CREATE work)
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
SELECT bothy.agent_put('e0000000-0000-4000-8000-000000000001');
SELECT bothy.place_put('c0000000-0000-4000-8000-000000000001');
SELECT bothy.thread_put('f0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000001');
SELECT bothy.agent_event_appended('e0000000-0000-4000-8000-000000000001', 'message.created', '{"n":1}');
SELECT bothy.agent_event_appended('e0000000-0000-4000-8000-000000000001', 'message.created', '{"n":2}');
SELECT bothy.agent_event_appended('e0000000-0000-4000-8000-000000000001', 'run.requested', '{"n":3}');
-- a connection takes over and continues from the held acknowledgement 0
SELECT bothy.consumer_take('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000001', 'connection') AS continue_after;
SELECT holder_session, holder_kind, acked, lease_until > now() AS leased FROM bothy.consumer_holder('e0000000-0000-4000-8000-000000000001');
SELECT id, type, data FROM bothy.agent_events_after('e0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000001', 0);
SELECT id FROM bothy.agent_events_after('e0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000001', 1, 1);
-- the guarded save moves the acknowledgement forward, never back
SELECT bothy.consumer_save('e0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000001', 2) AS holds;
SELECT bothy.consumer_save('e0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000001', 1) AS holds;
SELECT acked FROM bothy.consumer_holder('e0000000-0000-4000-8000-000000000001');
-- an acknowledgement beyond the last event is refused
SELECT bothy.consumer_save('e0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000001', 4);
SELECT bothy.consumer_save('e0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000001', -1);
SELECT bothy.consumer_save('e0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000001', NULL);
-- a REST poll window takes over; the new holder continues from 2
SELECT bothy.consumer_take('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000002', 'poll', '30 seconds') AS continue_after;
SELECT holder_session, holder_kind, acked FROM bothy.consumer_holder('e0000000-0000-4000-8000-000000000001');
-- the old connection is fenced: its save reports it, it reads nothing, it cannot start a run
SELECT bothy.consumer_save('e0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000001', 3) AS holds;
SELECT acked FROM bothy.consumer_holder('e0000000-0000-4000-8000-000000000001');
SELECT count(*) AS events_for_fenced FROM bothy.agent_events_after('e0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000001', 0);
SELECT bothy.run_changed('90000000-0000-4000-8000-000000000001', 'f0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001', 1, '{"status":"queued"}');
SELECT bothy.run_start('90000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000001') AS fenced_starts;
-- the holder starts the run once
SELECT bothy.run_start('90000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000002') AS holder_starts;
SELECT bothy.run_start('90000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000002') AS starts_again;
SELECT started_by FROM bothy.runs WHERE run = '90000000-0000-4000-8000-000000000001';
SELECT bothy.run_start('90000000-0000-4000-8000-00000000ffff', 'a0000000-0000-4000-8000-000000000002');
-- a poll may report what it finished when it takes over
SELECT bothy.consumer_take('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000003', 'poll', '30 seconds', 3) AS continue_after;
-- bad input
SELECT bothy.consumer_take('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000003', 'socket');
SELECT bothy.consumer_take('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000003', 'poll');
SELECT bothy.consumer_take('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000003', 'poll', '2 hours');
SELECT bothy.consumer_take('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000003', 'connection', '30 seconds');
SELECT bothy.consumer_take('e0000000-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111', 'a0000000-0000-4000-8000-000000000003', 'connection');
SELECT bothy.consumer_take(NULL, '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000003', 'connection');
SELECT bothy.consumer_take('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000003', 'poll', '30 seconds', 99);
SELECT bothy.agent_events_after('e0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000003', 0, 0);
-- an agent nobody ever held
SELECT * FROM bothy.consumer_holder('e0000000-0000-4000-8000-00000000ffff');
SELECT bothy.consumer_save('e0000000-0000-4000-8000-00000000ffff', 'a0000000-0000-4000-8000-000000000003', 0) AS holds;
-- after a lapse with no takeover, a connection holds again (bothy.consumer_resume)
SELECT bothy.consumer_take('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000004', 'connection') AS continue_after;
UPDATE bothy.consumer_holds SET lease_until = now() - interval '1 second' WHERE agent = 'e0000000-0000-4000-8000-000000000001';
SELECT bothy.consumer_save('e0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000004', 3) AS lapsed_save;
SELECT bothy.consumer_resume('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-7aaa-8bbb-000000000002', 'a0000000-0000-4000-8000-000000000004', 3) AS resumed;
SELECT holder_session, node, acked, lease_until > now() AS leased FROM bothy.consumer_holder('e0000000-0000-4000-8000-000000000001');
-- released by the maintenance worker (no holder, released from it): the same holds again
UPDATE bothy.consumer_holds SET released_from = holder_session, holder_session = NULL, holder_kind = NULL, node = NULL, lease_until = NULL WHERE agent = 'e0000000-0000-4000-8000-000000000001';
SELECT bothy.consumer_resume('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000004', 3) AS resumed_after_release;
-- another holder took the stream: no resume, the connection is fenced
SELECT bothy.consumer_take('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000005', 'connection') AS continue_after;
SELECT bothy.consumer_resume('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000004', 3) AS resumed_over_another;
SELECT holder_session FROM bothy.consumer_holder('e0000000-0000-4000-8000-000000000001');
-- that other holder's hold is released: still not ours to take back
UPDATE bothy.consumer_holds SET released_from = holder_session, holder_session = NULL, holder_kind = NULL, node = NULL, lease_until = NULL WHERE agent = 'e0000000-0000-4000-8000-000000000001';
SELECT bothy.consumer_resume('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000004', 3) AS resumed_after_anothers_release;
-- arguments
SELECT bothy.consumer_resume(NULL, '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000004', 3);
SELECT bothy.consumer_resume('e0000000-0000-4000-8000-000000000001', 'a0000000-0000-4000-8000-000000000004', 'a0000000-0000-4000-8000-000000000004', 3);
SELECT bothy.consumer_resume('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000004', 99);
SELECT bothy.consumer_resume('e0000000-0000-4000-8000-000000000001', '01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000004', NULL);
