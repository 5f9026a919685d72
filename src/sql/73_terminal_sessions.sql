-- Terminal sessions and their grants, for the gateways (bothy_gateway).
-- Every transition is one function and a compare-and-swap on the state it
-- expects (and on the grant a relay holds), so two nodes deciding the same
-- transition write it once (D-M2-47-14); each appends to the terminal log
-- in the same transaction.  The tables are locked host first, then
-- session, everywhere, so no two transitions deadlock.  Callers run them
-- under READ COMMITTED (the default): a compare-and-swap that waits for
-- another transition's row lock then re-checks the row it committed.

-- Open (POST /v1/terminal/sessions): a person's device on a host the
-- person owns, the host active.  The host's row is locked FOR SHARE, so a
-- disable in flight makes the open wait and then refuse, and an open in
-- flight makes the disable wait and then end the new session.  Stages
-- terminal.session_open in this transaction (D-M2-47-27); the node then
-- rechecks after the commit (bothy.terminal_session_recheck).  outcome is
-- opened, forbidden (an unknown host or another person's: the same answer)
-- or host_unavailable (the host is not active); the other columns are
-- NULL unless opened.
CREATE FUNCTION bothy.terminal_session_open(person uuid, device uuid, host uuid)
    RETURNS TABLE (outcome text, session uuid, grant_id uuid, grant_expires_at timestamptz)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    h record;
    new_session uuid;
    new_grant uuid;
    expires timestamptz;
BEGIN
    PERFORM bothy._need(terminal_session_open.person, 'person'),
            bothy._need(terminal_session_open.device, 'device'),
            bothy._need(terminal_session_open.host, 'host');
    -- first: no session is opened on settings the gateways would refuse
    expires := now() + bothy._terminal_open_timeout();
    SELECT x.owner, x.state INTO h FROM bothy.terminal_hosts x
     WHERE x.host = terminal_session_open.host FOR SHARE;
    IF NOT FOUND OR h.owner <> terminal_session_open.person THEN
        RETURN QUERY SELECT 'forbidden'::text, NULL::uuid, NULL::uuid, NULL::timestamptz;
        RETURN;
    END IF;
    IF h.state <> 'active' THEN
        RETURN QUERY SELECT 'host_unavailable'::text, NULL::uuid, NULL::uuid, NULL::timestamptz;
        RETURN;
    END IF;
    new_session := bothy.uuidv7();
    new_grant := bothy.uuidv7();
    INSERT INTO bothy.terminal_sessions AS s
           (session, host, person, device, state, grant_id, grant_expires_at)
    VALUES (new_session, terminal_session_open.host, terminal_session_open.person,
            terminal_session_open.device, 'opening', new_grant, expires);
    PERFORM bothy._terminal_log_append(terminal_session_open.host, new_session, 'session_opened',
                                       'opening', new_grant, NULL, true),
            bothy._terminal_stage('terminal.session_open',
                                  jsonb_build_object('host_id', terminal_session_open.host,
                                                     'session_id', new_session), true);
    RETURN QUERY SELECT 'opened'::text, new_session, new_grant, expires;
END
$$;
COMMENT ON FUNCTION bothy.terminal_session_open(uuid, uuid, uuid) IS
    'open a terminal session on a host the person owns: outcome, session, grant and its expiry';

-- Attach (POST /v1/terminal/sessions/<id>/attach): a fresh grant for a
-- detached session of the person, from the device given (it may be
-- another of the person's devices).  The session stays detached until the
-- host starts the new grant.  outcome is attached, forbidden (unknown or
-- another person's session), host_unavailable or not_detached.
CREATE FUNCTION bothy.terminal_session_attach(person uuid, device uuid, session uuid)
    RETURNS TABLE (outcome text, host uuid, grant_id uuid, grant_expires_at timestamptz)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    owned record;
    host_state text;
    new_grant uuid := bothy.uuidv7();
    expires timestamptz;
BEGIN
    PERFORM bothy._need(terminal_session_attach.person, 'person'),
            bothy._need(terminal_session_attach.device, 'device'),
            bothy._need(terminal_session_attach.session, 'session');
    expires := now() + bothy._terminal_open_timeout();
    SELECT s.host, s.person INTO owned FROM bothy.terminal_sessions s
     WHERE s.session = terminal_session_attach.session;
    IF NOT FOUND OR owned.person <> terminal_session_attach.person THEN
        RETURN QUERY SELECT 'forbidden'::text, NULL::uuid, NULL::uuid, NULL::timestamptz;
        RETURN;
    END IF;
    SELECT x.state INTO host_state FROM bothy.terminal_hosts x WHERE x.host = owned.host FOR SHARE;
    IF host_state <> 'active' THEN
        RETURN QUERY SELECT 'host_unavailable'::text, NULL::uuid, NULL::uuid, NULL::timestamptz;
        RETURN;
    END IF;
    UPDATE bothy.terminal_sessions s
       SET grant_id = new_grant, grant_expires_at = expires, grant_used_at = NULL,
           grant_started_at = NULL, device = terminal_session_attach.device, changed_at = now()
     WHERE s.session = terminal_session_attach.session AND s.state = 'detached';
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'not_detached'::text, NULL::uuid, NULL::uuid, NULL::timestamptz;
        RETURN;
    END IF;
    PERFORM bothy._terminal_log_append(owned.host, terminal_session_attach.session, 'session_attached',
                                       'detached', new_grant, NULL, true),
            bothy._terminal_stage('terminal.session_open',
                                  jsonb_build_object('host_id', owned.host,
                                                     'session_id', terminal_session_attach.session), true);
    RETURN QUERY SELECT 'attached'::text, owned.host, new_grant, expires;
END
$$;
COMMENT ON FUNCTION bothy.terminal_session_attach(uuid, uuid, uuid) IS
    'a fresh grant for a detached session of the person: outcome, host, grant and its expiry';

-- The recheck after an open or attach committed (D-M2-47-27, D-M2-44-8):
-- true while the session is not closed, still holds this grant, its host is
-- active and (host_connected, the node's own view) connected.  Otherwise
-- false, and a session that still holds this grant ends with
-- recheck_failed in this transaction; a newer grant is left alone.
CREATE FUNCTION bothy.terminal_session_recheck(session uuid, grant_id uuid, host_connected boolean)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    r record;
BEGIN
    PERFORM bothy._need(terminal_session_recheck.session, 'session'),
            bothy._need(terminal_session_recheck.grant_id, 'grant_id'),
            bothy._need(terminal_session_recheck.host_connected, 'host_connected');
    SELECT s.state, s.grant_id, h.state AS host_state INTO r
      FROM bothy.terminal_sessions s JOIN bothy.terminal_hosts h ON h.host = s.host
     WHERE s.session = terminal_session_recheck.session;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'session is unknown' USING ERRCODE = 'no_data_found';
    END IF;
    IF r.state = 'closed' OR r.grant_id <> terminal_session_recheck.grant_id THEN
        RETURN false;
    END IF;
    IF r.host_state = 'active' AND terminal_session_recheck.host_connected THEN
        RETURN true;
    END IF;
    PERFORM bothy._terminal_session_end(terminal_session_recheck.session,
                                        ARRAY['opening', 'active', 'detached'], 'recheck_failed', true,
                                        terminal_session_recheck.grant_id);
    RETURN false;
END
$$;
COMMENT ON FUNCTION bothy.terminal_session_recheck(uuid, uuid, boolean) IS
    'the recheck after an open or attach committed; a failed one ends the session (recheck_failed)';

-- The single use of a terminal session token: its grant (the jti) is used
-- by the first device stream that presents it, while the session is not
-- closed and the grant has not expired (the expiry inclusive).  Active
-- too: a host service starts the grant (session.started) as soon as its
-- shell runs, which is before the device, who waits for the REST answer,
-- reaches its stream; the unused grant is still that device's to use.
-- A second stream with the same token gets false (4001), the first is
-- untouched.
CREATE FUNCTION bothy.terminal_grant_use(session uuid, grant_id uuid) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(terminal_grant_use.session, 'session'),
            bothy._need(terminal_grant_use.grant_id, 'grant_id');
    UPDATE bothy.terminal_sessions s SET grant_used_at = now()
     WHERE s.session = terminal_grant_use.session AND s.grant_id = terminal_grant_use.grant_id
       AND s.grant_used_at IS NULL AND s.state IN ('opening', 'active', 'detached')
       AND s.grant_expires_at >= now();
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION bothy.terminal_grant_use(uuid, uuid) IS
    'use a session token''s grant once; false when used before, expired, or not the current grant';

-- RelayExpectation (D-M2-47-21): the current grant of a session that is
-- not closed, so a side that reaches its node before terminal.session_open
-- still finds what to expect.  No row for a closed or unknown session.
CREATE FUNCTION bothy.terminal_relay_expectation(session uuid)
    RETURNS TABLE (host uuid, person uuid, device uuid, grant_id uuid, grant_expires_at timestamptz,
                   state text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(terminal_relay_expectation.session, 'session');
    RETURN QUERY
        SELECT s.host, s.person, s.device, s.grant_id, s.grant_expires_at, s.state
          FROM bothy.terminal_sessions s
         WHERE s.session = terminal_relay_expectation.session AND s.state <> 'closed';
END
$$;
COMMENT ON FUNCTION bothy.terminal_relay_expectation(uuid) IS
    'host, person, device, current grant and state of a session that is not closed';

-- The sessions of a host that are not closed: the node of a control
-- connection sends session.open for each at login (D-M2-47-12).
CREATE FUNCTION bothy.terminal_host_sessions(host uuid)
    RETURNS TABLE (session uuid, person uuid, device uuid, grant_id uuid, grant_expires_at timestamptz,
                   state text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(terminal_host_sessions.host, 'host');
    RETURN QUERY
        SELECT s.session, s.person, s.device, s.grant_id, s.grant_expires_at, s.state
          FROM bothy.terminal_sessions s
         WHERE s.host = terminal_host_sessions.host AND s.state <> 'closed'
         ORDER BY s.session;
END
$$;
COMMENT ON FUNCTION bothy.terminal_host_sessions(uuid) IS
    'the sessions of a host that are not closed, with their current grants';

-- A transition of the current grant from one state to another; whether
-- this call made it.
CREATE FUNCTION bothy._terminal_session_move(session uuid, grant_id uuid, expected text[], target text,
        transition text)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    moved_host uuid;
BEGIN
    PERFORM bothy._need(_terminal_session_move.session, 'session'),
            bothy._need(_terminal_session_move.grant_id, 'grant_id');
    UPDATE bothy.terminal_sessions s
       SET state = _terminal_session_move.target, changed_at = now(),
           grant_started_at = CASE WHEN _terminal_session_move.transition = 'session_started'
                                   THEN now() ELSE s.grant_started_at END
     WHERE s.session = _terminal_session_move.session AND s.grant_id = _terminal_session_move.grant_id
       AND s.state = ANY (_terminal_session_move.expected)
       -- the host starts a grant once; a relay re-activates only a started one
       AND CASE _terminal_session_move.transition
               WHEN 'session_started' THEN s.grant_started_at IS NULL
               WHEN 'session_activated' THEN s.grant_started_at IS NOT NULL
               ELSE true END
    RETURNING s.host INTO moved_host;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM bothy._terminal_log_append(moved_host, _terminal_session_move.session,
                                       _terminal_session_move.transition, _terminal_session_move.target,
                                       _terminal_session_move.grant_id, NULL, true);
    RETURN true;
END
$$;

-- The host said session.started for this grant: opening -> active, or,
-- for the grant of an attach, detached -> active.  Once per grant.
CREATE FUNCTION bothy.terminal_session_started(session uuid, grant_id uuid) RETURNS boolean
    LANGUAGE sql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT bothy._terminal_session_move(session, grant_id, ARRAY['opening', 'detached'], 'active',
                                        'session_started')
$$;
COMMENT ON FUNCTION bothy.terminal_session_started(uuid, uuid) IS
    'the host started the grant: opening (or detached, after an attach) -> active, once per grant';

-- The device left a paired session: active -> detached.
CREATE FUNCTION bothy.terminal_session_detach(session uuid, grant_id uuid) RETURNS boolean
    LANGUAGE sql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT bothy._terminal_session_move(session, grant_id, ARRAY['active'], 'detached', 'session_detached')
$$;
COMMENT ON FUNCTION bothy.terminal_session_detach(uuid, uuid) IS
    'the device left: active -> detached';

-- RelayActivate (D-M2-47-25): a session another node detached while this
-- node's relay of its started grant stays paired: detached -> active.  It
-- changes only a detached row of a started grant.
CREATE FUNCTION bothy.terminal_session_activate(session uuid, grant_id uuid) RETURNS boolean
    LANGUAGE sql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT bothy._terminal_session_move(session, grant_id, ARRAY['detached'], 'active', 'session_activated')
$$;
COMMENT ON FUNCTION bothy.terminal_session_activate(uuid, uuid) IS
    'a relay still paired re-activates a detached session of its started grant: detached -> active';

-- The end at open_timeout (D-M2-47-14, RelayOpeningTimedOut): a
-- compare-and-swap on opening with this grant, so two nodes (or a node and
-- the maintenance worker) deciding it write one end.
CREATE FUNCTION bothy.terminal_session_open_timeout(session uuid, grant_id uuid) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(terminal_session_open_timeout.session, 'session'),
            bothy._need(terminal_session_open_timeout.grant_id, 'grant_id');
    RETURN bothy._terminal_session_end(terminal_session_open_timeout.session, ARRAY['opening'],
                                       'open_timeout', true, terminal_session_open_timeout.grant_id);
END
$$;
COMMENT ON FUNCTION bothy.terminal_session_open_timeout(uuid, uuid) IS
    'end an opening of this grant with open_timeout; false when it was no longer opening';

-- The other ends a gateway decides: closed_by_device, closed_by_host,
-- host_gone, idle; from the state expected, or from any state but closed.
CREATE FUNCTION bothy.terminal_session_end(session uuid, close_detail text, expected text DEFAULT NULL)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(terminal_session_end.session, 'session'),
            bothy._need_code(terminal_session_end.close_detail, 'close_detail',
                             ARRAY['closed_by_device', 'closed_by_host', 'host_gone', 'idle']);
    IF terminal_session_end.expected IS NOT NULL THEN
        PERFORM bothy._need_code(terminal_session_end.expected, 'expected',
                                 ARRAY['opening', 'active', 'detached']);
    END IF;
    RETURN bothy._terminal_session_end(terminal_session_end.session,
                                       CASE WHEN terminal_session_end.expected IS NULL
                                            THEN ARRAY['opening', 'active', 'detached']
                                            ELSE ARRAY[terminal_session_end.expected] END,
                                       terminal_session_end.close_detail, true);
END
$$;
COMMENT ON FUNCTION bothy.terminal_session_end(uuid, text, text) IS
    'end a session with a close detail a gateway decides; false when it was closed (or not as expected)';

-- DELETE /v1/terminal/sessions/<id>: the person ends their session
-- (closed_by_device).  outcome is closed, already_closed or forbidden
-- (unknown or another person's session).
CREATE FUNCTION bothy.terminal_session_close(person uuid, session uuid) RETURNS text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    owner uuid;
BEGIN
    PERFORM bothy._need(terminal_session_close.person, 'person'),
            bothy._need(terminal_session_close.session, 'session');
    SELECT s.person INTO owner FROM bothy.terminal_sessions s WHERE s.session = terminal_session_close.session;
    IF NOT FOUND OR owner <> terminal_session_close.person THEN
        RETURN 'forbidden';
    END IF;
    IF bothy._terminal_session_end(terminal_session_close.session, ARRAY['opening', 'active', 'detached'],
                                   'closed_by_device', true) THEN
        RETURN 'closed';
    END IF;
    RETURN 'already_closed';
END
$$;
COMMENT ON FUNCTION bothy.terminal_session_close(uuid, uuid) IS
    'the person ends their session: closed, already_closed or forbidden';
