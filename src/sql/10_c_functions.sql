-- Functions written in C (src/extension).
--
-- uuidv7, signal_check and the two forms of publish compute on their
-- arguments: they reach no table and look up no name, and nothing they read
-- or write depends on the role (uuidv7's debug setting is the session's,
-- publish writes the shared queue and the counters).  They run as their
-- caller (SECURITY INVOKER, no SET clause): running as the owner would give
-- them nothing, and a SET clause would cost every producer's transaction
-- two changes of search_path and a rebuilt search path in its next
-- statement, about 7.5 us (docs/performance.md).  Every other function
-- reaches a table and runs SECURITY DEFINER with the pinned search_path
-- (test/pgtap/schema.sql holds both lists).

CREATE FUNCTION bothy.uuidv7() RETURNS uuid
    LANGUAGE c VOLATILE STRICT SECURITY INVOKER
    AS 'MODULE_PATHNAME', 'bothy_uuidv7';
COMMENT ON FUNCTION bothy.uuidv7() IS
    'an RFC 9562 UUIDv7, strictly increasing within the backend';

CREATE FUNCTION bothy.signal_check(payload text) RETURNS text
    LANGUAGE c IMMUTABLE STRICT SECURITY INVOKER
    AS 'MODULE_PATHNAME', 'bothy_signal_check';
COMMENT ON FUNCTION bothy.signal_check(text) IS
    'the kind of a valid signal payload, NULL for a foreign kind, an error naming the reason otherwise';

CREATE FUNCTION bothy.publish(kind text, members jsonb) RETURNS void
    LANGUAGE c VOLATILE SECURITY INVOKER
    AS 'MODULE_PATHNAME', 'bothy_publish';
COMMENT ON FUNCTION bothy.publish(text, jsonb) IS
    'validate a signal and stage it on ephemeral for the commit of the caller''s transaction';

CREATE FUNCTION bothy.publish(signal text) RETURNS void
    LANGUAGE c VOLATILE SECURITY INVOKER
    AS 'MODULE_PATHNAME', 'bothy_publish_signal';
COMMENT ON FUNCTION bothy.publish(text) IS
    'validate a whole signal, kind among its members, and stage it on ephemeral for the commit of the caller''s transaction';

CREATE FUNCTION bothy.settings(OUT name text, OUT setting text, OUT unit text) RETURNS SETOF record
    LANGUAGE c STABLE STRICT SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_settings';
COMMENT ON FUNCTION bothy.settings() IS
    'the cluster settings a gateway runs on, durations in milliseconds; an error on an inconsistent configuration';

CREATE FUNCTION bothy._presence_ttl() RETURNS interval
    LANGUAGE c STABLE STRICT SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_presence_ttl';
COMMENT ON FUNCTION bothy._presence_ttl() IS
    'internal: bothy.presence_ttl as an interval, an error on an inconsistent configuration';

CREATE FUNCTION bothy.metrics(OUT metric text, OUT label text, OUT value bigint) RETURNS SETOF record
    LANGUAGE c VOLATILE STRICT SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_metrics';
COMMENT ON FUNCTION bothy.metrics() IS
    'the counters of signals (per kind) and of the workers'' work, since the server started';

CREATE FUNCTION bothy._metrics_add(metric text, label text, n bigint) RETURNS void
    LANGUAGE c VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_metrics_add';
COMMENT ON FUNCTION bothy._metrics_add(text, text, bigint) IS
    'internal: count work done by an extension function in a counter of bothy.metrics()';

CREATE FUNCTION bothy._maintenance_wake() RETURNS void
    LANGUAGE c VOLATILE STRICT SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_maintenance_wake';
COMMENT ON FUNCTION bothy._maintenance_wake() IS
    'internal: wake the maintenance worker when the caller''s transaction commits';

-- The counters as a view, as pg_stat_* views sit over their functions.
CREATE VIEW bothy.stat_metrics AS
    SELECT m.metric, m.label, m.value FROM bothy.metrics() m;
COMMENT ON VIEW bothy.stat_metrics IS
    'the counters of bothy.metrics(): signals per kind and the workers'' work';
