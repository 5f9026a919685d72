-- Terminal sessions and grants: open, the token's single use, the recheck,
-- every transition as a compare-and-swap, attach, the ends and the lookups;
-- one edge case per line.  Single mode: the gateways' calls stage nothing.
\set VERBOSITY terse
-- each file starts from a fresh extension (and proves DROP and CREATE work)
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
\set person b0000000-0000-4000-8000-000000000001
\set stranger b0000000-0000-4000-8000-000000000002
\set phone d0000000-0000-4000-8000-000000000001
\set laptop d0000000-0000-4000-8000-000000000002
\set nobody 01890a5d-ac96-7000-8000-00000000dead
\set key d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a
CREATE TEMP VIEW staged AS
    SELECT label, value FROM bothy.metrics() WHERE metric = 'signals_staged' AND label LIKE 'terminal.%';
-- an active host of the person, and one still pairing
SELECT host, pairing_code FROM bothy.terminal_host_register(:'person', 'desk') \gset
SELECT bothy.terminal_host_pair(:'host', :'pairing_code', decode(:'key', 'hex'))
   AND bothy.terminal_host_confirm(:'host', bothy.terminal_fingerprint(decode(:'key', 'hex'))) = 'active' AS active;
SELECT host AS pairing_host FROM bothy.terminal_host_register(:'person', 'new') \gset
SELECT sum(value) AS staged0 FROM staged \gset
-- open: only the owner, only on an active host
SELECT * FROM bothy.terminal_session_open(:'stranger', :'phone', :'host');
SELECT * FROM bothy.terminal_session_open(:'person', :'phone', :'nobody');
SELECT * FROM bothy.terminal_session_open(:'person', :'phone', :'pairing_host');
SELECT * FROM bothy.terminal_session_open(NULL, :'phone', :'host');
SELECT * FROM bothy.terminal_session_open(:'person', NULL, :'host');
SELECT * FROM bothy.terminal_session_open(:'person', :'phone', NULL);
SELECT outcome, substr(session::text, 15, 1) = '7' AS session_v7, substr(grant_id::text, 15, 1) = '7' AS grant_v7,
       grant_expires_at = now() + interval '30 seconds' AS expires_after_open_timeout
  FROM bothy.terminal_session_open(:'person', :'phone', :'host');
SELECT session, grant_id FROM bothy.terminal_session_open(:'person', :'phone', :'host') \gset
SELECT * FROM bothy.terminal_relay_expectation(:'session') \gset x_
SELECT :'x_host' = :'host' AS its_host, :'x_person' = :'person' AS its_person, :'x_device' = :'phone' AS its_device,
       :'x_grant_id' = :'grant_id' AS its_grant, :'x_state' AS state;
-- the token's grant is used once, while it lasts
SELECT bothy.terminal_grant_use(:'session', :'session');
SELECT bothy.terminal_grant_use(:'nobody', :'grant_id');
SELECT bothy.terminal_grant_use(NULL, :'grant_id');
SELECT bothy.terminal_grant_use(:'session', NULL);
SELECT bothy.terminal_grant_use(:'session', :'grant_id');
SELECT bothy.terminal_grant_use(:'session', :'grant_id');
-- the recheck after the commit
SELECT bothy.terminal_session_recheck(:'session', :'grant_id', true);
SELECT bothy.terminal_session_recheck(:'session', :'session', false);
SELECT state FROM bothy.terminal_relay_expectation(:'session');
SELECT bothy.terminal_session_recheck(:'nobody', :'grant_id', true);
SELECT bothy.terminal_session_recheck(NULL, :'grant_id', true);
SELECT bothy.terminal_session_recheck(:'session', NULL, true);
SELECT bothy.terminal_session_recheck(:'session', :'grant_id', NULL);
-- opening -> active once per grant; not by another grant
SELECT bothy.terminal_session_started(:'session', :'session');
SELECT bothy.terminal_session_started(:'nobody', :'grant_id');
SELECT bothy.terminal_session_started(NULL, :'grant_id');
SELECT bothy.terminal_session_started(:'session', NULL);
SELECT bothy.terminal_session_open_timeout(:'session', :'session');
SELECT bothy.terminal_session_started(:'session', :'grant_id');
SELECT bothy.terminal_session_started(:'session', :'grant_id');
SELECT bothy.terminal_session_open_timeout(:'session', :'grant_id');
SELECT bothy.terminal_grant_use(:'session', :'grant_id');
-- active -> detached -> active (RelayActivate, a started grant only)
SELECT bothy.terminal_session_activate(:'session', :'grant_id');
SELECT bothy.terminal_session_detach(:'session', :'session');
SELECT bothy.terminal_session_detach(:'session', :'grant_id');
SELECT bothy.terminal_session_detach(:'session', :'grant_id');
SELECT bothy.terminal_session_activate(:'session', :'session');
SELECT bothy.terminal_session_activate(:'session', :'grant_id');
SELECT bothy.terminal_session_activate(:'session', :'grant_id');
SELECT bothy.terminal_session_detach(NULL, :'grant_id');
SELECT bothy.terminal_session_activate(:'session', NULL);
SELECT bothy.terminal_session_detach(:'session', :'grant_id');
-- attach: the person's detached session gets a fresh grant, from any of their devices
SELECT * FROM bothy.terminal_session_attach(:'stranger', :'laptop', :'session');
SELECT * FROM bothy.terminal_session_attach(:'person', :'laptop', :'nobody');
SELECT * FROM bothy.terminal_session_attach(NULL, :'laptop', :'session');
SELECT * FROM bothy.terminal_session_attach(:'person', NULL, :'session');
SELECT * FROM bothy.terminal_session_attach(:'person', :'laptop', NULL);
SELECT outcome, host = :'host' AS its_host, grant_id <> :'grant_id' AS fresh,
       grant_expires_at = now() + interval '30 seconds' AS expires_after_open_timeout
  FROM bothy.terminal_session_attach(:'person', :'laptop', :'session');
SELECT grant_id AS grant2, device = :'laptop' AS on_the_laptop, state FROM bothy.terminal_relay_expectation(:'session') \gset
SELECT :'on_the_laptop' AS on_the_laptop, :'state' AS state;
SELECT bothy.terminal_session_activate(:'session', :'grant2');
SELECT bothy.terminal_session_started(:'session', :'grant_id');
SELECT bothy.terminal_grant_use(:'session', :'grant_id');
SELECT bothy.terminal_grant_use(:'session', :'grant2');
SELECT bothy.terminal_session_recheck(:'session', :'grant_id', false);
SELECT bothy.terminal_session_recheck(:'session', :'grant2', true);
SELECT bothy.terminal_session_started(:'session', :'grant2');
SELECT * FROM bothy.terminal_session_attach(:'person', :'laptop', :'session');
-- a detached session of a host that is no longer active is not attached
SELECT bothy.terminal_session_detach(:'session', :'grant2');
UPDATE bothy.terminal_hosts SET state = 'confirming' WHERE host = :'host';
SELECT * FROM bothy.terminal_session_attach(:'person', :'laptop', :'session');
UPDATE bothy.terminal_hosts SET state = 'active' WHERE host = :'host';
-- the ends a gateway decides: a closed set, from the state expected or any
SELECT bothy.terminal_session_end(:'session', 'open_timeout');
SELECT bothy.terminal_session_end(:'session', 'recheck_failed');
SELECT bothy.terminal_session_end(:'session', 'host_disabled');
SELECT bothy.terminal_session_end(:'session', 'bye');
SELECT bothy.terminal_session_end(:'session', NULL);
SELECT bothy.terminal_session_end(NULL, 'idle');
SELECT bothy.terminal_session_end(:'session', 'idle', 'closed');
SELECT bothy.terminal_session_end(:'session', 'idle', 'active');
SELECT bothy.terminal_session_end(:'nobody', 'idle');
SELECT bothy.terminal_session_end(:'session', 'idle', 'detached');
SELECT bothy.terminal_session_end(:'session', 'closed_by_host');
SELECT count(*) FROM bothy.terminal_relay_expectation(:'session');
SELECT bothy.terminal_session_recheck(:'session', :'grant2', true);
SELECT bothy.terminal_session_started(:'session', :'grant2');
SELECT * FROM bothy.terminal_session_attach(:'person', :'laptop', :'session');
SELECT * FROM bothy.terminal_relay_expectation(NULL);
-- the person's DELETE
SELECT session AS s2, grant_id AS g2 FROM bothy.terminal_session_open(:'person', :'phone', :'host') \gset
SELECT bothy.terminal_session_close(:'stranger', :'s2');
SELECT bothy.terminal_session_close(:'person', :'nobody');
SELECT bothy.terminal_session_close(NULL, :'s2');
SELECT bothy.terminal_session_close(:'person', NULL);
SELECT bothy.terminal_session_close(:'person', :'s2');
SELECT bothy.terminal_session_close(:'person', :'s2');
-- the end at open_timeout
SELECT session AS s3, grant_id AS g3 FROM bothy.terminal_session_open(:'person', :'phone', :'host') \gset
SELECT bothy.terminal_session_open_timeout(:'s3', NULL);
SELECT bothy.terminal_session_open_timeout(NULL, :'g3');
SELECT bothy.terminal_session_open_timeout(:'s3', :'g3');
SELECT bothy.terminal_session_open_timeout(:'s3', :'g3');
-- an expired grant is not used
SELECT session AS s4, grant_id AS g4 FROM bothy.terminal_session_open(:'person', :'phone', :'host') \gset
UPDATE bothy.terminal_sessions SET grant_expires_at = now() - interval '1 microsecond' WHERE session = :'s4';
SELECT bothy.terminal_grant_use(:'s4', :'g4');
-- the expiry itself is inclusive (one transaction, so one now())
BEGIN;
UPDATE bothy.terminal_sessions SET grant_expires_at = now() WHERE session = :'s4';
SELECT bothy.terminal_grant_use(:'s4', :'g4');
COMMIT;
-- the sessions of a host that are not closed
SELECT state, session = :'s4' AS the_open_one FROM bothy.terminal_host_sessions(:'host');
SELECT count(*) FROM bothy.terminal_host_sessions(:'nobody');
SELECT * FROM bothy.terminal_host_sessions(NULL);
-- the log of it all, in commit order, and nothing staged in single mode
SELECT session = :'session' AS first, transition, state, grant_id = :'grant_id' AS grant1,
       grant_id = :'grant2' AS grant2, close_detail
  FROM bothy.terminal_log_after(2, 1000);
SELECT sum(value) - :staged0 AS staged FROM staged;
-- a host that started the grant before the device's stream came (bothy-host
-- sends session.started once its shell runs): the device still uses the
-- grant, once; a closed session's grant is not used
SELECT session AS s5, grant_id AS g5 FROM bothy.terminal_session_open(:'person', :'phone', :'host') \gset
SELECT bothy.terminal_session_started(:'s5', :'g5');
SELECT bothy.terminal_grant_use(:'s5', :'g5');
SELECT bothy.terminal_grant_use(:'s5', :'g5');
SELECT session AS s6, grant_id AS g6 FROM bothy.terminal_session_open(:'person', :'phone', :'host') \gset
SELECT bothy.terminal_session_close(:'person', :'s6');
SELECT bothy.terminal_grant_use(:'s6', :'g6');
