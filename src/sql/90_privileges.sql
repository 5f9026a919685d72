-- Least privilege: PUBLIC executes nothing, each role only its own
-- functions, and no role has any privilege on any table.

REVOKE ALL ON ALL TABLES IN SCHEMA bothy FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA bothy FROM PUBLIC;
GRANT USAGE ON SCHEMA bothy TO bothy_gateway, bothy_app;

GRANT EXECUTE ON FUNCTION
    bothy.uuidv7(),
    bothy.signal_check(text),
    bothy.publish(text, jsonb),
    bothy.publish(text),
    bothy.settings(),
    bothy.channel_key(),
    bothy.node_start(uuid),
    bothy.node_stop(uuid),
    bothy.device_bind(uuid, uuid, uuid, uuid),
    bothy.device_bind_batch(uuid, uuid[], uuid[], uuid[]),
    bothy.device_binding(uuid),
    bothy.consumer_take(uuid, uuid, uuid, text, interval, bigint),
    bothy.consumer_save(uuid, uuid, bigint),
    bothy.consumer_resume(uuid, uuid, uuid, bigint),
    bothy.consumer_holder(uuid),
    bothy.run_start(uuid, uuid),
    bothy.agent_events_after(uuid, uuid, bigint, integer),
    bothy.presence_flush(uuid, boolean, uuid[], uuid[], uuid[], uuid[], boolean[], uuid[]),
    bothy.presence_read(uuid[]),
    bothy.agent_heartbeat_persist(uuid, uuid, timestamptz, text, text, uuid),
    bothy.agent_status(uuid[]),
    bothy.thread_place(uuid),
    bothy.thread_audience(uuid, uuid[]),
    bothy.thread_audience_on(uuid, uuid),
    bothy.run_document(uuid),
    bothy.agent_known(uuid),
    bothy.terminal_host_pair(uuid, text, bytea),
    bothy.terminal_host_duplicate(uuid),
    bothy.terminal_host_announce(uuid, uuid, uuid, boolean),
    bothy.terminal_host_conn_known(uuid, uuid),
    bothy.terminal_host_states(uuid[]),
    bothy.terminal_hosts_of(uuid),
    bothy.terminal_host_sessions(uuid),
    bothy.terminal_session_open(uuid, uuid, uuid),
    bothy.terminal_session_attach(uuid, uuid, uuid),
    bothy.terminal_session_recheck(uuid, uuid, boolean),
    bothy.terminal_grant_use(uuid, uuid),
    bothy.terminal_relay_expectation(uuid),
    bothy.terminal_session_started(uuid, uuid),
    bothy.terminal_session_detach(uuid, uuid),
    bothy.terminal_session_activate(uuid, uuid),
    bothy.terminal_session_open_timeout(uuid, uuid),
    bothy.terminal_session_end(uuid, text, text),
    bothy.terminal_session_close(uuid, uuid),
    bothy.terminal_log_after(bigint, integer),
    bothy.terminal_log_head()
TO bothy_gateway;

GRANT EXECUTE ON FUNCTION
    bothy.uuidv7(),
    bothy.signal_check(text),
    bothy.place_put(uuid),
    bothy.thread_put(uuid, uuid),
    bothy.membership_added(uuid, uuid),
    bothy.membership_removed(uuid, uuid),
    bothy.agent_put(uuid),
    bothy.run_changed(uuid, uuid, uuid, bigint, jsonb),
    bothy.notification_created(uuid, text, boolean, integer, uuid, uuid, uuid),
    bothy.agent_event_appended(uuid, text, jsonb),
    bothy.push_claim(integer),
    bothy.terminal_host_register(uuid, text, boolean),
    bothy.terminal_host_confirm(uuid, text),
    bothy.terminal_host_disable(uuid),
    bothy.terminal_host_repair(uuid),
    bothy.terminal_fingerprint(bytea)
TO bothy_app;

-- Monitoring reads the counters through the server's own monitoring role,
-- so a monitoring login needs no bothy role and can call nothing else.
GRANT USAGE ON SCHEMA bothy TO pg_monitor;
GRANT EXECUTE ON FUNCTION bothy.metrics() TO pg_monitor;
GRANT SELECT ON bothy.stat_metrics TO pg_monitor;
