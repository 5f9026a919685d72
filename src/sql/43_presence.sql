-- Presence (D-M7-17-6).  See docs/sql-api.md, "The presence flush", for why
-- a flush costs what changed rather than what is connected.

-- Every node's rows older than the TTL: the markers of nodes that have not
-- flushed within it, their rows, and their registration.  Markers are taken
-- in one order and skipped when another flush is already expiring them, so
-- two nodes expiring at once neither deadlock nor wait for each other.
CREATE FUNCTION bothy._presence_expire() RETURNS integer
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    ttl interval := bothy._presence_ttl();
    expired uuid[];
    deleted integer;
BEGIN
    WITH stale AS (
        SELECT m.node FROM bothy.gateway_presence_nodes m
         WHERE m.flushed_at < now() - ttl
         ORDER BY m.node
         FOR UPDATE SKIP LOCKED
    ), gone AS (
        DELETE FROM bothy.gateway_presence_nodes m USING stale
         WHERE m.node = stale.node
        RETURNING m.node
    )
    SELECT coalesce(array_agg(gone.node), '{}') INTO expired FROM gone;

    DELETE FROM bothy.gateway_presence p WHERE p.node = ANY (expired);
    GET DIAGNOSTICS deleted = ROW_COUNT;
    PERFORM bothy._metrics_add('presence_rows_expired', NULL, deleted);
    DELETE FROM bothy.gateway_nodes n
     WHERE n.node = ANY (expired)
        OR (n.started_at < now() - ttl
            AND NOT EXISTS (SELECT FROM bothy.gateway_presence_nodes m WHERE m.node = n.node));
    RETURN deleted;
END
$$;

-- One flush of a node, in one transaction.  A delta (full = false) upserts
-- the rows that changed and deletes the sessions that ended; a full flush
-- replaces all of the node's rows.  Both mark the node's rows fresh.  A
-- delta for a node whose rows are gone (never flushed, expired, or truncated
-- by a crash) applies nothing and returns false: the node must send a full
-- flush, and that brings its rows back.
CREATE FUNCTION bothy.presence_flush(node uuid, full boolean,
        sessions uuid[], persons uuid[], devices uuid[], focus uuid[], idle boolean[],
        ended uuid[])
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    n integer;
BEGIN
    PERFORM bothy._need_v7(presence_flush.node, 'node'),
            bothy._need(presence_flush.full, 'full'),
            bothy._need(presence_flush.sessions, 'sessions'),
            bothy._need(presence_flush.persons, 'persons'),
            bothy._need(presence_flush.devices, 'devices'),
            bothy._need(presence_flush.focus, 'focus'),
            bothy._need(presence_flush.idle, 'idle'),
            bothy._need(presence_flush.ended, 'ended');
    n := coalesce(cardinality(presence_flush.sessions), 0);
    IF cardinality(presence_flush.persons) <> n OR cardinality(presence_flush.devices) <> n
       OR cardinality(presence_flush.focus) <> n OR cardinality(presence_flush.idle) <> n THEN
        RAISE EXCEPTION 'sessions, persons, devices, focus and idle must have the same length'
            USING ERRCODE = 'array_subscript_error';
    END IF;
    IF array_position(presence_flush.sessions, NULL) IS NOT NULL
       OR array_position(presence_flush.persons, NULL) IS NOT NULL
       OR array_position(presence_flush.devices, NULL) IS NOT NULL
       OR array_position(presence_flush.idle, NULL) IS NOT NULL
       OR array_position(presence_flush.ended, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'only focus may hold nulls' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF (SELECT count(DISTINCT s) FROM unnest(presence_flush.sessions) s) <> n THEN
        RAISE EXCEPTION 'sessions must not repeat' USING ERRCODE = 'unique_violation';
    END IF;

    PERFORM bothy._presence_expire();

    IF presence_flush.full THEN
        INSERT INTO bothy.gateway_nodes (node) VALUES (presence_flush.node) ON CONFLICT DO NOTHING;
        INSERT INTO bothy.gateway_presence_nodes AS m (node, flushed_at)
        VALUES (presence_flush.node, now())
        ON CONFLICT ON CONSTRAINT gateway_presence_nodes_pkey DO UPDATE SET flushed_at = excluded.flushed_at;
        DELETE FROM bothy.gateway_presence p
         WHERE p.node = presence_flush.node
           AND p.gateway_session NOT IN (SELECT unnest(presence_flush.sessions));
    ELSE
        PERFORM FROM bothy.gateway_presence_nodes m WHERE m.node = presence_flush.node FOR UPDATE;
        IF NOT FOUND THEN
            RETURN false;
        END IF;
        UPDATE bothy.gateway_presence_nodes m SET flushed_at = now() WHERE m.node = presence_flush.node;
        -- ended before upserts: a session that ended and came back within
        -- one interval stays present
        DELETE FROM bothy.gateway_presence p
         WHERE p.node = presence_flush.node AND p.gateway_session = ANY (presence_flush.ended);
    END IF;

    INSERT INTO bothy.gateway_presence AS p
           (gateway_session, node, person, device, focus, idle, updated_at)
    SELECT u.s, presence_flush.node, u.p, u.d, u.f, u.i, now()
      FROM unnest(presence_flush.sessions, presence_flush.persons, presence_flush.devices,
                  presence_flush.focus, presence_flush.idle) AS u(s, p, d, f, i)
    ON CONFLICT ON CONSTRAINT gateway_presence_pkey DO UPDATE
        SET person = excluded.person, device = excluded.device, focus = excluded.focus,
            idle = excluded.idle, updated_at = excluded.updated_at
        WHERE (p.person, p.device, p.focus, p.idle)
              IS DISTINCT FROM (excluded.person, excluded.device, excluded.focus, excluded.idle);
    RETURN true;
END
$$;
COMMENT ON FUNCTION bothy.presence_flush(uuid, boolean, uuid[], uuid[], uuid[], uuid[], boolean[], uuid[]) IS
    'write a node''s presence (delta or full) in one transaction; false asks for a full flush';

-- Per person, the newest fresh row of each device: rows of nodes that have
-- not flushed within the TTL are never returned, whether or not expiry has
-- deleted them yet.
CREATE FUNCTION bothy.presence_read(persons uuid[])
    RETURNS TABLE (person uuid, device uuid, node uuid, gateway_session uuid,
                   focus uuid, idle boolean, updated_at timestamptz)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    ttl interval := bothy._presence_ttl();
BEGIN
    PERFORM bothy._need(presence_read.persons, 'persons');
    RETURN QUERY
        SELECT DISTINCT ON (p.person, p.device)
               p.person, p.device, p.node, p.gateway_session, p.focus, p.idle, p.updated_at
          FROM bothy.gateway_presence p
          JOIN bothy.gateway_presence_nodes m ON m.node = p.node
         WHERE p.person = ANY (presence_read.persons)
           AND m.flushed_at >= now() - ttl
         ORDER BY p.person, p.device, p.updated_at DESC, p.gateway_session DESC;
END
$$;
COMMENT ON FUNCTION bothy.presence_read(uuid[]) IS
    'per person the newest fresh presence row of each device';
