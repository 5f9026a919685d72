-- The maintenance worker's tasks (src/extension/worker_maintenance.c runs
-- them every bothy.presence_flush_interval, each in its own transaction).
-- Each returns the number of items it handled and counts its work in
-- bothy.metrics().  Signals produced here carry the cluster's own node ID
-- and are sent in every mode: no gateway makes these decisions.

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
