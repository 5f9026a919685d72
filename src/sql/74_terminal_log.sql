-- Reading the terminal log (bothy_gateway): every node tails it, after a
-- terminal.log wake-up and every bothy.terminal_log_poll_interval, from the
-- last number it has seen.  Numbers are in commit order and a number is
-- visible only after every smaller one (bothy._terminal_log_number), so a
-- reader that asks for the rows after its last number never misses one.

CREATE FUNCTION bothy.terminal_log_after(after bigint, max_rows integer DEFAULT 100)
    RETURNS TABLE (seq bigint, host uuid, session uuid, transition text, state text, grant_id uuid,
                   close_detail text, logged_at timestamptz)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(terminal_log_after.after, 'after'),
            bothy._need(terminal_log_after.max_rows, 'max_rows');
    IF terminal_log_after.after NOT BETWEEN 0 AND 9007199254740991 THEN
        RAISE EXCEPTION 'after must be between 0 and 9007199254740991'
            USING ERRCODE = 'numeric_value_out_of_range';
    END IF;
    IF terminal_log_after.max_rows NOT BETWEEN 1 AND 1000 THEN
        RAISE EXCEPTION 'max_rows must be between 1 and 1000' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN QUERY
        SELECT l.seq, l.host, l.session, l.transition, l.state, l.grant_id, l.close_detail, l.logged_at
          FROM bothy.terminal_log l
         WHERE l.seq > terminal_log_after.after
         ORDER BY l.seq
         LIMIT terminal_log_after.max_rows;
END
$$;
COMMENT ON FUNCTION bothy.terminal_log_after(bigint, integer) IS
    'the terminal log rows after a number, in commit order (at most max_rows)';

-- Where a node starts tailing: the newest number visible now (0 for an
-- empty log).  Every row at or below it is visible already.
CREATE FUNCTION bothy.terminal_log_head() RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$ SELECT coalesce(max(l.seq), 0) FROM bothy.terminal_log l $$;
COMMENT ON FUNCTION bothy.terminal_log_head() IS
    'the newest terminal log number, where a node starts reading';
