-- Gateway node lifecycle: a node registers at start and cleans up at stop.

CREATE FUNCTION bothy.node_start(node uuid) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need_v7(node_start.node, 'node');
    -- a node that starts on an inconsistent configuration is refused here
    PERFORM bothy._presence_ttl();
    INSERT INTO bothy.gateway_nodes (node) VALUES (node_start.node)
        ON CONFLICT DO NOTHING;
END
$$;
COMMENT ON FUNCTION bothy.node_start(uuid) IS
    'register a gateway node (a fresh UUIDv7 per start)';

-- At stop the node's presence rows go at once instead of aging out, and its
-- connections' consumer holds are released so a new consumer need not wait
-- for the lease.  Returns the number of presence rows deleted.
CREATE FUNCTION bothy.node_stop(node uuid) RETURNS integer
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    deleted integer;
BEGIN
    PERFORM bothy._need_v7(node_stop.node, 'node');
    DELETE FROM bothy.gateway_presence_nodes m WHERE m.node = node_stop.node;
    DELETE FROM bothy.gateway_presence p WHERE p.node = node_stop.node;
    GET DIAGNOSTICS deleted = ROW_COUNT;
    UPDATE bothy.consumer_holds h
       SET released_from = h.holder_session,
           holder_session = NULL, holder_kind = NULL, node = NULL, lease_until = NULL
     WHERE h.node = node_stop.node AND h.holder_kind = 'connection';
    DELETE FROM bothy.gateway_nodes n WHERE n.node = node_stop.node;
    RETURN deleted;
END
$$;
COMMENT ON FUNCTION bothy.node_stop(uuid) IS
    'a gateway node stops: delete its presence rows and release its connections'' consumer holds';
