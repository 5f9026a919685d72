-- Functions written in C (src/extension).

CREATE FUNCTION bothy.uuidv7() RETURNS uuid
    LANGUAGE c VOLATILE STRICT SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_uuidv7';
COMMENT ON FUNCTION bothy.uuidv7() IS
    'an RFC 9562 UUIDv7, strictly increasing within the backend';

CREATE FUNCTION bothy.signal_check(payload text) RETURNS text
    LANGUAGE c IMMUTABLE STRICT SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_signal_check';
COMMENT ON FUNCTION bothy.signal_check(text) IS
    'the kind of a valid signal payload, NULL for a foreign kind, an error naming the reason otherwise';

CREATE FUNCTION bothy.publish(kind text, members jsonb) RETURNS void
    LANGUAGE c VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_publish';
COMMENT ON FUNCTION bothy.publish(text, jsonb) IS
    'validate a signal and stage it on ephemeral for the commit of the caller''s transaction';

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
