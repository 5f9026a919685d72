-- pgTAP: the schema bothy: its tables, which are UNLOGGED, and its functions:
-- SECURITY DEFINER with a pinned search_path, but for the four C functions
-- that compute on their arguments and run as their caller.
BEGIN;
SELECT plan(11);

SELECT has_schema('bothy');

SELECT tables_are('bothy', ARRAY[
    'cluster_identity', 'gateway_nodes', 'gateway_presence', 'gateway_presence_nodes',
    'device_bindings', 'consumer_holds', 'agent_presence',
    'places', 'threads', 'memberships', 'agents', 'runs', 'notifications', 'agent_events',
    'hints_pending', 'push_outbox',
    'terminal_hosts', 'terminal_sessions', 'terminal_log', 'terminal_log_pending', 'terminal_log_order',
    'terminal_host_conns']);

SELECT is(
    ARRAY(SELECT c.relname::text FROM pg_class c
           WHERE c.relnamespace = 'bothy'::regnamespace AND c.relkind = 'r' AND c.relpersistence = 'u'
           ORDER BY 1),
    ARRAY['gateway_presence', 'gateway_presence_nodes', 'terminal_host_conns', 'terminal_log_pending'],
    'presence, its node markers, the hosts'' announced connections and the terminal log''s uncommitted rows are UNLOGGED, and nothing else is');

SELECT functions_are('bothy', ARRAY[
    'uuidv7', 'signal_check', 'publish', 'channel_key', 'settings', '_presence_ttl', '_place_members_among',
    '_place_members_on', '_place_nodes', 'thread_audience_on', 'thread_nodes',
    '_cluster_node', '_multi', '_need', '_need_v7', '_need_code', '_need_ack_in_range', '_need_agent',
    'node_start', 'node_stop', 'device_bind', 'device_bind_batch', 'device_binding',
    'consumer_take', 'consumer_save', 'consumer_resume', 'consumer_holder', 'run_start', 'agent_events_after',
    '_presence_expire', 'presence_flush', 'presence_read',
    'agent_heartbeat_persist', 'agent_status',
    'thread_place', 'thread_audience', 'run_document', 'agent_known',
    'place_put', 'thread_put', 'membership_added', 'membership_removed', 'agent_put',
    'run_changed', 'notification_created', 'agent_event_appended', 'push_claim',
    'metrics', '_metrics_add', '_maintenance_wake',
    '_agents_expire', '_holds_expire', '_hint_decide', '_hints_decide',
    '_terminal_open_timeout', '_terminal_heard', '_terminal_log_append', '_terminal_log_number',
    '_terminal_stage', '_terminal_session_end', '_terminal_host_sessions_end', '_terminal_pairing_code',
    '_terminal_code_hash', '_terminal_host_reset', '_terminal_host_lock', '_terminal_session_move',
    '_terminal_sessions_expire', '_terminal_log_prune',
    'terminal_fingerprint', 'terminal_host_register', 'terminal_host_confirm', 'terminal_host_disable',
    'terminal_host_repair', 'terminal_host_pair', 'terminal_host_duplicate', 'terminal_host_states',
    '_terminal_presence_window', 'terminal_host_announce', 'terminal_host_conn_known',
    'terminal_hosts_of', 'terminal_session_open', 'terminal_session_attach', 'terminal_session_recheck',
    'terminal_grant_use', 'terminal_relay_expectation', 'terminal_host_sessions', 'terminal_session_started',
    'terminal_session_detach', 'terminal_session_activate', 'terminal_session_open_timeout',
    'terminal_session_end', 'terminal_session_close', 'terminal_log_after', 'terminal_log_head']);

SELECT is(
    ARRAY(SELECT p.oid::regprocedure::text FROM pg_proc p
           WHERE p.pronamespace = 'bothy'::regnamespace AND NOT p.prosecdef ORDER BY 1),
    ARRAY['bothy.channel_key()', 'bothy.publish(text)', 'bothy.publish(text,jsonb)', 'bothy.signal_check(text)', 'bothy.uuidv7()'],
    'every function is SECURITY DEFINER but uuidv7, signal_check, publish and channel_key');

SELECT is(
    ARRAY(SELECT p.oid::regprocedure::text FROM pg_proc p
           WHERE p.pronamespace = 'bothy'::regnamespace AND NOT p.prosecdef
             AND (p.prolang <> (SELECT oid FROM pg_language WHERE lanname = 'c') OR p.proconfig IS NOT NULL) ORDER BY 1),
    ARRAY[]::text[],
    'the functions that run as their caller are C functions with no SET clause');

SELECT is(
    ARRAY(SELECT p.oid::regprocedure::text FROM pg_proc p
           WHERE p.pronamespace = 'bothy'::regnamespace AND p.prosecdef
             AND (p.proconfig IS NULL OR NOT 'search_path=pg_catalog, pg_temp' = ANY (p.proconfig))
           ORDER BY 1),
    ARRAY[]::text[],
    'every SECURITY DEFINER function pins search_path to pg_catalog, pg_temp');

SELECT is(
    (SELECT count(*)::int FROM bothy.cluster_identity WHERE substr(node::text, 15, 1) = '7'),
    1, 'the cluster has one node ID of its own, a UUIDv7');

SELECT is(
    (SELECT extversion FROM pg_extension WHERE extname = 'bothy'),
    (SELECT default_version FROM pg_available_extensions WHERE name = 'bothy'),
    'the installed version is the default version');

SELECT is(
    ARRAY(SELECT c.relname::text FROM pg_extension e, unnest(e.extconfig) AS t(oid)
           JOIN pg_class c ON c.oid = t.oid WHERE e.extname = 'bothy' ORDER BY 1),
    ARRAY['agent_events', 'agent_presence', 'agents', 'consumer_holds',
          'device_bindings', 'hints_pending', 'memberships', 'notifications', 'places',
          'push_outbox', 'runs', 'terminal_hosts', 'terminal_log', 'terminal_log_seq',
          'terminal_sessions', 'threads'],
    'pg_dump keeps the logged state (not presence, node registrations or the cluster node ID)');

SELECT is(
    (SELECT string_agg(t.tgname || ' ' || t.tgdeferrable::text || ' ' || t.tginitdeferred::text, ', ')
       FROM pg_trigger t WHERE t.tgrelid = 'bothy.terminal_log_pending'::regclass),
    'terminal_log_number true true',
    'terminal log rows are numbered by a trigger deferred to the commit');

SELECT * FROM finish();
ROLLBACK;
