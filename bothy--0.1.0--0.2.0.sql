-- bothy 0.1.0 -> 0.2.0: the maintenance worker (presence expiry, agents
-- offline, lapsed holds, hint or push), the counters, the push outbox,
-- consumer holds that lapse with their lease (and bothy.consumer_resume
-- after a lapse without a takeover), and the gateway.agent_event signal of
-- every appended agent event.  Frozen once released.
\echo Use "ALTER EXTENSION bothy UPDATE TO '0.2.0'" to load this file. \quit

-- Releases remember whom they released from (bothy.consumer_resume).
ALTER TABLE bothy.consumer_holds ADD COLUMN released_from uuid;

-- The counters and the maintenance worker's wake-up (C).
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

-- Hint decisions and the push outbox.
-- Notifications the maintenance worker has not decided yet: a hint to a
-- recipient with a fresh presence row, or a push (bothy._hints_decide).
-- attempts counts failed decisions; after five a row is no longer tried and
-- waits for an operator (docs/operations.md), so one bad row cannot make
-- the worker fail at every interval.
CREATE TABLE bothy.hints_pending (
    nid      uuid PRIMARY KEY REFERENCES bothy.notifications ON DELETE CASCADE,
    attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0)
);

-- Notifications of recipients with no fresh presence row, until an external
-- push sender claims them with bothy.push_claim().
CREATE TABLE bothy.push_outbox (
    nid       uuid PRIMARY KEY REFERENCES bothy.notifications ON DELETE CASCADE,
    queued_at timestamptz NOT NULL DEFAULT now()
);

SELECT pg_catalog.pg_extension_config_dump('bothy.hints_pending', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.push_outbox', '');

-- Counting expired presence rows.
CREATE OR REPLACE FUNCTION bothy._presence_expire() RETURNS integer
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

-- Holds lapse with their lease.
CREATE OR REPLACE FUNCTION bothy.consumer_save(agent uuid, gateway_session uuid, acked bigint)
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

CREATE OR REPLACE FUNCTION bothy.run_start(run uuid, gateway_session uuid) RETURNS boolean
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

CREATE OR REPLACE FUNCTION bothy.agent_events_after(agent uuid, gateway_session uuid, after bigint,
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

-- The maintenance worker's tasks.
-- Agents whose newest stored heartbeat, of whichever node, is older than
-- the timeout plus one persist interval (the most a feeding node's row can
-- lag, D-M7-17-10) go offline: one row per agent, so one decision and one
-- signal for the cluster.  A row a heartbeat is writing is skipped, not
-- waited for (the worker never queues behind a gateway's transaction); a
-- heartbeat committed since the scan is seen by the re-check of the lock.
CREATE FUNCTION bothy._agents_expire() RETURNS integer
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    grace interval := pg_catalog.current_setting('bothy.agent_presence_timeout')::interval
                    + pg_catalog.current_setting('bothy.agent_heartbeat_persist_interval')::interval;
    r record;
    n integer := 0;
BEGIN
    FOR r IN
        WITH silent AS (
            SELECT a.agent FROM bothy.agent_presence a
             WHERE a.state <> 'offline' AND a.heartbeat_at < now() - grace
             ORDER BY a.agent
               FOR UPDATE SKIP LOCKED
        )
        UPDATE bothy.agent_presence a SET state = 'offline'
          FROM silent WHERE a.agent = silent.agent
        RETURNING a.agent
    LOOP
        PERFORM bothy.publish('gateway.agent_presence', jsonb_build_object(
            'node', bothy._cluster_node(), 'agent', r.agent, 'state', 'offline'));
        n := n + 1;
    END LOOP;
    PERFORM bothy._metrics_add('agents_offline', NULL, n);
    RETURN n;
END
$$;

-- Holds whose lease lapsed (a connection that stopped saving, a REST poll
-- window that ended) are released, and gateway.consumer with the nil
-- session says "nobody holds it": every node fences its connections of the
-- agent (D-M7-17-4).  A hold a takeover is writing is skipped, not waited
-- for, and a takeover committed since the scan renewed the lease, which
-- the re-check of the lock sees: a new holder is never released.
CREATE FUNCTION bothy._holds_expire() RETURNS integer
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    r record;
    n integer := 0;
BEGIN
    FOR r IN
        WITH lapsed AS (
            SELECT h.agent FROM bothy.consumer_holds h
             WHERE h.lease_until < now()
             ORDER BY h.agent
               FOR UPDATE SKIP LOCKED
        )
        UPDATE bothy.consumer_holds h
           SET released_from = h.holder_session,
               holder_session = NULL, holder_kind = NULL, node = NULL,
               lease_until = NULL, taken_at = NULL
          FROM lapsed WHERE h.agent = lapsed.agent
        RETURNING h.agent
    LOOP
        PERFORM bothy.publish('gateway.consumer', jsonb_build_object(
            'node', bothy._cluster_node(), 'agent', r.agent,
            'gateway_session', '00000000-0000-0000-0000-000000000000'::uuid));
        n := n + 1;
    END LOOP;
    PERFORM bothy._metrics_add('holds_released', NULL, n);
    RETURN n;
END
$$;

-- One notification: a recipient with a fresh presence row (as
-- bothy.presence_read sees it) gets gateway.hint; any other gets a push
-- outbox row.  Returns true for a hint.
CREATE FUNCTION bothy._hint_decide(nid uuid) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    n bothy.notifications;
    present boolean;
BEGIN
    SELECT * INTO STRICT n FROM bothy.notifications x WHERE x.nid = _hint_decide.nid;
    present := EXISTS (SELECT FROM bothy.presence_read(ARRAY[n.recipient]));
    IF present THEN
        PERFORM bothy.publish('gateway.hint', jsonb_strip_nulls(jsonb_build_object(
            'node', bothy._cluster_node(), 'recipient', n.recipient, 'nid', n.nid,
            'hint_kind', n.hint_kind, 'quiet', n.quiet, 'count', n.count,
            'thread', n.thread, 'message', n.message, 'target', n.target)));
    ELSE
        INSERT INTO bothy.push_outbox (nid) VALUES (n.nid);
    END IF;
    DELETE FROM bothy.hints_pending p WHERE p.nid = n.nid;
    RETURN present;
END
$$;

-- Up to max_rows undecided notifications, oldest first.  Each is decided in
-- a subtransaction: a failure is logged without its IDs, counted, and
-- tried again later (five times at most), and the others still go out.
CREATE FUNCTION bothy._hints_decide(max_rows integer) RETURNS integer
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    r record;
    handled integer := 0;
    hints integer := 0;
    pushes integer := 0;
    failures integer := 0;
BEGIN
    FOR r IN
        SELECT p.nid FROM bothy.hints_pending p
         WHERE p.attempts < 5
         ORDER BY p.nid LIMIT max_rows
           FOR UPDATE SKIP LOCKED
    LOOP
        handled := handled + 1;
        BEGIN
            IF bothy._hint_decide(r.nid) THEN
                hints := hints + 1;
            ELSE
                pushes := pushes + 1;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            UPDATE bothy.hints_pending p SET attempts = p.attempts + 1 WHERE p.nid = r.nid;
            failures := failures + 1;
            RAISE WARNING 'bothy maintenance could not decide a notification (SQLSTATE %)', SQLSTATE;
        END;
    END LOOP;
    PERFORM bothy._metrics_add('hints_sent', NULL, hints),
            bothy._metrics_add('pushes_queued', NULL, pushes),
            bothy._metrics_add('worker_errors', 'maintenance', failures);
    RETURN handled;
END
$$;

-- Notifications are decided by the maintenance worker; pushes are claimed.
CREATE OR REPLACE FUNCTION bothy.notification_created(recipient uuid, hint_kind text, quiet boolean,
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

CREATE OR REPLACE FUNCTION bothy.push_claim(max_rows integer)
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

-- Privileges of what is new.
REVOKE ALL ON ALL TABLES IN SCHEMA bothy FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA bothy FROM PUBLIC;
GRANT EXECUTE ON FUNCTION bothy.push_claim(integer) TO bothy_app;
GRANT USAGE ON SCHEMA bothy TO pg_monitor;
GRANT EXECUTE ON FUNCTION bothy.metrics() TO pg_monitor;
GRANT SELECT ON bothy.stat_metrics TO pg_monitor;

-- Appended agent events are signalled (gateway.agent_event).
-- An agent event was appended: numbered under the agent row's lock, so IDs
-- follow commit order per agent (see bothy.agents).  Signalled as
-- gateway.agent_event in every mode, so the gateway of the holder of the
-- agent's stream reads and delivers it; returns the event ID.
CREATE OR REPLACE FUNCTION bothy.agent_event_appended(agent uuid, type text, data jsonb) RETURNS bigint
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

-- At stop the node's presence rows go at once instead of aging out, and its
-- connections' consumer holds are released so a new consumer need not wait
-- for the lease.  Returns the number of presence rows deleted.
CREATE OR REPLACE FUNCTION bothy.node_stop(node uuid) RETURNS integer
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

-- A takeover: an agent consumer's identify (holder_kind 'connection') or a
-- new REST poll window ('poll', with its window).  The new holder continues
-- from the held acknowledgement, which this returns.  acked, when given,
-- first moves the held acknowledgement forward (a poll that reports what it
-- finished).  In multi mode the takeover is signalled so that every other
-- node fences its connections of the agent at once.
CREATE OR REPLACE FUNCTION bothy.consumer_take(agent uuid, node uuid, gateway_session uuid,
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

-- A lapsed lease with no takeover holds again (a database outage alone
-- never costs a consumer its stream).
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
REVOKE ALL ON FUNCTION bothy.consumer_resume(uuid, uuid, uuid, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION bothy.consumer_resume(uuid, uuid, uuid, bigint) TO bothy_gateway;

-- uuidv7, signal_check and publish compute on their arguments alone and run
-- as their caller, with no SET clause (10_c_functions.sql says why).
ALTER FUNCTION bothy.uuidv7() SECURITY INVOKER RESET search_path;
ALTER FUNCTION bothy.signal_check(text) SECURITY INVOKER RESET search_path;
ALTER FUNCTION bothy.publish(text, jsonb) SECURITY INVOKER RESET search_path;

-- publish of a whole signal, as it goes on the channel (the gateways' form).
CREATE FUNCTION bothy.publish(signal text) RETURNS void
    LANGUAGE c VOLATILE SECURITY INVOKER
    AS 'MODULE_PATHNAME', 'bothy_publish_signal';
COMMENT ON FUNCTION bothy.publish(text) IS
    'validate a whole signal, kind among its members, and stage it on ephemeral for the commit of the caller''s transaction';
REVOKE ALL ON FUNCTION bothy.publish(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION bothy.publish(text) TO bothy_gateway;
