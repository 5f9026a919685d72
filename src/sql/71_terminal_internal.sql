-- Internal helpers of the terminal functions.  No role may execute them.

CREATE FUNCTION bothy._terminal_open_timeout() RETURNS interval
    LANGUAGE c STABLE STRICT SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_terminal_open_timeout';
COMMENT ON FUNCTION bothy._terminal_open_timeout() IS
    'internal: bothy.terminal_open_timeout as an interval, an error on an inconsistent configuration';

-- What a function called by a gateway stages goes out only in multi mode:
-- in single mode the one node acts on the function's result itself.  What
-- an application call or the maintenance worker decides, no node knows of
-- otherwise: it goes out in every mode (docs/terminal.md, "Signals and
-- modes").
CREATE FUNCTION bothy._terminal_heard(from_gateway boolean) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$ SELECT NOT from_gateway OR bothy._multi() $$;

-- One transition into the log, numbered when the caller's transaction
-- commits (bothy._terminal_log_number); wake says whether its number is
-- then also signalled as terminal.log.
CREATE FUNCTION bothy._terminal_log_append(host uuid, session uuid, transition text, state text,
        grant_id uuid, close_detail text, from_gateway boolean)
    RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    INSERT INTO bothy.terminal_log_pending
           (entry, host, session, transition, state, grant_id, close_detail, wake)
    VALUES (bothy.uuidv7(), _terminal_log_append.host, _terminal_log_append.session,
            _terminal_log_append.transition, _terminal_log_append.state,
            _terminal_log_append.grant_id, _terminal_log_append.close_detail,
            bothy._terminal_heard(_terminal_log_append.from_gateway));
END
$$;

-- At the commit (a deferred constraint trigger fires after the caller's
-- statements, before the commit record): take the log's lock, draw the
-- number, write the row.  The lock is held until the commit is visible to
-- every new snapshot, so the next appender draws a larger number only after
-- this row can be read: numbers become visible in order, and a reader after
-- N never misses a row that commits later with a number above N.  The lock
-- serialises the commits of transitions only from here to their end, not
-- for the caller's whole transaction.
CREATE FUNCTION bothy._terminal_log_number() RETURNS trigger
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    n bigint;
BEGIN
    LOCK TABLE bothy.terminal_log_order IN EXCLUSIVE MODE;
    n := nextval('bothy.terminal_log_seq');
    INSERT INTO bothy.terminal_log (seq, host, session, transition, state, grant_id, close_detail, logged_at)
    VALUES (n, NEW.host, NEW.session, NEW.transition, NEW.state, NEW.grant_id, NEW.close_detail,
            clock_timestamp());
    DELETE FROM bothy.terminal_log_pending p WHERE p.entry = NEW.entry;
    IF NEW.wake THEN
        PERFORM bothy.publish('terminal.log', jsonb_build_object('seq', n));
    END IF;
    RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER terminal_log_number
    AFTER INSERT ON bothy.terminal_log_pending
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION bothy._terminal_log_number();

-- Stage a terminal signal when bothy._terminal_heard says so.
CREATE FUNCTION bothy._terminal_stage(kind text, members jsonb, from_gateway boolean) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    IF bothy._terminal_heard(_terminal_stage.from_gateway) THEN
        PERFORM bothy.publish(_terminal_stage.kind, _terminal_stage.members);
    END IF;
END
$$;

-- The one end of a session: a compare-and-swap from one of the expected
-- states (and the grant, when given) to closed, and its log row.  Every end
-- goes through here, whoever decides it, so two deciders write one end.
-- Under READ COMMITTED an end that waits for another transition's row lock
-- re-checks the new row version.  Returns whether this call ended it.
CREATE FUNCTION bothy._terminal_session_end(session uuid, expected text[], close_detail text,
        from_gateway boolean, grant_id uuid DEFAULT NULL)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    ended_host uuid;
    ended_grant uuid;
BEGIN
    UPDATE bothy.terminal_sessions s
       SET state = 'closed', close_detail = _terminal_session_end.close_detail, changed_at = now()
     WHERE s.session = _terminal_session_end.session
       AND s.state = ANY (_terminal_session_end.expected)
       AND (_terminal_session_end.grant_id IS NULL OR s.grant_id = _terminal_session_end.grant_id)
    RETURNING s.host, s.grant_id INTO ended_host, ended_grant;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM bothy._terminal_log_append(ended_host, _terminal_session_end.session, 'session_closed',
                                       'closed', ended_grant, _terminal_session_end.close_detail,
                                       _terminal_session_end.from_gateway);
    RETURN true;
END
$$;

-- Every session of a host that is not closed ends with close_detail; the
-- caller holds the host's row lock.  Returns how many ended.
CREATE FUNCTION bothy._terminal_host_sessions_end(host uuid, close_detail text, from_gateway boolean)
    RETURNS integer
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    r record;
    n integer := 0;
BEGIN
    FOR r IN
        SELECT s.session FROM bothy.terminal_sessions s
         WHERE s.host = _terminal_host_sessions_end.host AND s.state <> 'closed'
         ORDER BY s.session
    LOOP
        IF bothy._terminal_session_end(r.session, ARRAY['opening', 'active', 'detached'],
                                       _terminal_host_sessions_end.close_detail,
                                       _terminal_host_sessions_end.from_gateway) THEN
            n := n + 1;
        END IF;
    END LOOP;
    RETURN n;
END
$$;

-- A one-time pairing code: 16 characters of the lower-case Crockford
-- alphabet (no i, l, o, u), 80 bits drawn from the server's strong random
-- source through gen_random_uuid().  The digest of two UUIDs has 244 random
-- bits; each character takes 5 of them (a byte modulo 32 is uniform).
CREATE FUNCTION bothy._terminal_pairing_code() RETURNS text
    LANGUAGE sql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT string_agg(substr('0123456789abcdefghjkmnpqrstvwxyz', get_byte(r.b, i) % 32 + 1, 1), ''
                      ORDER BY i)
      FROM (SELECT sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())) AS b) r,
           generate_series(0, 15) AS i
$$;

CREATE FUNCTION bothy._terminal_code_hash(code text) RETURNS bytea
    LANGUAGE sql IMMUTABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$ SELECT sha256(convert_to(code, 'UTF8')) $$;

-- A host goes back to pairing: its key and count are forgotten, its
-- sessions end (host_pairing), the transition is logged and its control
-- connections are closed on every node (terminal.host_close: they close
-- with 4110).  code_hash is the new code's, or NULL when the owner must
-- ask for one (bothy.terminal_host_repair).  The caller holds the row lock.
CREATE FUNCTION bothy._terminal_host_reset(host uuid, code_hash bytea, from_gateway boolean)
    RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    was text;
BEGIN
    SELECT h.state INTO STRICT was FROM bothy.terminal_hosts h WHERE h.host = _terminal_host_reset.host;
    UPDATE bothy.terminal_hosts h
       SET state = 'pairing', pairing_code_hash = _terminal_host_reset.code_hash, public_key = NULL,
           wrong_attempts = 0, changed_at = now()
     WHERE h.host = _terminal_host_reset.host;
    IF was = 'pairing' THEN
        RETURN;                 -- a new code only: no connection and no session to end
    END IF;
    PERFORM bothy._terminal_host_sessions_end(_terminal_host_reset.host, 'host_pairing',
                                              _terminal_host_reset.from_gateway);
    PERFORM bothy._terminal_log_append(_terminal_host_reset.host, NULL, 'host_reset', 'pairing',
                                       NULL, NULL, _terminal_host_reset.from_gateway);
    PERFORM bothy._terminal_stage('terminal.host_close',
                                  jsonb_build_object('host_id', _terminal_host_reset.host),
                                  _terminal_host_reset.from_gateway);
END
$$;

-- The host's row, locked FOR UPDATE, or an error naming an unknown host.
CREATE FUNCTION bothy._terminal_host_lock(host uuid) RETURNS bothy.terminal_hosts
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    h bothy.terminal_hosts;
BEGIN
    SELECT * INTO h FROM bothy.terminal_hosts x
     WHERE x.host = bothy._need(_terminal_host_lock.host, 'host') FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'host is unknown' USING ERRCODE = 'no_data_found';
    END IF;
    RETURN h;
END
$$;
