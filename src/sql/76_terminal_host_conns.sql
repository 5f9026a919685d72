-- The control connections of hosts as the database knows them: new in
-- 0.3.0 (like every terminal part, in the upgrade from 0.2.0 through
-- UPGRADE_PARTS).  A node announces its connection of a host on the
-- channel after the first report and each heartbeat, and withdraws it at
-- close (D-M2-47-6); both now go through the database, which records the
-- connection in the transaction that stages the signal.  A node that hears
-- of a newer connection of a host it holds probes its own only when the
-- database knows that connection (D-M2-47-7; docs/security.md): a
-- terminal.host_present is a hint to look, and the duplicate verdict it can
-- lead to forgets the host's key.

-- UNLOGGED, as presence is: a heartbeat's announcement writes no WAL, and
-- after a crash the next heartbeat of each connection records it again.
CREATE UNLOGGED TABLE bothy.terminal_host_conns (
    host         uuid NOT NULL REFERENCES bothy.terminal_hosts (host) ON DELETE CASCADE,
    conn         uuid NOT NULL,
    node         uuid NOT NULL,
    announced_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (host, conn)
);
COMMENT ON TABLE bothy.terminal_host_conns IS
    'control connections announced by the nodes, each until its withdrawal or one presence window after its last announcement';

-- How long an announcement counts: the heartbeat interval times the miss
-- limit, the window a remote entry counts in the nodes' views (D-M2-47-6).
CREATE FUNCTION bothy._terminal_presence_window() RETURNS interval
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT pg_catalog.current_setting('bothy.terminal_host_heartbeat_interval')::interval
           * pg_catalog.current_setting('bothy.terminal_host_heartbeat_miss_limit')::integer
$$;

CREATE FUNCTION bothy.terminal_host_announce(host uuid, conn uuid, node uuid, present boolean)
    RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(terminal_host_announce.host, 'host'),
            bothy._need_v7(terminal_host_announce.conn, 'conn'),
            bothy._need_v7(terminal_host_announce.node, 'node'),
            bothy._need(terminal_host_announce.present, 'present');
    IF terminal_host_announce.present THEN
        -- this host's lapsed entries go with its next announcement: no sweep
        DELETE FROM bothy.terminal_host_conns c
         WHERE c.host = terminal_host_announce.host
           AND c.announced_at < now() - bothy._terminal_presence_window();
        INSERT INTO bothy.terminal_host_conns AS c (host, conn, node)
        VALUES (terminal_host_announce.host, terminal_host_announce.conn, terminal_host_announce.node)
        ON CONFLICT ON CONSTRAINT terminal_host_conns_pkey DO UPDATE SET announced_at = now();
    ELSE
        DELETE FROM bothy.terminal_host_conns c
         WHERE c.host = terminal_host_announce.host AND c.conn = terminal_host_announce.conn;
    END IF;
    PERFORM bothy._terminal_stage(
        CASE WHEN terminal_host_announce.present THEN 'terminal.host_present' ELSE 'terminal.host_gone' END,
        jsonb_build_object('host_id', terminal_host_announce.host, 'conn_id', terminal_host_announce.conn),
        true);
END
$$;
COMMENT ON FUNCTION bothy.terminal_host_announce(uuid, uuid, uuid, boolean) IS
    'a node''s control connection of a host is there (present) or gone: recorded, and signalled in multi mode';

CREATE FUNCTION bothy.terminal_host_conn_known(host uuid, conn uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT EXISTS (SELECT FROM bothy.terminal_host_conns c
                    WHERE c.host = terminal_host_conn_known.host AND c.conn = terminal_host_conn_known.conn
                      AND c.announced_at >= now() - bothy._terminal_presence_window())
$$;
COMMENT ON FUNCTION bothy.terminal_host_conn_known(uuid, uuid) IS
    'whether a node announced this control connection of the host within the presence window';
