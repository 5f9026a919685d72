-- Device replacement (D-M7-17-3).

-- Every identify or resume of a person's device binds it anew with a fresh
-- UUIDv7 bind ID.  The table keeps the newest binding: of two crossing binds
-- the larger bind ID wins whichever commits first, and UUIDv7 gives two
-- binds even in one millisecond an order.  In multi mode the binding is
-- also signalled, so the node holding an older binding closes it with 4017.
--
-- A node binds the identifies and resumes that arrive together in one call
-- (device_bind_batch): one transaction and one commit for all of them,
-- each row bound as device_bind binds one.  The rows are bound in the order
-- of their devices, so two batches that share devices lock those rows in
-- one order and never wait on each other in a cycle; the rows of one device
-- in the order given, so the last of them gets the newest bind ID.
-- (This file is part of the 0.2.0 -> 0.3.0 upgrade: CREATE OR REPLACE.)
CREATE OR REPLACE FUNCTION bothy.device_bind_batch(node uuid, gateway_sessions uuid[],
        persons uuid[], devices uuid[])
    RETURNS TABLE (ord integer, bind_id uuid)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    multi boolean := bothy._multi();
    n integer;
    r record;
    bind uuid;
BEGIN
    PERFORM bothy._need_v7(device_bind_batch.node, 'node'),
            bothy._need(device_bind_batch.gateway_sessions, 'gateway_sessions'),
            bothy._need(device_bind_batch.persons, 'persons'),
            bothy._need(device_bind_batch.devices, 'devices');
    n := coalesce(cardinality(device_bind_batch.gateway_sessions), 0);
    IF coalesce(cardinality(device_bind_batch.persons), 0) <> n
       OR coalesce(cardinality(device_bind_batch.devices), 0) <> n THEN
        RAISE EXCEPTION 'gateway_sessions, persons and devices must have the same length'
            USING ERRCODE = 'array_subscript_error';
    END IF;
    IF array_position(device_bind_batch.gateway_sessions, NULL) IS NOT NULL
       OR array_position(device_bind_batch.persons, NULL) IS NOT NULL
       OR array_position(device_bind_batch.devices, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'gateway_sessions, persons and devices must not hold nulls'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    FOR r IN
        SELECT u.s, u.p, u.d, u.o::integer AS o
          FROM unnest(device_bind_batch.gateway_sessions, device_bind_batch.persons,
                      device_bind_batch.devices) WITH ORDINALITY AS u(s, p, d, o)
         ORDER BY u.d, u.o
    LOOP
        bind := bothy.uuidv7();
        INSERT INTO bothy.device_bindings AS b (device, person, gateway_session, bind_id, node)
        VALUES (r.d, r.p, r.s, bind, device_bind_batch.node)
        ON CONFLICT ON CONSTRAINT device_bindings_pkey DO UPDATE
            SET person = excluded.person, gateway_session = excluded.gateway_session,
                bind_id = excluded.bind_id, node = excluded.node, bound_at = now()
            WHERE b.bind_id < excluded.bind_id;
        IF multi THEN
            PERFORM bothy.publish('gateway.device', jsonb_build_object(
                'node', device_bind_batch.node, 'device', r.d,
                'gateway_session', r.s, 'bind_id', bind));
        END IF;
        ord := r.o;
        bind_id := bind;
        RETURN NEXT;
    END LOOP;
END
$$;
COMMENT ON FUNCTION bothy.device_bind_batch(uuid, uuid[], uuid[], uuid[]) IS
    'bind many devices in one transaction, each as device_bind does; a row per element: its position and its bind ID';

CREATE OR REPLACE FUNCTION bothy.device_bind(node uuid, gateway_session uuid, person uuid, device uuid)
    RETURNS uuid
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need_v7(device_bind.node, 'node'),
            bothy._need(device_bind.gateway_session, 'gateway_session'),
            bothy._need(device_bind.person, 'person'),
            bothy._need(device_bind.device, 'device');
    RETURN (SELECT b.bind_id
              FROM bothy.device_bind_batch(device_bind.node, ARRAY[device_bind.gateway_session],
                                           ARRAY[device_bind.person], ARRAY[device_bind.device]) b);
END
$$;
COMMENT ON FUNCTION bothy.device_bind(uuid, uuid, uuid, uuid) IS
    'bind a device to a gateway session with a fresh bind ID; the newest binding is kept';

CREATE OR REPLACE FUNCTION bothy.device_binding(device uuid,
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
