-- The cluster settings: defaults, units and ranges, and how they are set.
\set VERBOSITY terse
-- each file starts from a fresh extension (and proves DROP and CREATE work)
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
SELECT * FROM bothy.settings() ORDER BY name;
SELECT name, setting, unit, context, vartype, min_val, max_val, boot_val
  FROM pg_settings WHERE name LIKE 'bothy.%' ORDER BY name;
SELECT enumvals FROM pg_settings WHERE name = 'bothy.cluster_mode';
-- every setting has both descriptions
SELECT name FROM pg_settings
 WHERE name LIKE 'bothy.%' AND (short_desc IS NULL OR extra_desc IS NULL);
-- cluster settings are one configuration: not settable per session
SET bothy.presence_ttl = '20s';
SET bothy.cluster_mode = 'multi';
SET bothy.database = 'other';
-- out of range or invalid values are refused when set
ALTER SYSTEM SET bothy.presence_ttl = '999ms';
ALTER SYSTEM SET bothy.presence_ttl = '11min';
ALTER SYSTEM SET bothy.presence_flush_interval = '50ms';
ALTER SYSTEM SET bothy.typing_ttl = '0';
ALTER SYSTEM SET bothy.agent_presence_timeout = '2h';
ALTER SYSTEM SET bothy.agent_heartbeat_persist_interval = '11min';
ALTER SYSTEM SET bothy.listen_reconnect_backoff_cap = '99ms';
ALTER SYSTEM SET bothy.signing_key_cache_ttl = '2h';
ALTER SYSTEM SET bothy.consumer_lease = '2s';
ALTER SYSTEM SET bothy.terminal_open_timeout = '999ms';
ALTER SYSTEM SET bothy.terminal_open_timeout = '11min';
ALTER SYSTEM SET bothy.terminal_host_heartbeat_interval = '999ms';
ALTER SYSTEM SET bothy.terminal_host_heartbeat_interval = '11min';
ALTER SYSTEM SET bothy.terminal_host_heartbeat_miss_limit = 0;
ALTER SYSTEM SET bothy.terminal_host_heartbeat_miss_limit = 101;
ALTER SYSTEM SET bothy.terminal_host_duplicate_probe_timeout = '99ms';
ALTER SYSTEM SET bothy.terminal_host_duplicate_probe_timeout = '61s';
ALTER SYSTEM SET bothy.terminal_idle_timeout = '59s';
ALTER SYSTEM SET bothy.terminal_idle_timeout = '25h';
ALTER SYSTEM SET bothy.terminal_idle_grace = '999ms';
ALTER SYSTEM SET bothy.terminal_idle_grace = '11min';
ALTER SYSTEM SET bothy.terminal_fingerprint_max_attempts = 0;
ALTER SYSTEM SET bothy.terminal_fingerprint_max_attempts = 101;
ALTER SYSTEM SET bothy.terminal_log_poll_interval = '99ms';
ALTER SYSTEM SET bothy.terminal_log_poll_interval = '61s';
ALTER SYSTEM SET bothy.terminal_log_retention = '59s';
ALTER SYSTEM SET bothy.terminal_log_retention = '8d';
ALTER SYSTEM SET bothy.cluster_mode = 'both';
ALTER SYSTEM SET bothy.database = '';
ALTER SYSTEM SET bothy.database = 'a_database_name_that_is_far_longer_than_sixty_three_bytes_allowed';
-- the prefix is reserved: a misspelt setting is an error, not a placeholder
SET bothy.presence_tll = '10s';
-- the TTL and the grant's lifetime the SQL functions use
SELECT bothy._presence_ttl();
SELECT bothy._terminal_open_timeout();
