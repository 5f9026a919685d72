-- Application-side calls: the product tells bothy what happened, inside its
-- own transaction.  Signals they stage leave only if that transaction
-- commits, and carry the cluster's own node ID; they are sent in every mode.

CREATE FUNCTION bothy.place_put(place uuid) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    INSERT INTO bothy.places (place) VALUES (bothy._need(place_put.place, 'place'))
        ON CONFLICT DO NOTHING;
END
$$;
COMMENT ON FUNCTION bothy.place_put(uuid) IS 'seam table: a place exists';

CREATE FUNCTION bothy.thread_put(thread uuid, place uuid) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(thread_put.thread, 'thread'), bothy._need(thread_put.place, 'place');
    IF NOT EXISTS (SELECT FROM bothy.places p WHERE p.place = thread_put.place) THEN
        RAISE EXCEPTION 'place is unknown' USING ERRCODE = 'foreign_key_violation',
            HINT = 'Call bothy.place_put first.';
    END IF;
    INSERT INTO bothy.threads AS t (thread, place) VALUES (thread_put.thread, thread_put.place)
        ON CONFLICT ON CONSTRAINT threads_pkey DO UPDATE SET place = excluded.place;
END
$$;
COMMENT ON FUNCTION bothy.thread_put(uuid, uuid) IS 'seam table: a thread exists in a place (or moved there)';

CREATE FUNCTION bothy.membership_added(place uuid, person uuid) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(membership_added.place, 'place'), bothy._need(membership_added.person, 'person');
    IF NOT EXISTS (SELECT FROM bothy.places p WHERE p.place = membership_added.place) THEN
        RAISE EXCEPTION 'place is unknown' USING ERRCODE = 'foreign_key_violation',
            HINT = 'Call bothy.place_put first.';
    END IF;
    INSERT INTO bothy.memberships (place, person) VALUES (membership_added.place, membership_added.person)
        ON CONFLICT DO NOTHING;
END
$$;
COMMENT ON FUNCTION bothy.membership_added(uuid, uuid) IS 'seam table: a person joined a place';

-- Gateways admit every connection again at each delivery, so a removed
-- member stops receiving the place's events on every node with no signal.
CREATE FUNCTION bothy.membership_removed(place uuid, person uuid) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(membership_removed.place, 'place'), bothy._need(membership_removed.person, 'person');
    DELETE FROM bothy.memberships m
     WHERE m.place = membership_removed.place AND m.person = membership_removed.person;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION bothy.membership_removed(uuid, uuid) IS 'seam table: a person left a place; false if they were no member';

CREATE FUNCTION bothy.agent_put(agent uuid) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    INSERT INTO bothy.agents (agent) VALUES (bothy._need(agent_put.agent, 'agent'))
        ON CONFLICT DO NOTHING;
END
$$;
COMMENT ON FUNCTION bothy.agent_put(uuid) IS 'seam table: an agent exists';

CREATE FUNCTION bothy._need_agent(agent uuid) RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(_need_agent.agent, 'agent');
    IF NOT EXISTS (SELECT FROM bothy.agents a WHERE a.agent = _need_agent.agent) THEN
        RAISE EXCEPTION 'agent is unknown' USING ERRCODE = 'foreign_key_violation',
            HINT = 'Call bothy.agent_put first.';
    END IF;
END
$$;

-- A run changed: store its document when the version is newer and signal
-- gateway.run; every node turns it into a run.updated snapshot.  An older or
-- equal version changes nothing and sends nothing.  Returns whether stored.
CREATE FUNCTION bothy.run_changed(run uuid, thread uuid, agent uuid, version bigint, document jsonb)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    stored boolean;
BEGIN
    PERFORM bothy._need(run_changed.run, 'run'), bothy._need(run_changed.thread, 'thread'),
            bothy._need(run_changed.version, 'version'), bothy._need(run_changed.document, 'document'),
            bothy._need_agent(run_changed.agent);
    IF run_changed.version NOT BETWEEN 0 AND 9007199254740991 THEN
        RAISE EXCEPTION 'version must be between 0 and 9007199254740991'
            USING ERRCODE = 'numeric_value_out_of_range';
    END IF;
    IF jsonb_typeof(run_changed.document) <> 'object' THEN
        RAISE EXCEPTION 'document must be a JSON object' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO bothy.runs AS r (run, thread, agent, version, document)
    VALUES (run_changed.run, run_changed.thread, run_changed.agent, run_changed.version, run_changed.document)
    ON CONFLICT ON CONSTRAINT runs_pkey DO UPDATE
        SET thread = excluded.thread, version = excluded.version, document = excluded.document,
            updated_at = now()
        WHERE r.version < excluded.version
    RETURNING true INTO stored;
    IF stored THEN
        PERFORM bothy.publish('gateway.run', jsonb_build_object(
            'node', bothy._cluster_node(), 'run', run_changed.run,
            'thread', run_changed.thread, 'version', run_changed.version));
    END IF;
    RETURN coalesce(stored, false);
END
$$;
COMMENT ON FUNCTION bothy.run_changed(uuid, uuid, uuid, bigint, jsonb) IS
    'a run changed: store the newer version and signal gateway.run';

-- A notification was created.  Whether it becomes a hint (its recipient is
-- connected somewhere) or a push is decided by the maintenance worker right
-- after this commits, from gateway_presence (bothy._hints_decide): the
-- caller's transaction pays one row, never a presence read or a NOTIFY.
CREATE FUNCTION bothy.notification_created(recipient uuid, hint_kind text, quiet boolean,
        count integer, thread uuid DEFAULT NULL, message uuid DEFAULT NULL, target uuid DEFAULT NULL)
    RETURNS uuid
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    nid uuid := bothy.uuidv7();
BEGIN
    PERFORM bothy._need(notification_created.recipient, 'recipient'),
            bothy._need_code(notification_created.hint_kind, 'hint_kind',
                             ARRAY['mention', 'reply', 'direct', 'run', 'invite', 'system']),
            bothy._need(notification_created.quiet, 'quiet'),
            bothy._need(notification_created.count, 'count');
    IF notification_created.count < 0 THEN
        RAISE EXCEPTION 'count must not be negative' USING ERRCODE = 'numeric_value_out_of_range';
    END IF;
    INSERT INTO bothy.notifications (nid, recipient, hint_kind, quiet, count, thread, message, target)
    VALUES (nid, notification_created.recipient, notification_created.hint_kind,
            notification_created.quiet, notification_created.count, notification_created.thread,
            notification_created.message, notification_created.target);
    INSERT INTO bothy.hints_pending (nid) VALUES (nid);
    PERFORM bothy._maintenance_wake();
    RETURN nid;
END
$$;
COMMENT ON FUNCTION bothy.notification_created(uuid, text, boolean, integer, uuid, uuid, uuid) IS
    'a notification was created: store it; the maintenance worker sends a hint or queues a push';

-- The push sender's claim: up to max_rows queued notifications, oldest
-- first, removed from the outbox by the caller's transaction.  SKIP LOCKED
-- lets several senders claim at once without waiting for or repeating each
-- other; a claim that rolls back puts its rows back (nothing lost), so a
-- sender claims, sends, then commits.
CREATE FUNCTION bothy.push_claim(max_rows integer)
    RETURNS TABLE (nid uuid, recipient uuid, hint_kind text, quiet boolean, count integer,
                   thread uuid, message uuid, target uuid, created_at timestamptz)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    claimed integer;
BEGIN
    PERFORM bothy._need(push_claim.max_rows, 'max_rows');
    IF push_claim.max_rows NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_rows must be between 1 and 1000' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY
        WITH taken AS (
            DELETE FROM bothy.push_outbox o
             WHERE o.nid IN (SELECT q.nid FROM bothy.push_outbox q
                              ORDER BY q.nid LIMIT push_claim.max_rows
                                FOR UPDATE SKIP LOCKED)
            RETURNING o.nid
        )
        SELECT n.nid, n.recipient, n.hint_kind, n.quiet, n.count, n.thread, n.message,
               n.target, n.created_at
          FROM taken JOIN bothy.notifications n ON n.nid = taken.nid
         ORDER BY n.nid;
    GET DIAGNOSTICS claimed = ROW_COUNT;
    PERFORM bothy._metrics_add('pushes_claimed', NULL, claimed);
END
$$;
COMMENT ON FUNCTION bothy.push_claim(integer) IS
    'claim queued push notifications for sending; committed claims are gone from the outbox';

-- An agent event was appended: numbered under the agent row's lock, so IDs
-- follow commit order per agent (see bothy.agents).  Signalled as
-- gateway.agent_event in every mode, so the gateway of the holder of the
-- agent's stream reads and delivers it; returns the event ID.
CREATE FUNCTION bothy.agent_event_appended(agent uuid, type text, data jsonb) RETURNS bigint
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    id bigint;
BEGIN
    PERFORM bothy._need_agent(agent_event_appended.agent),
            bothy._need(agent_event_appended.type, 'type'),
            bothy._need(agent_event_appended.data, 'data');
    IF agent_event_appended.type !~ '^[a-z][a-z0-9_.]{0,63}$' THEN
        RAISE EXCEPTION 'type must be a lower-case code of at most 64 characters'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    UPDATE bothy.agents a SET last_event = a.last_event + 1
     WHERE a.agent = agent_event_appended.agent
    RETURNING a.last_event INTO id;
    INSERT INTO bothy.agent_events (agent, id, type, data)
    VALUES (agent_event_appended.agent, id, agent_event_appended.type, agent_event_appended.data);
    -- wakes the node holding the agent's stream; IDs only, never the data
    PERFORM bothy.publish('gateway.agent_event', jsonb_build_object(
        'node', bothy._cluster_node(), 'agent', agent_event_appended.agent, 'event', id));
    RETURN id;
END
$$;
COMMENT ON FUNCTION bothy.agent_event_appended(uuid, text, jsonb) IS
    'an agent event was appended; returns its ID (per agent, in commit order)';
