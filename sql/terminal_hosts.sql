-- Terminal hosts: the fingerprint, register, pair, confirm, disable,
-- re-pair, the duplicate verdict and the lookups; one edge case per line.
-- The instance runs in single mode: app calls stage terminal.host_close and
-- terminal.log, the gateways' calls stage nothing (counted per kind below).
\set VERBOSITY terse
-- each file starts from a fresh extension (and proves DROP and CREATE work)
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
\set owner b0000000-0000-4000-8000-000000000001
\set other b0000000-0000-4000-8000-000000000002
\set nohost 01890a5d-ac96-7000-8000-00000000dead
-- RFC 8032 test 1's public key, and its fingerprint (docs/terminal.md, "Hosts")
\set key d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a
\set key2 3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c
CREATE TEMP VIEW staged AS
    SELECT label, value FROM bothy.metrics() WHERE metric = 'signals_staged' AND label LIKE 'terminal.%';
-- the fingerprint
SELECT bothy.terminal_fingerprint(decode(:'key', 'hex'));
SELECT bothy.terminal_fingerprint(decode(:'key2', 'hex'));
SELECT bothy.terminal_fingerprint(decode(:'key' || '00', 'hex'));
SELECT bothy.terminal_fingerprint(decode(substr(:'key', 3), 'hex'));
SELECT bothy.terminal_fingerprint(NULL);
-- register: a UUIDv7, state pairing, a 16-character code of the lower-case Crockford alphabet
SELECT substr(host::text, 15, 1) = '7' AS v7, pairing_code ~ '^[0-9a-hjkmnp-tv-z]{16}$' AS code_form
  FROM bothy.terminal_host_register(:'owner', 'laptop');
SELECT count(DISTINCT pairing_code) AS distinct_codes
  FROM generate_series(1, 20) AS g, LATERAL bothy.terminal_host_register(:'other', 'many ' || g);
SELECT count(*) FROM bothy.terminal_host_register(:'owner', repeat('é', 100), true);
SELECT * FROM bothy.terminal_host_register(NULL, 'x');
SELECT * FROM bothy.terminal_host_register(:'owner', NULL);
SELECT * FROM bothy.terminal_host_register(:'owner', 'x', NULL);
SELECT * FROM bothy.terminal_host_register(:'owner', '');
SELECT * FROM bothy.terminal_host_register(:'owner', repeat('a', 101));
SELECT * FROM bothy.terminal_host_register(:'owner', E'two\nlines');
SELECT * FROM bothy.terminal_host_register(:'owner', E'tab\there');
-- the code is never stored, only its SHA-256
SELECT count(*) AS codes_in_the_clear FROM bothy.terminal_hosts h
 WHERE h.pairing_code_hash IS NULL AND h.state = 'pairing';
SELECT * FROM bothy.terminal_host_register(:'owner', 'desk') \gset
SELECT value AS close0 FROM staged WHERE label = 'terminal.host_close' \gset
SELECT value AS log0 FROM staged WHERE label = 'terminal.log' \gset
SELECT name, state, public_key IS NULL AS no_key, require_local_confirm FROM bothy.terminal_host_states(ARRAY[:'host'::uuid]);
-- pair: the code once, with a 32-byte key
SELECT bothy.terminal_host_pair(:'host', 'wrongcodewrongco', decode(:'key', 'hex'));
SELECT bothy.terminal_host_pair(:'host', upper(:'pairing_code'), decode(:'key', 'hex'));
SELECT bothy.terminal_host_pair(:'nohost', :'pairing_code', decode(:'key', 'hex'));
SELECT bothy.terminal_host_pair(:'host', :'pairing_code', decode('00', 'hex'));
SELECT bothy.terminal_host_pair(NULL, :'pairing_code', decode(:'key', 'hex'));
SELECT bothy.terminal_host_pair(:'host', NULL, decode(:'key', 'hex'));
SELECT bothy.terminal_host_pair(:'host', :'pairing_code', NULL);
SELECT bothy.terminal_host_pair(:'host', :'pairing_code', decode(:'key', 'hex'));
SELECT bothy.terminal_host_pair(:'host', :'pairing_code', decode(:'key2', 'hex'));
SELECT state, encode(public_key, 'hex') = :'key' AS its_key FROM bothy.terminal_host_states(ARRAY[:'host'::uuid]);
-- confirm: a wrong fingerprint is counted and answered with the state
SELECT bothy.terminal_host_confirm(:'host', 'SHA256:wrong');
SELECT bothy.terminal_host_confirm(:'host', lower(bothy.terminal_fingerprint(decode(:'key', 'hex'))));
SELECT bothy.terminal_host_confirm(:'host', bothy.terminal_fingerprint(decode(:'key2', 'hex')));
SELECT bothy.terminal_host_confirm(:'host', '');
SELECT bothy.terminal_host_confirm(:'host', NULL);
SELECT bothy.terminal_host_confirm(NULL, 'SHA256:x');
SELECT bothy.terminal_host_confirm(:'nohost', 'SHA256:x');
SELECT wrong_attempts FROM bothy.terminal_hosts WHERE host = :'host';
SELECT bothy.terminal_host_confirm(:'host', bothy.terminal_fingerprint(decode(:'key', 'hex')));
SELECT wrong_attempts FROM bothy.terminal_hosts WHERE host = :'host';
SELECT bothy.terminal_host_confirm(:'host', bothy.terminal_fingerprint(decode(:'key', 'hex')));
SELECT bothy.terminal_host_confirm(:'host', 'SHA256:wrong');
SELECT wrong_attempts FROM bothy.terminal_hosts WHERE host = :'host';
-- so far: pair and confirm; single mode: the gateway's pair stages nothing, the app's confirm a wake-up
SELECT (SELECT value FROM staged WHERE label = 'terminal.host_close') - :close0 AS host_close,
       (SELECT value FROM staged WHERE label = 'terminal.log') - :log0 AS log;
-- bothy.terminal_fingerprint_max_attempts (5) wrong confirmations: back to pairing, no code, no key
SELECT * FROM bothy.terminal_host_register(:'owner', 'guessed') \gset g_
SELECT bothy.terminal_host_pair(:'g_host', :'g_pairing_code', decode(:'key2', 'hex'));
SELECT bothy.terminal_host_confirm(:'g_host', 'SHA256:1'), bothy.terminal_host_confirm(:'g_host', 'SHA256:2'),
       bothy.terminal_host_confirm(:'g_host', 'SHA256:3'), bothy.terminal_host_confirm(:'g_host', 'SHA256:4');
SELECT bothy.terminal_host_confirm(:'g_host', 'SHA256:5');
SELECT state, public_key IS NULL AS no_key, pairing_code_hash IS NULL AS no_code, wrong_attempts
  FROM bothy.terminal_hosts WHERE host = :'g_host';
SELECT bothy.terminal_host_confirm(:'g_host', bothy.terminal_fingerprint(decode(:'key2', 'hex')));
SELECT bothy.terminal_host_pair(:'g_host', :'g_pairing_code', decode(:'key2', 'hex'));
SELECT (SELECT value FROM staged WHERE label = 'terminal.host_close') - :close0 AS host_close;
-- re-pair: a new code, which pairs
SELECT bothy.terminal_host_repair(:'g_host') AS new_code \gset
SELECT :'new_code' ~ '^[0-9a-hjkmnp-tv-z]{16}$' AS code_form, :'new_code' <> :'g_pairing_code' AS another;
SELECT bothy.terminal_host_pair(:'g_host', :'g_pairing_code', decode(:'key2', 'hex'));
SELECT bothy.terminal_host_pair(:'g_host', :'new_code', decode(:'key2', 'hex'));
SELECT bothy.terminal_host_repair(:'nohost');
SELECT bothy.terminal_host_repair(NULL);
-- a re-pair of a confirming host closes its connections; a second, while pairing, only replaces the code
SELECT value AS close1 FROM staged WHERE label = 'terminal.host_close' \gset
SELECT bothy.terminal_host_repair(:'g_host') IS NOT NULL AS coded;
SELECT bothy.terminal_host_repair(:'g_host') IS NOT NULL AS coded_again;
SELECT (SELECT value FROM staged WHERE label = 'terminal.host_close') - :close1 AS host_close;
-- the duplicate verdict: an active host back to pairing; a pairing host stays; a gateway's call stages nothing here
SELECT bothy.terminal_host_duplicate(:'host');
SELECT state, public_key IS NULL AS no_key, pairing_code_hash IS NULL AS no_code FROM bothy.terminal_hosts WHERE host = :'host';
SELECT bothy.terminal_host_duplicate(:'host');
-- a late verdict on a host the owner re-paired meanwhile leaves its new code
SELECT bothy.terminal_host_duplicate(:'g_host');
SELECT state, pairing_code_hash IS NOT NULL AS code_kept FROM bothy.terminal_hosts WHERE host = :'g_host';
SELECT bothy.terminal_host_duplicate(:'nohost');
SELECT bothy.terminal_host_duplicate(NULL);
SELECT (SELECT value FROM staged WHERE label = 'terminal.host_close') - :close1 AS host_close;
-- disable: once; a disabled host confirms nothing and outlives a verdict; re-pairing brings it back
SELECT bothy.terminal_host_disable(:'host');
SELECT bothy.terminal_host_disable(:'host');
SELECT bothy.terminal_host_disable(:'nohost');
SELECT bothy.terminal_host_disable(NULL);
SELECT bothy.terminal_host_confirm(:'host', bothy.terminal_fingerprint(decode(:'key', 'hex')));
SELECT bothy.terminal_host_duplicate(:'host');
SELECT state FROM bothy.terminal_host_states(ARRAY[:'host'::uuid]);
SELECT (SELECT value FROM staged WHERE label = 'terminal.host_close') - :close1 AS host_close;
SELECT bothy.terminal_host_repair(:'host') IS NOT NULL AS coded;
SELECT state FROM bothy.terminal_host_states(ARRAY[:'host'::uuid]);
-- host states: many in one call, unknown ones left out
SELECT count(*) FROM bothy.terminal_host_states(ARRAY[:'host', :'g_host', :'nohost']::uuid[]);
SELECT count(*) FROM bothy.terminal_host_states('{}');
SELECT * FROM bothy.terminal_host_states(NULL);
-- a person's hosts, by name; nobody else's
SELECT name, state FROM bothy.terminal_hosts_of(:'owner') WHERE name <> repeat('é', 100);
SELECT count(*) FROM bothy.terminal_hosts_of(:'other');
SELECT count(*) FROM bothy.terminal_hosts_of('b0000000-0000-4000-8000-00000000ffff');
SELECT * FROM bothy.terminal_hosts_of(NULL);
-- the log: the host transitions, in commit order
SELECT transition, state, session IS NULL AS host_row FROM bothy.terminal_log_after(0, 1000);
