-- pgTAP: least privilege.  Two NOLOGIN group roles; PUBLIC executes nothing;
-- each role executes exactly its own functions and has no privilege on any
-- table; a gateway login cannot read a table yet works through the API.
BEGIN;
SELECT plan(46);

SELECT is((SELECT rolcanlogin FROM pg_roles WHERE rolname = 'bothy_gateway'), false, 'bothy_gateway is a group role');
SELECT is((SELECT rolcanlogin FROM pg_roles WHERE rolname = 'bothy_app'), false, 'bothy_app is a group role');

SELECT is(
    ARRAY(SELECT p.oid::regprocedure::text FROM pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
           WHERE p.pronamespace = 'bothy'::regnamespace AND a.grantee = 0 ORDER BY 1),
    ARRAY[]::text[], 'PUBLIC may execute no function of bothy');
SELECT ok(NOT has_schema_privilege('public', 'bothy', 'USAGE'), 'PUBLIC has no USAGE on the schema');

SELECT is(
    ARRAY(SELECT p.oid::regprocedure::text FROM pg_proc p
           WHERE p.pronamespace = 'bothy'::regnamespace
             AND has_function_privilege('bothy_gateway', p.oid, 'EXECUTE') ORDER BY 1),
    ARRAY[
        'bothy.agent_events_after(uuid,uuid,bigint,integer)',
        'bothy.agent_heartbeat_persist(uuid,uuid,timestamp with time zone,text,text,uuid)',
        'bothy.agent_known(uuid)',
        'bothy.agent_status(uuid[])',
        'bothy.channel_key()',
        'bothy.consumer_holder(uuid)',
        'bothy.consumer_resume(uuid,uuid,uuid,bigint)',
        'bothy.consumer_save(uuid,uuid,bigint)',
        'bothy.consumer_take(uuid,uuid,uuid,text,interval,bigint)',
        'bothy.device_bind(uuid,uuid,uuid,uuid)',
        'bothy.device_bind_batch(uuid,uuid[],uuid[],uuid[])',
        'bothy.device_binding(uuid)',
        'bothy.node_start(uuid)',
        'bothy.node_stop(uuid)',
        'bothy.presence_flush(uuid,boolean,uuid[],uuid[],uuid[],uuid[],boolean[],uuid[])',
        'bothy.presence_read(uuid[])',
        'bothy.publish(text)',
        'bothy.publish(text,jsonb)',
        'bothy.run_document(uuid)',
        'bothy.run_start(uuid,uuid)',
        'bothy.settings()',
        'bothy.signal_check(text)',
        'bothy.terminal_grant_use(uuid,uuid)',
        'bothy.terminal_host_announce(uuid,uuid,uuid,boolean)',
        'bothy.terminal_host_conn_known(uuid,uuid)',
        'bothy.terminal_host_duplicate(uuid)',
        'bothy.terminal_host_pair(uuid,text,bytea)',
        'bothy.terminal_host_sessions(uuid)',
        'bothy.terminal_host_states(uuid[])',
        'bothy.terminal_hosts_of(uuid)',
        'bothy.terminal_log_after(bigint,integer)',
        'bothy.terminal_log_head()',
        'bothy.terminal_relay_expectation(uuid)',
        'bothy.terminal_session_activate(uuid,uuid)',
        'bothy.terminal_session_attach(uuid,uuid,uuid)',
        'bothy.terminal_session_close(uuid,uuid)',
        'bothy.terminal_session_detach(uuid,uuid)',
        'bothy.terminal_session_end(uuid,text,text)',
        'bothy.terminal_session_open(uuid,uuid,uuid)',
        'bothy.terminal_session_open_timeout(uuid,uuid)',
        'bothy.terminal_session_recheck(uuid,uuid,boolean)',
        'bothy.terminal_session_started(uuid,uuid)',
        'bothy.thread_audience(uuid,uuid[])',
        'bothy.thread_audience_on(uuid,uuid)',
        'bothy.thread_place(uuid)',
        'bothy.uuidv7()'],
    'bothy_gateway executes exactly the gateway functions');

SELECT is(
    ARRAY(SELECT p.oid::regprocedure::text FROM pg_proc p
           WHERE p.pronamespace = 'bothy'::regnamespace
             AND has_function_privilege('bothy_app', p.oid, 'EXECUTE') ORDER BY 1),
    ARRAY[
        'bothy.agent_event_appended(uuid,text,jsonb)',
        'bothy.agent_put(uuid)',
        'bothy.membership_added(uuid,uuid)',
        'bothy.membership_removed(uuid,uuid)',
        'bothy.notification_created(uuid,text,boolean,integer,uuid,uuid,uuid)',
        'bothy.place_put(uuid)',
        'bothy.push_claim(integer)',
        'bothy.run_changed(uuid,uuid,uuid,bigint,jsonb)',
        'bothy.signal_check(text)',
        'bothy.terminal_fingerprint(bytea)',
        'bothy.terminal_host_confirm(uuid,text)',
        'bothy.terminal_host_disable(uuid)',
        'bothy.terminal_host_register(uuid,text,boolean)',
        'bothy.terminal_host_repair(uuid)',
        'bothy.thread_put(uuid,uuid)',
        'bothy.uuidv7()'],
    'bothy_app executes exactly the application functions');

SELECT is(
    ARRAY(SELECT r.rolname || ' on ' || c.relname FROM pg_class c
            CROSS JOIN (VALUES ('bothy_gateway'), ('bothy_app'), ('public')) AS r(rolname)
           WHERE c.relnamespace = 'bothy'::regnamespace AND c.relkind IN ('r', 'v', 'S')
             AND has_table_privilege(r.rolname, c.oid,
                    'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
           ORDER BY 1),
    ARRAY[]::text[], 'no role has any privilege on any table or sequence');

-- logins as an operator would create them
CREATE ROLE pgtap_gateway LOGIN IN ROLE bothy_gateway;
CREATE ROLE pgtap_app LOGIN IN ROLE bothy_app;
CREATE ROLE pgtap_nobody LOGIN;

SET ROLE pgtap_gateway;
SELECT lives_ok('LISTEN ephemeral', 'a gateway login listens on ephemeral');
SELECT lives_ok('UNLISTEN ephemeral', 'a gateway login stops listening');
SELECT throws_ok('NOTIFY ephemeral', '42501', NULL, 'a gateway login cannot notify on ephemeral (only bothy''s processes do)');
SELECT is(length(bothy.channel_key()), 32, 'a gateway login reads the channel key');
SELECT throws_ok('SELECT * FROM bothy.device_bindings', '42501', NULL, 'a gateway login cannot read a table');
SELECT throws_ok('SELECT * FROM bothy.gateway_presence', '42501', NULL, 'a gateway login cannot read presence directly');
SELECT throws_ok($$DELETE FROM bothy.consumer_holds$$, '42501', NULL, 'a gateway login cannot write a table');
SELECT throws_ok($$SELECT bothy.run_changed('90000000-0000-4000-8000-000000000001', 'f0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001', 1, '{}')$$,
    '42501', NULL, 'a gateway login cannot call an application function');
SELECT throws_ok($$SELECT bothy._presence_expire()$$, '42501', NULL, 'a gateway login cannot call an internal function');
SELECT lives_ok($$SELECT bothy.node_start('01890a5d-ac96-774b-bcce-b302099a8057')$$, 'a gateway login registers its node through the API');
SELECT isnt(
    bothy.device_bind('01890a5d-ac96-774b-bcce-b302099a8057', 'a0000000-0000-4000-8000-000000000001',
                      'b0000000-0000-4000-8000-000000000001', 'd0000000-0000-4000-8000-000000000001'),
    NULL, 'a gateway login binds a device through the API');
SELECT is((SELECT count(*)::int FROM bothy.device_bind_batch('01890a5d-ac96-774b-bcce-b302099a8057',
              '{a0000000-0000-4000-8000-000000000002,a0000000-0000-4000-8000-000000000003}',
              '{b0000000-0000-4000-8000-000000000001,b0000000-0000-4000-8000-000000000001}',
              '{d0000000-0000-4000-8000-000000000002,d0000000-0000-4000-8000-000000000003}')),
    2, 'a gateway login binds many devices at once through the API');
SELECT is((SELECT count(*)::int FROM bothy.settings()), 17, 'a gateway login reads the settings');
SELECT throws_ok('SELECT * FROM bothy.terminal_hosts', '42501', NULL, 'a gateway login cannot read the terminal hosts');
SELECT throws_ok('SELECT * FROM bothy.terminal_log', '42501', NULL, 'a gateway login cannot read the terminal log directly');
SELECT throws_ok($$SELECT bothy.terminal_host_disable('01890a5d-ac96-7000-8000-00000000dead')$$, '42501', NULL,
    'a gateway login cannot disable a host (an application call)');
SELECT throws_ok($$SELECT bothy._terminal_sessions_expire(1)$$, '42501', NULL,
    'a gateway login cannot run the worker''s terminal task');
SELECT is((SELECT outcome FROM bothy.terminal_session_open('b0000000-0000-4000-8000-000000000009',
              'd0000000-0000-4000-8000-000000000009', '01890a5d-ac96-7000-8000-00000000dead')),
    'forbidden', 'a gateway login opens terminal sessions through the API');
SELECT is(bothy.terminal_log_head(), 0::bigint, 'a gateway login reads the terminal log through the API');
RESET ROLE;

SET ROLE pgtap_app;
SELECT throws_ok('SELECT * FROM bothy.runs', '42501', NULL, 'an application login cannot read a table');
SELECT throws_ok($$SELECT bothy.node_stop('01890a5d-ac96-774b-bcce-b302099a8057')$$, '42501', NULL,
    'an application login cannot call a gateway function');
SELECT lives_ok($$SELECT bothy.place_put('c0000000-0000-4000-8000-000000000001')$$, 'an application login writes through the API');
SELECT throws_ok('SELECT * FROM bothy.terminal_sessions', '42501', NULL, 'an application login cannot read the terminal sessions');
SELECT throws_ok('LISTEN ephemeral', '42501', NULL, 'an application login cannot listen on ephemeral');
SELECT throws_ok($$SELECT pg_notify('ephemeral', '{}')$$, '42501', NULL, 'an application login cannot pg_notify on ephemeral');
SELECT throws_ok('SELECT bothy.channel_key()', '42501', NULL, 'an application login cannot read the channel key');
SELECT throws_ok($$SELECT * FROM bothy.terminal_log_after(0)$$, '42501', NULL,
    'an application login cannot read the terminal log (a gateway call)');
SELECT is((SELECT count(*)::int FROM bothy.terminal_host_register('b0000000-0000-4000-8000-000000000009', 'pgtap')), 1,
    'an application login registers a host through the API');
RESET ROLE;

CREATE ROLE pgtap_monitor LOGIN IN ROLE pg_monitor;
SET ROLE pgtap_monitor;
SELECT cmp_ok((SELECT count(*) FROM bothy.stat_metrics), '>', 0::bigint,
    'a pg_monitor login reads the counters through the view');
SELECT lives_ok('SELECT * FROM bothy.metrics()', 'a pg_monitor login reads the counters through the function');
SELECT throws_ok('SELECT bothy.uuidv7()', '42501', NULL, 'a pg_monitor login may call nothing else');
SELECT throws_ok('LISTEN ephemeral', '42501', NULL, 'a pg_monitor login cannot listen on ephemeral');
SELECT throws_ok('NOTIFY ephemeral', '42501', NULL, 'a pg_monitor login cannot notify on ephemeral');
RESET ROLE;

SET ROLE pgtap_nobody;
SELECT throws_ok('SELECT * FROM bothy.stat_metrics', '42501', NULL, 'a login with no role cannot read the counters');
SELECT throws_ok('SELECT bothy.uuidv7()', '42501', NULL, 'a login with neither role may call nothing');
SELECT throws_ok('SELECT * FROM bothy.settings()', '42501', NULL, 'a login with neither role cannot read the settings');
SELECT throws_ok('LISTEN ephemeral', '42501', NULL, 'a login with neither role cannot listen on ephemeral');
SELECT throws_ok('NOTIFY ephemeral', '42501', NULL, 'a login with neither role cannot notify on ephemeral');
SELECT lives_ok($$SELECT pg_notify('pgtap_other', 'x')$$, 'a login with neither role notifies on its own channels');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
