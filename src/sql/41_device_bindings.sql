-- Device replacement (D-M7-17-3).

-- Every identify or resume of a person's device binds it anew with a fresh
-- UUIDv7 bind ID.  The table keeps the newest binding: of two crossing binds
-- the larger bind ID wins whichever commits first, and UUIDv7 gives two
-- binds even in one millisecond an order.  In multi mode the binding is
-- also signalled, so the node holding an older binding closes it with 4017.
CREATE FUNCTION bothy.device_bind(node uuid, gateway_session uuid, person uuid, device uuid)
    RETURNS uuid
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    bind uuid;
BEGIN
    PERFORM bothy._need_v7(device_bind.node, 'node'),
            bothy._need(device_bind.gateway_session, 'gateway_session'),
            bothy._need(device_bind.person, 'person'),
            bothy._need(device_bind.device, 'device');
    bind := bothy.uuidv7();
    INSERT INTO bothy.device_bindings AS b (device, person, gateway_session, bind_id, node)
    VALUES (device_bind.device, device_bind.person, device_bind.gateway_session, bind, device_bind.node)
    ON CONFLICT ON CONSTRAINT device_bindings_pkey DO UPDATE
        SET person = excluded.person, gateway_session = excluded.gateway_session,
            bind_id = excluded.bind_id, node = excluded.node, bound_at = now()
        WHERE b.bind_id < excluded.bind_id;
    IF bothy._multi() THEN
        PERFORM bothy.publish('gateway.device', jsonb_build_object(
            'node', device_bind.node, 'device', device_bind.device,
            'gateway_session', device_bind.gateway_session, 'bind_id', bind));
    END IF;
    RETURN bind;
END
$$;
COMMENT ON FUNCTION bothy.device_bind(uuid, uuid, uuid, uuid) IS
    'bind a device to a gateway session with a fresh bind ID; the newest binding is kept';

CREATE FUNCTION bothy.device_binding(device uuid,
        OUT gateway_session uuid, OUT bind_id uuid, OUT node uuid, OUT bound_at timestamptz)
    RETURNS record
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT b.gateway_session, b.bind_id, b.node, b.bound_at
      FROM bothy.device_bindings b WHERE b.device = device_binding.device
$$;
COMMENT ON FUNCTION bothy.device_binding(uuid) IS
    'the newest binding of a device (all NULL when it was never bound)';
