-- Internal helpers of the SQL functions.  No role may execute them.

CREATE FUNCTION bothy._cluster_node() RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$ SELECT node FROM bothy.cluster_identity $$;

CREATE FUNCTION bothy._multi() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$ SELECT pg_catalog.current_setting('bothy.cluster_mode') = 'multi' $$;

-- Arguments are checked, never silently ignored: a STRICT function would
-- answer NULL to a NULL argument and the caller would not learn why.
CREATE FUNCTION bothy._need(value anyelement, argument text) RETURNS anyelement
    LANGUAGE plpgsql IMMUTABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    IF value IS NULL THEN
        RAISE EXCEPTION '% must not be null', argument USING ERRCODE = 'null_value_not_allowed';
    END IF;
    RETURN value;
END
$$;

-- Node IDs and bind IDs are UUIDv7: a fresh one per start or binding, and
-- their order is what decides between nodes.
CREATE FUNCTION bothy._need_v7(value uuid, argument text) RETURNS uuid
    LANGUAGE plpgsql IMMUTABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(value, argument);
    IF substr(value::text, 15, 1) <> '7' OR substr(value::text, 20, 1) NOT IN ('8', '9', 'a', 'b') THEN
        RAISE EXCEPTION '% must be a UUIDv7', argument USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN value;
END
$$;

-- A code from a closed set, or a clear error naming the set.
CREATE FUNCTION bothy._need_code(value text, argument text, codes text[]) RETURNS text
    LANGUAGE plpgsql IMMUTABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(value, argument);
    IF NOT value = ANY (codes) THEN
        RAISE EXCEPTION '% must be one of %', argument, array_to_string(codes, ', ')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN value;
END
$$;
