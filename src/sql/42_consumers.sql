-- Consumer fencing and run starts (D-M7-17-4).

-- A takeover: an agent consumer's identify (holder_kind 'connection') or a
-- new REST poll window ('poll', with its window).  The new holder continues
-- from the held acknowledgement, which this returns.  acked, when given,
-- first moves the held acknowledgement forward (a poll that reports what it
-- finished).  In multi mode the takeover is signalled so that every other
-- node fences its connections of the agent at once.
CREATE FUNCTION bothy.consumer_take(agent uuid, node uuid, gateway_session uuid,
        holder_kind text, poll_window interval DEFAULT NULL, acked bigint DEFAULT NULL)
    RETURNS bigint
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    lease timestamptz;
    held bigint;
BEGIN
    PERFORM bothy._need(consumer_take.agent, 'agent'),
            bothy._need_v7(consumer_take.node, 'node'),
            bothy._need(consumer_take.gateway_session, 'gateway_session'),
            bothy._need_code(consumer_take.holder_kind, 'holder_kind', ARRAY['connection', 'poll']);
    IF consumer_take.holder_kind = 'poll' THEN
        IF consumer_take.poll_window IS NULL
           OR consumer_take.poll_window < interval '1 second'
           OR consumer_take.poll_window > interval '1 hour' THEN
            RAISE EXCEPTION 'poll_window must be between 1 second and 1 hour'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        lease := now() + consumer_take.poll_window;
    ELSE
        IF consumer_take.poll_window IS NOT NULL THEN
            RAISE EXCEPTION 'poll_window is only for holder_kind poll'
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
        lease := now() + pg_catalog.current_setting('bothy.consumer_lease')::interval;
    END IF;
    IF consumer_take.acked IS NOT NULL THEN
        PERFORM bothy._need_ack_in_range(consumer_take.agent, consumer_take.acked);
    END IF;

    INSERT INTO bothy.consumer_holds AS h
           (agent, holder_session, holder_kind, node, acked, lease_until, taken_at)
    VALUES (consumer_take.agent, consumer_take.gateway_session, consumer_take.holder_kind,
            consumer_take.node, coalesce(consumer_take.acked, 0), lease, now())
    ON CONFLICT ON CONSTRAINT consumer_holds_pkey DO UPDATE
        SET holder_session = excluded.holder_session, holder_kind = excluded.holder_kind,
            node = excluded.node, acked = greatest(h.acked, excluded.acked),
            lease_until = excluded.lease_until, taken_at = excluded.taken_at,
            released_from = NULL
    RETURNING h.acked INTO held;

    IF bothy._multi() THEN
        PERFORM bothy.publish('gateway.consumer', jsonb_build_object(
            'node', consumer_take.node, 'agent', consumer_take.agent,
            'gateway_session', consumer_take.gateway_session));
    END IF;
    RETURN held;
END
$$;
COMMENT ON FUNCTION bothy.consumer_take(uuid, uuid, uuid, text, interval, bigint) IS
    'take over an agent''s event stream; returns the held acknowledgement to continue from';

-- An acknowledgement beyond the agent's last event would skip events that
-- are appended later, so it is refused.
CREATE FUNCTION bothy._need_ack_in_range(agent uuid, acked bigint) RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    last bigint;
BEGIN
    SELECT a.last_event INTO last FROM bothy.agents a WHERE a.agent = _need_ack_in_range.agent;
    IF _need_ack_in_range.acked < 0 OR _need_ack_in_range.acked > coalesce(last, 0) THEN
        RAISE EXCEPTION 'acked % is outside 0 to the agent''s last event %',
            _need_ack_in_range.acked, coalesce(last, 0)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$$;

-- The guarded save: moves the held acknowledgement forward and renews a
-- connection's lease only while the session still holds and its lease has
-- not lapsed; false means the session was fenced and its connection closes
-- with 4015.  A gateway saves each held connection more often than
-- bothy.consumer_lease, so a live holder never lapses.  Under READ
-- COMMITTED a save that waits for a takeover's row lock re-checks the
-- holder on the new row version, so a fenced session's save never lands.
CREATE FUNCTION bothy.consumer_save(agent uuid, gateway_session uuid, acked bigint)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(consumer_save.agent, 'agent'),
            bothy._need(consumer_save.gateway_session, 'gateway_session'),
            bothy._need(consumer_save.acked, 'acked');
    PERFORM bothy._need_ack_in_range(consumer_save.agent, consumer_save.acked);
    UPDATE bothy.consumer_holds h
       SET acked = greatest(h.acked, consumer_save.acked),
           lease_until = CASE WHEN h.holder_kind = 'connection'
                              THEN now() + pg_catalog.current_setting('bothy.consumer_lease')::interval
                              ELSE h.lease_until END
     WHERE h.agent = consumer_save.agent AND h.holder_session = consumer_save.gateway_session
       AND h.lease_until >= now();
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION bothy.consumer_save(uuid, uuid, bigint) IS
    'save the held acknowledgement while the session holds; false when it was fenced';

-- A connection whose lease lapsed with no takeover (the database was away
-- longer than bothy.consumer_lease, say) holds again: its own hold, lapsed
-- or released since from it (by the maintenance worker or its node's stop:
-- released_from), is renewed; a hold another holder took meanwhile, even
-- one released since from that other holder, is not, and false fences the
-- connection (4015).  A database outage alone never costs a consumer its
-- stream.  Under READ COMMITTED a resume that waits for a takeover's row
-- lock re-checks the holder on the new row version.  No signal: nobody
-- else holds what it takes.
CREATE FUNCTION bothy.consumer_resume(agent uuid, node uuid, gateway_session uuid, acked bigint)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(consumer_resume.agent, 'agent'),
            bothy._need_v7(consumer_resume.node, 'node'),
            bothy._need(consumer_resume.gateway_session, 'gateway_session'),
            bothy._need(consumer_resume.acked, 'acked');
    PERFORM bothy._need_ack_in_range(consumer_resume.agent, consumer_resume.acked);
    UPDATE bothy.consumer_holds h
       SET holder_session = consumer_resume.gateway_session, holder_kind = 'connection',
           node = consumer_resume.node, acked = greatest(h.acked, consumer_resume.acked),
           lease_until = now() + pg_catalog.current_setting('bothy.consumer_lease')::interval,
           taken_at = CASE WHEN h.holder_session IS NULL THEN now() ELSE h.taken_at END,
           released_from = NULL
     WHERE h.agent = consumer_resume.agent
       AND (h.holder_session = consumer_resume.gateway_session
            OR (h.holder_session IS NULL AND h.released_from = consumer_resume.gateway_session));
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION bothy.consumer_resume(uuid, uuid, uuid, bigint) IS
    'hold again after a lapsed lease, unless another holder took the stream; false when fenced';

CREATE FUNCTION bothy.consumer_holder(agent uuid,
        OUT holder_session uuid, OUT holder_kind text, OUT node uuid, OUT acked bigint,
        OUT lease_until timestamptz)
    RETURNS record
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT h.holder_session, h.holder_kind, h.node, h.acked, h.lease_until
      FROM bothy.consumer_holds h WHERE h.agent = consumer_holder.agent
$$;
COMMENT ON FUNCTION bothy.consumer_holder(uuid) IS
    'who holds an agent''s event stream, and the held acknowledgement';

-- The run start compare-and-swap: a run starts once, and only by the
-- session holding its agent's stream under a lease that has not lapsed.  The hold row is locked FOR SHARE, so
-- a takeover waits for a start in flight, and a start that waited for a
-- takeover sees the new holder and fails: a fenced consumer never starts.
CREATE FUNCTION bothy.run_start(run uuid, gateway_session uuid) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    run_agent uuid;
BEGIN
    PERFORM bothy._need(run_start.run, 'run'),
            bothy._need(run_start.gateway_session, 'gateway_session');
    SELECT r.agent INTO run_agent FROM bothy.runs r WHERE r.run = run_start.run;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'run is unknown' USING ERRCODE = 'no_data_found';
    END IF;
    PERFORM FROM bothy.consumer_holds h
      WHERE h.agent = run_agent AND h.holder_session = run_start.gateway_session
        AND h.lease_until >= now()
      FOR SHARE;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    UPDATE bothy.runs r SET started_by = run_start.gateway_session, started_at = now()
     WHERE r.run = run_start.run AND r.started_by IS NULL;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION bothy.run_start(uuid, uuid) IS
    'start a run once, only by the holder of its agent''s stream (compare-and-swap)';

-- The agent's events after an acknowledgement, for the session holding the
-- stream; nothing for any other session (its save then reports the fence).
CREATE FUNCTION bothy.agent_events_after(agent uuid, gateway_session uuid, after bigint,
        max_events integer DEFAULT 100)
    RETURNS TABLE (id bigint, type text, data jsonb, created_at timestamptz)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(agent_events_after.agent, 'agent'),
            bothy._need(agent_events_after.gateway_session, 'gateway_session'),
            bothy._need(agent_events_after.after, 'after'),
            bothy._need(agent_events_after.max_events, 'max_events');
    IF agent_events_after.max_events NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_events must be between 1 and 1000' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY
        SELECT e.id, e.type, e.data, e.created_at
          FROM bothy.agent_events e
          JOIN bothy.consumer_holds h ON h.agent = e.agent
         WHERE e.agent = agent_events_after.agent
           AND h.holder_session = agent_events_after.gateway_session
           AND h.lease_until >= now()
           AND e.id > agent_events_after.after
         ORDER BY e.id
         LIMIT agent_events_after.max_events;
END
$$;
COMMENT ON FUNCTION bothy.agent_events_after(uuid, uuid, bigint, integer) IS
    'the agent''s events after an acknowledgement, in order, for the holding session only';
