-- bothy 0.2.0: the released install script, frozen; never edit it (docs/development.md).
\echo Use "CREATE EXTENSION bothy" to load this file. \quit

-- src/sql/00_database.sql
-- bothy belongs to one database per server, the one its background workers
-- connect to: installed anywhere else it would hold state no worker
-- maintains and signals nobody expires.
DO $database$
BEGIN
    IF pg_catalog.current_database() <> pg_catalog.current_setting('bothy.database') THEN
        RAISE EXCEPTION 'bothy must be installed in the database named by bothy.database'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = pg_catalog.format('bothy.database is "%s"; this is "%s".',
                                             pg_catalog.current_setting('bothy.database'),
                                             pg_catalog.current_database()),
                  HINT = 'Connect to that database, or set bothy.database and restart the server.';
    END IF;
END
$database$;

-- src/sql/00_roles.sql
-- The two group roles an operator grants to logins.  Roles are cluster-wide
-- and outlive the extension, so they are created only when missing.
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'bothy_gateway') THEN
        CREATE ROLE bothy_gateway NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'bothy_app') THEN
        CREATE ROLE bothy_app NOLOGIN;
    END IF;
END
$roles$;

COMMENT ON SCHEMA bothy IS 'bothy: shared state of the gateway nodes; use the functions, never the tables';

-- src/sql/10_c_functions.sql
-- Functions written in C (src/extension).
--
-- uuidv7, signal_check and the two forms of publish compute on their
-- arguments: they reach no table and look up no name, and nothing they read
-- or write depends on the role (uuidv7's debug setting is the session's,
-- publish writes the shared queue and the counters).  They run as their
-- caller (SECURITY INVOKER, no SET clause): running as the owner would give
-- them nothing, and a SET clause would cost every producer's transaction
-- two changes of search_path and a rebuilt search path in its next
-- statement, about 7.5 us (docs/performance.md).  Every other function
-- reaches a table and runs SECURITY DEFINER with the pinned search_path
-- (test/pgtap/schema.sql holds both lists).

CREATE FUNCTION bothy.uuidv7() RETURNS uuid
    LANGUAGE c VOLATILE STRICT SECURITY INVOKER
    AS 'MODULE_PATHNAME', 'bothy_uuidv7';
COMMENT ON FUNCTION bothy.uuidv7() IS
    'an RFC 9562 UUIDv7, strictly increasing within the backend';

CREATE FUNCTION bothy.signal_check(payload text) RETURNS text
    LANGUAGE c IMMUTABLE STRICT SECURITY INVOKER
    AS 'MODULE_PATHNAME', 'bothy_signal_check';
COMMENT ON FUNCTION bothy.signal_check(text) IS
    'the kind of a valid signal payload, NULL for a foreign kind, an error naming the reason otherwise';

CREATE FUNCTION bothy.publish(kind text, members jsonb) RETURNS void
    LANGUAGE c VOLATILE SECURITY INVOKER
    AS 'MODULE_PATHNAME', 'bothy_publish';
COMMENT ON FUNCTION bothy.publish(text, jsonb) IS
    'validate a signal and stage it on ephemeral for the commit of the caller''s transaction';

CREATE FUNCTION bothy.publish(signal text) RETURNS void
    LANGUAGE c VOLATILE SECURITY INVOKER
    AS 'MODULE_PATHNAME', 'bothy_publish_signal';
COMMENT ON FUNCTION bothy.publish(text) IS
    'validate a whole signal, kind among its members, and stage it on ephemeral for the commit of the caller''s transaction';

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

-- src/sql/20_tables.sql
-- The state.  No role has any privilege on these tables: gateways and
-- applications reach them only through the functions below.

-- The cluster's own node ID, carried by every signal produced inside the
-- database, so no gateway mistakes one for its own.
CREATE TABLE bothy.cluster_identity (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    node      uuid NOT NULL
);
INSERT INTO bothy.cluster_identity (node) VALUES (bothy.uuidv7());

-- Gateway nodes that started and did not stop (a fresh node ID per start).
CREATE TABLE bothy.gateway_nodes (
    node       uuid PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now()
);

-- Presence: one row per counted live connection of each node.  UNLOGGED: it
-- is rebuilt from the nodes' memory, so it need not cost WAL; a crash
-- truncates it and the flush protocol brings it back (docs/sql-api.md).
CREATE UNLOGGED TABLE bothy.gateway_presence (
    gateway_session uuid NOT NULL,
    node            uuid NOT NULL,
    person          uuid NOT NULL,
    device          uuid NOT NULL,
    focus           uuid,
    idle            boolean NOT NULL DEFAULT false,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (node, gateway_session)
);
CREATE INDEX gateway_presence_person ON bothy.gateway_presence (person, device);

-- One row per node whose presence rows are complete, with the time of its
-- last flush.  Its rows are fresh while flushed_at is within presence_ttl,
-- so a flush need not touch rows that did not change.  It is UNLOGGED like
-- the rows: a crash truncates both together, and a missing marker tells the
-- node to send all of its rows again.
CREATE UNLOGGED TABLE bothy.gateway_presence_nodes (
    node       uuid PRIMARY KEY,
    flushed_at timestamptz NOT NULL
);
CREATE INDEX gateway_presence_nodes_flushed ON bothy.gateway_presence_nodes (flushed_at);

-- The newest binding of each device to a gateway session (D-M7-17-3).
CREATE TABLE bothy.device_bindings (
    device          uuid PRIMARY KEY,
    person          uuid NOT NULL,
    gateway_session uuid NOT NULL,
    bind_id         uuid NOT NULL,
    node            uuid NOT NULL,
    bound_at        timestamptz NOT NULL DEFAULT now()
);

-- The holder of each agent's event stream and the held acknowledgement
-- (D-M7-17-4).  A connection's hold is a lease renewed by its saves; a REST
-- poll window's hold ends with the window.  The acknowledgement outlives
-- holders: a new holder continues from it.
CREATE TABLE bothy.consumer_holds (
    agent          uuid PRIMARY KEY,
    holder_session uuid,
    holder_kind    text CHECK (holder_kind IN ('connection', 'poll')),
    node           uuid,
    acked          bigint NOT NULL DEFAULT 0 CHECK (acked >= 0),
    lease_until    timestamptz,
    taken_at       timestamptz,
    CHECK ((holder_session IS NULL) = (holder_kind IS NULL)),
    CHECK ((holder_session IS NULL) = (lease_until IS NULL)),
    -- the holder a release took the stream from: only it may hold again
    -- without a takeover (bothy.consumer_resume)
    released_from  uuid
);

-- The newest stored heartbeat of each agent, whichever node stored it
-- (D-M7-17-10).  Writes are monotone in heartbeat_at.
CREATE TABLE bothy.agent_presence (
    agent        uuid PRIMARY KEY,
    node         uuid NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    state        text NOT NULL CHECK (state IN ('online', 'busy', 'offline')),
    billing_mode text CHECK (billing_mode IN ('free', 'included', 'metered')),
    actor        uuid
);

-- The seam: minimal tables behind the default bodies of the lookup
-- functions.  An operator with a schema of their own replaces the lookup
-- functions and leaves these empty.
CREATE TABLE bothy.places (
    place      uuid PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE bothy.threads (
    thread uuid PRIMARY KEY,
    place  uuid NOT NULL REFERENCES bothy.places ON DELETE CASCADE
);
CREATE INDEX threads_place ON bothy.threads (place);

CREATE TABLE bothy.memberships (
    place  uuid NOT NULL REFERENCES bothy.places ON DELETE CASCADE,
    person uuid NOT NULL,
    PRIMARY KEY (place, person)
);
CREATE INDEX memberships_person ON bothy.memberships (person);

-- last_event numbers each agent's events under the row lock of the append,
-- so IDs are in commit order per agent and an acknowledgement up to N never
-- skips an event that commits later with a smaller ID.
CREATE TABLE bothy.agents (
    agent      uuid PRIMARY KEY,
    last_event bigint NOT NULL DEFAULT 0
);

CREATE TABLE bothy.runs (
    run        uuid PRIMARY KEY,
    thread     uuid NOT NULL,
    agent      uuid NOT NULL REFERENCES bothy.agents,
    version    bigint NOT NULL CHECK (version BETWEEN 0 AND 9007199254740991),
    document   jsonb NOT NULL,
    started_by uuid,
    started_at timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE bothy.notifications (
    nid        uuid PRIMARY KEY,
    recipient  uuid NOT NULL,
    hint_kind  text NOT NULL CHECK (hint_kind IN ('mention', 'reply', 'direct', 'run', 'invite', 'system')),
    quiet      boolean NOT NULL,
    count      integer NOT NULL CHECK (count >= 0),
    thread     uuid,
    message    uuid,
    target     uuid,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notifications_recipient ON bothy.notifications (recipient, created_at);

CREATE TABLE bothy.agent_events (
    agent      uuid NOT NULL REFERENCES bothy.agents ON DELETE CASCADE,
    id         bigint NOT NULL CHECK (id > 0),
    type       text NOT NULL CHECK (type ~ '^[a-z][a-z0-9_.]{0,63}$'),
    data       jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (agent, id)
);

-- pg_dump keeps the logged state (presence is rebuilt, never dumped).  Not
-- cluster_identity: CREATE EXTENSION on restore makes its one row, and a
-- dumped row would collide with it; a restored cluster gets a new node ID,
-- which only names the signals the database itself produces.  Not
-- gateway_nodes: its nodes did not survive the dump either.
SELECT pg_catalog.pg_extension_config_dump('bothy.device_bindings', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.consumer_holds', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.agent_presence', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.places', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.threads', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.memberships', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.agents', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.runs', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.notifications', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.agent_events', '');

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

-- src/sql/30_internal.sql
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

-- src/sql/40_nodes.sql
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

-- src/sql/41_device_bindings.sql
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

-- src/sql/42_consumers.sql
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

-- src/sql/43_presence.sql
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

-- src/sql/44_agent_presence.sql
-- Agent presence across nodes (D-M7-17-10).

-- Store an agent's heartbeat as seen by a node, monotonically: a heartbeat
-- older than the stored one (of any node) changes nothing.  A heartbeat time
-- ahead of the database clock is stored as now, so one node's fast clock
-- cannot keep an agent online past its timeout.  Returns whether it was
-- stored.
CREATE FUNCTION bothy.agent_heartbeat_persist(agent uuid, node uuid, heartbeat_at timestamptz,
        state text, billing_mode text DEFAULT NULL, actor uuid DEFAULT NULL)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    stored boolean;
BEGIN
    PERFORM bothy._need(agent_heartbeat_persist.agent, 'agent'),
            bothy._need_v7(agent_heartbeat_persist.node, 'node'),
            bothy._need(agent_heartbeat_persist.heartbeat_at, 'heartbeat_at'),
            bothy._need_code(agent_heartbeat_persist.state, 'state', ARRAY['online', 'busy', 'offline']);
    IF agent_heartbeat_persist.billing_mode IS NOT NULL THEN
        PERFORM bothy._need_code(agent_heartbeat_persist.billing_mode, 'billing_mode',
                                 ARRAY['free', 'included', 'metered']);
    END IF;
    INSERT INTO bothy.agent_presence AS a (agent, node, heartbeat_at, state, billing_mode, actor)
    VALUES (agent_heartbeat_persist.agent, agent_heartbeat_persist.node,
            least(agent_heartbeat_persist.heartbeat_at, now()), agent_heartbeat_persist.state,
            agent_heartbeat_persist.billing_mode, agent_heartbeat_persist.actor)
    ON CONFLICT ON CONSTRAINT agent_presence_pkey DO UPDATE
        SET node = excluded.node, heartbeat_at = excluded.heartbeat_at, state = excluded.state,
            billing_mode = excluded.billing_mode, actor = excluded.actor
        WHERE a.heartbeat_at < excluded.heartbeat_at
    RETURNING true INTO stored;
    RETURN coalesce(stored, false);
END
$$;
COMMENT ON FUNCTION bothy.agent_heartbeat_persist(uuid, uuid, timestamptz, text, text, uuid) IS
    'store an agent heartbeat if it is newer than the stored one; returns whether it was stored';

CREATE FUNCTION bothy.agent_status(agents uuid[])
    RETURNS TABLE (agent uuid, node uuid, heartbeat_at timestamptz, state text,
                   billing_mode text, actor uuid)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(agent_status.agents, 'agents');
    RETURN QUERY
        SELECT a.agent, a.node, a.heartbeat_at, a.state, a.billing_mode, a.actor
          FROM bothy.agent_presence a
         WHERE a.agent = ANY (agent_status.agents)
         ORDER BY a.agent;
END
$$;
COMMENT ON FUNCTION bothy.agent_status(uuid[]) IS
    'the stored presence of agents: newest heartbeat, its node and state';

-- src/sql/45_maintenance.sql
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

-- src/sql/50_seam.sql
-- The seam to the rest of the product: lookups the gateway asks.  Their
-- default bodies read the extension's minimal tables; an operator with a
-- schema of their own replaces them with CREATE OR REPLACE FUNCTION, keeping
-- the signature, SECURITY DEFINER and the pinned search_path.

CREATE FUNCTION bothy.thread_place(thread uuid) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$ SELECT t.place FROM bothy.threads t WHERE t.thread = thread_place.thread $$;
COMMENT ON FUNCTION bothy.thread_place(uuid) IS
    'seam: the place a thread is in (NULL for an unknown thread)';

CREATE FUNCTION bothy.thread_audience(thread uuid, persons uuid[]) RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT DISTINCT m.person
      FROM bothy.threads t
      JOIN bothy.memberships m ON m.place = t.place
     WHERE t.thread = thread_audience.thread AND m.person = ANY (thread_audience.persons)
$$;
COMMENT ON FUNCTION bothy.thread_audience(uuid, uuid[]) IS
    'seam: of the given persons, those who may see the thread';

CREATE FUNCTION bothy.run_document(run uuid) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT r.document || jsonb_build_object('run', r.run, 'thread', r.thread,
                                            'agent', r.agent, 'version', r.version)
      FROM bothy.runs r WHERE r.run = run_document.run
$$;
COMMENT ON FUNCTION bothy.run_document(uuid) IS
    'seam: the run document a run.updated snapshot carries (NULL for an unknown run)';

CREATE FUNCTION bothy.agent_known(agent uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$ SELECT EXISTS (SELECT FROM bothy.agents a WHERE a.agent = agent_known.agent) $$;
COMMENT ON FUNCTION bothy.agent_known(uuid) IS
    'seam: whether an agent exists';

-- src/sql/60_app.sql
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

-- src/sql/90_privileges.sql
-- Least privilege: PUBLIC executes nothing, each role only its own
-- functions, and no role has any privilege on any table.

REVOKE ALL ON ALL TABLES IN SCHEMA bothy FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA bothy FROM PUBLIC;
GRANT USAGE ON SCHEMA bothy TO bothy_gateway, bothy_app;

GRANT EXECUTE ON FUNCTION
    bothy.uuidv7(),
    bothy.signal_check(text),
    bothy.publish(text, jsonb),
    bothy.publish(text),
    bothy.settings(),
    bothy.node_start(uuid),
    bothy.node_stop(uuid),
    bothy.device_bind(uuid, uuid, uuid, uuid),
    bothy.device_binding(uuid),
    bothy.consumer_take(uuid, uuid, uuid, text, interval, bigint),
    bothy.consumer_save(uuid, uuid, bigint),
    bothy.consumer_resume(uuid, uuid, uuid, bigint),
    bothy.consumer_holder(uuid),
    bothy.run_start(uuid, uuid),
    bothy.agent_events_after(uuid, uuid, bigint, integer),
    bothy.presence_flush(uuid, boolean, uuid[], uuid[], uuid[], uuid[], boolean[], uuid[]),
    bothy.presence_read(uuid[]),
    bothy.agent_heartbeat_persist(uuid, uuid, timestamptz, text, text, uuid),
    bothy.agent_status(uuid[]),
    bothy.thread_place(uuid),
    bothy.thread_audience(uuid, uuid[]),
    bothy.run_document(uuid),
    bothy.agent_known(uuid)
TO bothy_gateway;

GRANT EXECUTE ON FUNCTION
    bothy.uuidv7(),
    bothy.signal_check(text),
    bothy.place_put(uuid),
    bothy.thread_put(uuid, uuid),
    bothy.membership_added(uuid, uuid),
    bothy.membership_removed(uuid, uuid),
    bothy.agent_put(uuid),
    bothy.run_changed(uuid, uuid, uuid, bigint, jsonb),
    bothy.notification_created(uuid, text, boolean, integer, uuid, uuid, uuid),
    bothy.agent_event_appended(uuid, text, jsonb),
    bothy.push_claim(integer)
TO bothy_app;

-- Monitoring reads the counters through the server's own monitoring role,
-- so a monitoring login needs no bothy role and can call nothing else.
GRANT USAGE ON SCHEMA bothy TO pg_monitor;
GRANT EXECUTE ON FUNCTION bothy.metrics() TO pg_monitor;
GRANT SELECT ON bothy.stat_metrics TO pg_monitor;
