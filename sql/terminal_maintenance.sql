-- The maintenance worker's terminal tasks, called directly: which sessions
-- end and with which detail, the batch bound, the counters, what is heard
-- in single mode, and the log's pruning.  The worker runs meanwhile: each
-- case ages its rows, calls the task, reads the outcome and un-ages what
-- must stay, in one transaction, so the worker never sees an aged row.
\set VERBOSITY terse
-- each file starts from a fresh extension (and proves DROP and CREATE work)
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
\set person b0000000-0000-4000-8000-000000000001
\set phone d0000000-0000-4000-8000-000000000001
\set key d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a
CREATE TEMP VIEW counted AS
    SELECT coalesce(label, '') AS label, value FROM bothy.metrics()
     WHERE metric IN ('terminal_sessions_expired', 'terminal_log_pruned')
        OR (metric = 'signals_staged' AND label = 'terminal.log');
CREATE TEMP TABLE before AS SELECT * FROM counted;
CREATE FUNCTION pg_temp.active_host(local boolean) RETURNS uuid LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    SELECT * INTO r FROM bothy.terminal_host_register('b0000000-0000-4000-8000-000000000001', 'h', local);
    PERFORM bothy.terminal_host_pair(r.host, r.pairing_code,
                                     decode('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a', 'hex'));
    PERFORM bothy.terminal_host_confirm(r.host, 'SHA256:If4x36FUomFia/hUBG/SJxt77UtqvkWqWId+9H+XIbk');
    RETURN r.host;
END $$;
CREATE FUNCTION pg_temp.opened(host uuid) RETURNS uuid LANGUAGE sql AS $$
    SELECT session FROM bothy.terminal_session_open('b0000000-0000-4000-8000-000000000001',
                                                    'd0000000-0000-4000-8000-000000000001', host) $$;
CREATE FUNCTION pg_temp.state(session uuid) RETURNS text LANGUAGE sql AS $$
    SELECT coalesce(s.close_detail, s.state) FROM bothy.terminal_sessions s WHERE s.session = $1 $$;
SELECT pg_temp.active_host(false) AS host, pg_temp.active_host(true) AS local_host \gset
-- an opening ends one open_timeout (30 s) after its grant expired, not before
SELECT pg_temp.opened(:'host') AS recent, pg_temp.opened(:'host') AS stale, pg_temp.opened(:'host') AS edge \gset
BEGIN;
UPDATE bothy.terminal_sessions SET grant_expires_at = now() - interval '29 seconds' WHERE session = :'recent';
UPDATE bothy.terminal_sessions SET grant_expires_at = now() - interval '31 seconds' WHERE session = :'stale';
UPDATE bothy.terminal_sessions SET grant_expires_at = now() - interval '30 seconds' WHERE session = :'edge';
SELECT bothy._terminal_sessions_expire(100);
SELECT pg_temp.state(:'recent') AS recent, pg_temp.state(:'stale') AS stale, pg_temp.state(:'edge') AS edge;
UPDATE bothy.terminal_sessions SET grant_expires_at = now() + interval '1 hour' WHERE session IN (:'recent', :'edge');
COMMIT;
-- on a host asking its person for consent, a used grant waits bothy.terminal_idle_timeout (30 min) instead
SELECT pg_temp.opened(:'local_host') AS unused, pg_temp.opened(:'local_host') AS consenting,
       pg_temp.opened(:'local_host') AS forgotten \gset
BEGIN;
UPDATE bothy.terminal_sessions SET grant_expires_at = now() - interval '31 seconds' WHERE session IN (:'unused', :'consenting');
UPDATE bothy.terminal_sessions SET grant_expires_at = now() - interval '31 minutes' WHERE session = :'forgotten';
UPDATE bothy.terminal_sessions SET grant_used_at = now() WHERE session IN (:'consenting', :'forgotten');
SELECT bothy._terminal_sessions_expire(100);
SELECT pg_temp.state(:'unused') AS unused, pg_temp.state(:'consenting') AS consenting,
       pg_temp.state(:'forgotten') AS forgotten;
UPDATE bothy.terminal_sessions SET grant_expires_at = now() + interval '1 hour' WHERE session = :'consenting';
COMMIT;
-- detached for bothy.terminal_idle_timeout plus bothy.terminal_idle_grace (30 min 30 s): idle; active never here
SELECT pg_temp.opened(:'host') AS kept, pg_temp.opened(:'host') AS left_behind, pg_temp.opened(:'host') AS busy \gset
SELECT bothy.terminal_session_started(s.session, s.grant_id) FROM bothy.terminal_sessions s
 WHERE s.session IN (:'kept', :'left_behind', :'busy');
SELECT bothy.terminal_session_detach(s.session, s.grant_id) FROM bothy.terminal_sessions s
 WHERE s.session IN (:'kept', :'left_behind');
BEGIN;
UPDATE bothy.terminal_sessions SET changed_at = now() - interval '30 minutes 29 seconds' WHERE session = :'kept';
UPDATE bothy.terminal_sessions SET changed_at = now() - interval '30 minutes 31 seconds' WHERE session IN (:'left_behind', :'busy');
SELECT bothy._terminal_sessions_expire(100);
SELECT pg_temp.state(:'kept') AS kept, pg_temp.state(:'left_behind') AS left_behind, pg_temp.state(:'busy') AS busy;
UPDATE bothy.terminal_sessions SET changed_at = now() WHERE session IN (:'kept', :'busy');
COMMIT;
-- sessions a host's own transition left behind end with the host's state
SELECT pg_temp.opened(:'host') AS on_disabled, pg_temp.opened(:'local_host') AS on_pairing \gset
BEGIN;
UPDATE bothy.terminal_hosts SET state = 'disabled' WHERE host = :'host';
UPDATE bothy.terminal_hosts SET state = 'confirming' WHERE host = :'local_host';
SELECT bothy._terminal_sessions_expire(100);
SELECT pg_temp.state(:'on_disabled') AS on_disabled, pg_temp.state(:'on_pairing') AS on_pairing;
COMMIT;
SELECT count(*) AS left_open FROM bothy.terminal_sessions WHERE state <> 'closed';
-- at most max_rows per call
UPDATE bothy.terminal_hosts SET state = 'active' WHERE host = :'host';
SELECT count(pg_temp.opened(:'host')) FROM generate_series(1, 5);
BEGIN;
UPDATE bothy.terminal_hosts SET state = 'disabled' WHERE host = :'host';
SELECT bothy._terminal_sessions_expire(2);
SELECT bothy._terminal_sessions_expire(2);
SELECT bothy._terminal_sessions_expire(2);
SELECT bothy._terminal_sessions_expire(2);
COMMIT;
-- counted per close detail; every end heard (terminal.log staged) in single mode too
SELECT c.label, c.value - b.value AS delta FROM counted c JOIN before b USING (label) ORDER BY 1;
-- the log: the worker's ends, in commit order
SELECT close_detail, count(*) FROM bothy.terminal_log_after(0, 1000)
 WHERE transition = 'session_closed' GROUP BY close_detail ORDER BY 1;
-- pruning: rows past bothy.terminal_log_retention (1 day) go, the newest always stays; closed sessions too
SELECT bothy.terminal_log_head() AS head, (SELECT count(*) FROM bothy.terminal_log) AS logged \gset
BEGIN;
UPDATE bothy.terminal_log SET logged_at = now() - interval '1 day 1 second';
UPDATE bothy.terminal_sessions SET changed_at = now() - interval '1 day 1 second' WHERE state = 'closed';
SELECT bothy._terminal_log_prune() = :logged - 1 AS all_but_the_newest;
COMMIT;
SELECT bothy.terminal_log_head() = :head AS head_kept, count(*) FROM bothy.terminal_log;
SELECT count(*) AS closed_sessions FROM bothy.terminal_sessions WHERE state = 'closed';
SELECT bothy._terminal_log_prune();
SELECT c.value - b.value = :logged - 1 AS pruned_counted FROM counted c JOIN before b USING (label)
 WHERE c.label = '';
SELECT count(*) FROM bothy.terminal_log_after(:head - 1, 10);
-- the log readers' arguments
SELECT count(*) FROM bothy.terminal_log_after(0);
SELECT count(*) FROM bothy.terminal_log_after(9007199254740991, 1000);
SELECT * FROM bothy.terminal_log_after(-1);
SELECT * FROM bothy.terminal_log_after(9007199254740992);
SELECT * FROM bothy.terminal_log_after(NULL);
SELECT * FROM bothy.terminal_log_after(0, 0);
SELECT * FROM bothy.terminal_log_after(0, 1001);
SELECT * FROM bothy.terminal_log_after(0, NULL);
