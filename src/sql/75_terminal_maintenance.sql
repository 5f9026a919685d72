-- The maintenance worker's terminal tasks (src/extension/worker_maintenance.c
-- runs them each round, each in a transaction of its own).  Their ends go
-- through the same compare-and-swap as the gateways' and are heard in every
-- mode: no node decided them.  Rows a gateway's transition holds are
-- skipped, never waited for; the next round sees them again.

-- Up to max_rows sessions ended, in one transaction:
--  - open_timeout: an opening whose grant expired one bothy.terminal_open_timeout
--    ago.  A device may use the grant until it expires and then wait that long
--    for the host as a lone side (the gateway ends it itself at that deadline);
--    past it only a gateway that went away leaves an opening behind.  On a
--    host with require_local_confirm whose grant a device used, the host may
--    be asking its person for consent, which the server cannot time
--    (D-M2-47-3): such an opening waits bothy.terminal_idle_timeout instead.
--  - host_disabled, host_pairing: a session of a host that is no longer
--    active (the host's own transition ends them; this catches any left).
--  - idle: detached for bothy.terminal_idle_timeout plus
--    bothy.terminal_idle_grace with nobody attaching.
-- Each is counted in terminal_sessions_expired{close_detail}.
CREATE FUNCTION bothy._terminal_sessions_expire(max_rows integer) RETURNS integer
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    open_timeout interval := bothy._terminal_open_timeout();
    idle interval := pg_catalog.current_setting('bothy.terminal_idle_timeout')::interval;
    grace interval := pg_catalog.current_setting('bothy.terminal_idle_grace')::interval;
    r record;
    ended integer := 0;
BEGIN
    FOR r IN
        SELECT s.session, s.grant_id, s.state,
               CASE WHEN h.state = 'disabled' THEN 'host_disabled'
                    WHEN h.state <> 'active' THEN 'host_pairing'
                    WHEN s.state = 'opening' THEN 'open_timeout'
                    ELSE 'idle' END AS detail
          FROM bothy.terminal_sessions s JOIN bothy.terminal_hosts h ON h.host = s.host
         WHERE s.state <> 'closed'
           AND (h.state <> 'active'
                OR (s.state = 'opening'
                    AND s.grant_expires_at + CASE WHEN h.require_local_confirm AND s.grant_used_at IS NOT NULL
                                                  THEN idle ELSE open_timeout END < now())
                OR (s.state = 'detached' AND s.changed_at + idle + grace < now()))
         ORDER BY s.session
         LIMIT max_rows
           FOR UPDATE OF s SKIP LOCKED
    LOOP
        -- the same compare-and-swap as a gateway's: state and grant as read
        IF bothy._terminal_session_end(r.session, ARRAY[r.state], r.detail, false, r.grant_id) THEN
            ended := ended + 1;
            PERFORM bothy._metrics_add('terminal_sessions_expired', r.detail, 1);
        END IF;
    END LOOP;
    RETURN ended;
END
$$;

-- Log rows older than bothy.terminal_log_retention go, the newest always
-- stays (so bothy.terminal_log_head never goes back); so do closed sessions
-- that old.  Returns the log rows deleted.
CREATE FUNCTION bothy._terminal_log_prune() RETURNS integer
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    cutoff timestamptz := now() - pg_catalog.current_setting('bothy.terminal_log_retention')::interval;
    deleted integer;
BEGIN
    DELETE FROM bothy.terminal_log l
     WHERE l.logged_at < cutoff
       AND l.seq < (SELECT max(n.seq) FROM bothy.terminal_log n);
    GET DIAGNOSTICS deleted = ROW_COUNT;
    DELETE FROM bothy.terminal_sessions s WHERE s.state = 'closed' AND s.changed_at < cutoff;
    PERFORM bothy._metrics_add('terminal_log_pruned', NULL, deleted);
    RETURN deleted;
END
$$;
