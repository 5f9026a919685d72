-- Terminal hosts (docs/terminal.md, "Hosts"): the application
-- registers, confirms, disables and re-pairs (bothy_app); the gateways pair
-- a host service with its code and key, look hosts up, and hand down the
-- duplicate verdict (bothy_gateway).  Every transition locks the host's row
-- and is a compare-and-swap on the state it expects.

-- The fingerprint a person compares: SHA256: and the standard base64,
-- without padding, of SHA-256 over the raw 32-byte key (the form
-- ssh-keygen -l prints, over other bytes).
CREATE FUNCTION bothy.terminal_fingerprint(public_key bytea) RETURNS text
    LANGUAGE plpgsql IMMUTABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(terminal_fingerprint.public_key, 'public_key');
    IF octet_length(terminal_fingerprint.public_key) <> 32 THEN
        RAISE EXCEPTION 'public_key must be 32 bytes (a raw Ed25519 public key)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    -- 44 base64 characters: one line, so encode adds no newline
    RETURN 'SHA256:' || rtrim(encode(sha256(terminal_fingerprint.public_key), 'base64'), '=');
END
$$;
COMMENT ON FUNCTION bothy.terminal_fingerprint(bytea) IS
    'the SHA256: fingerprint of a raw Ed25519 public key, as a host service shows it';

CREATE FUNCTION bothy.terminal_host_register(owner uuid, name text, require_local_confirm boolean DEFAULT false)
    RETURNS TABLE (host uuid, pairing_code text)
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    new_host uuid := bothy.uuidv7();
    code text := bothy._terminal_pairing_code();
BEGIN
    PERFORM bothy._need(terminal_host_register.owner, 'owner'),
            bothy._need(terminal_host_register.name, 'name'),
            bothy._need(terminal_host_register.require_local_confirm, 'require_local_confirm');
    IF char_length(terminal_host_register.name) NOT BETWEEN 1 AND 100
       OR terminal_host_register.name ~ '[[:cntrl:]]' THEN
        RAISE EXCEPTION 'name must be 1 to 100 characters, none of them a control character'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    INSERT INTO bothy.terminal_hosts (host, owner, name, state, require_local_confirm, pairing_code_hash)
    VALUES (new_host, terminal_host_register.owner, terminal_host_register.name, 'pairing',
            terminal_host_register.require_local_confirm, bothy._terminal_code_hash(code));
    RETURN QUERY SELECT new_host, code;
END
$$;
COMMENT ON FUNCTION bothy.terminal_host_register(uuid, text, boolean) IS
    'register a person''s host: state pairing, and its one-time pairing code';

-- The owner confirms the fingerprint the host service shows.  A wrong one
-- is counted and answered with the state, never with an error that would
-- roll the count back; at bothy.terminal_fingerprint_max_attempts the host
-- goes back to pairing without a code (D-M2-47-13).  On a host that is not
-- confirming nothing changes and the state is the answer.
CREATE FUNCTION bothy.terminal_host_confirm(host uuid, fingerprint text) RETURNS text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    h bothy.terminal_hosts := bothy._terminal_host_lock(terminal_host_confirm.host);
BEGIN
    PERFORM bothy._need(terminal_host_confirm.fingerprint, 'fingerprint');
    IF h.state <> 'confirming' THEN
        RETURN h.state;
    END IF;
    IF terminal_host_confirm.fingerprint = bothy.terminal_fingerprint(h.public_key) THEN
        UPDATE bothy.terminal_hosts x SET state = 'active', wrong_attempts = 0, changed_at = now()
         WHERE x.host = h.host;
        PERFORM bothy._terminal_log_append(h.host, NULL, 'host_confirmed', 'active', NULL, NULL, false);
        RETURN 'active';
    END IF;
    IF h.wrong_attempts + 1 >= pg_catalog.current_setting('bothy.terminal_fingerprint_max_attempts')::integer THEN
        PERFORM bothy._terminal_host_reset(h.host, NULL, false);
        RETURN 'pairing';
    END IF;
    UPDATE bothy.terminal_hosts x SET wrong_attempts = x.wrong_attempts + 1 WHERE x.host = h.host;
    RETURN 'confirming';
END
$$;
COMMENT ON FUNCTION bothy.terminal_host_confirm(uuid, text) IS
    'the owner confirms a confirming host''s fingerprint; returns the state after the call';

CREATE FUNCTION bothy.terminal_host_disable(host uuid) RETURNS void
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    h bothy.terminal_hosts := bothy._terminal_host_lock(terminal_host_disable.host);
BEGIN
    IF h.state = 'disabled' THEN
        RETURN;
    END IF;
    UPDATE bothy.terminal_hosts x
       SET state = 'disabled', pairing_code_hash = NULL, wrong_attempts = 0, changed_at = now()
     WHERE x.host = h.host;
    PERFORM bothy._terminal_host_sessions_end(h.host, 'host_disabled', false);
    PERFORM bothy._terminal_log_append(h.host, NULL, 'host_disabled', 'disabled', NULL, NULL, false);
    PERFORM bothy._terminal_stage('terminal.host_close', jsonb_build_object('host_id', h.host), false);
END
$$;
COMMENT ON FUNCTION bothy.terminal_host_disable(uuid) IS
    'disable a host: its sessions end and its control connections close on every node';

-- Re-pairing works from every state, a disabled host's included: the owner
-- asked for it.
CREATE FUNCTION bothy.terminal_host_repair(host uuid) RETURNS text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    h bothy.terminal_hosts := bothy._terminal_host_lock(terminal_host_repair.host);
    code text := bothy._terminal_pairing_code();
BEGIN
    PERFORM bothy._terminal_host_reset(h.host, bothy._terminal_code_hash(code), false);
    RETURN code;
END
$$;
COMMENT ON FUNCTION bothy.terminal_host_repair(uuid) IS
    'put a host back to pairing with a new one-time code (its sessions end, its connections close)';

-- A host service on a control connection presents its pairing code and its
-- public key (the gateway has checked that it holds the key: the pair
-- signature).  The code is used once: on success the host is confirming
-- with that key and the code is gone.  false for a wrong code, a host that
-- is not pairing or not known alike (the connection gets 4001).
CREATE FUNCTION bothy.terminal_host_pair(host uuid, pairing_code text, public_key bytea) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(terminal_host_pair.host, 'host'),
            bothy._need(terminal_host_pair.pairing_code, 'pairing_code'),
            bothy.terminal_fingerprint(terminal_host_pair.public_key);
    UPDATE bothy.terminal_hosts h
       SET state = 'confirming', public_key = terminal_host_pair.public_key, pairing_code_hash = NULL,
           wrong_attempts = 0, changed_at = now()
     WHERE h.host = terminal_host_pair.host AND h.state = 'pairing'
       AND h.pairing_code_hash = bothy._terminal_code_hash(terminal_host_pair.pairing_code);
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM bothy._terminal_log_append(terminal_host_pair.host, NULL, 'host_paired', 'confirming',
                                       NULL, NULL, true);
    RETURN true;
END
$$;
COMMENT ON FUNCTION bothy.terminal_host_pair(uuid, text, bytea) IS
    'a host service pairs with its one-time code and public key: the host is confirming; false when refused';

-- The duplicate verdict (D-M2-47-7, 13): a second control connection of
-- the host answered the probe of the older one, so its key is in two
-- places.  The host goes back to pairing whatever its state (its sessions
-- end, every node closes its control connections with 4110; the probing
-- node closes its own with 4112), in one transaction.  A disabled host
-- stays disabled: no connection of it is accepted, and the owner's
-- decision stands.  A host in pairing already has no key to forget: a
-- late verdict leaves it as it is, so a code the owner asked for meanwhile
-- (a re-pair) still pairs.  Returns the state after the call.
CREATE FUNCTION bothy.terminal_host_duplicate(host uuid) RETURNS text
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    h bothy.terminal_hosts := bothy._terminal_host_lock(terminal_host_duplicate.host);
BEGIN
    IF h.state IN ('disabled', 'pairing') THEN
        RETURN h.state;
    END IF;
    PERFORM bothy._terminal_host_reset(h.host, NULL, true);
    RETURN 'pairing';
END
$$;
COMMENT ON FUNCTION bothy.terminal_host_duplicate(uuid) IS
    'the duplicate verdict: the host goes back to pairing and its control connections close';

-- HostStatesByIDs (D-M2-47-5): many hosts in one call, for a control
-- connection's hello (the key to verify), the reconciliation after LISTEN
-- came back and terminal.host_close.  Unknown hosts are left out.
CREATE FUNCTION bothy.terminal_host_states(hosts uuid[])
    RETURNS TABLE (host uuid, owner uuid, name text, state text, public_key bytea,
                   require_local_confirm boolean)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(terminal_host_states.hosts, 'hosts');
    RETURN QUERY
        SELECT h.host, h.owner, h.name, h.state, h.public_key, h.require_local_confirm
          FROM bothy.terminal_hosts h
         WHERE h.host = ANY (terminal_host_states.hosts)
         ORDER BY h.host;
END
$$;
COMMENT ON FUNCTION bothy.terminal_host_states(uuid[]) IS
    'owner, name, state, public key and local confirmation of each known host of the list';

-- GET /v1/terminal/hosts: a person's hosts (the gateway adds "connected").
CREATE FUNCTION bothy.terminal_hosts_of(person uuid)
    RETURNS TABLE (host uuid, name text, state text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(terminal_hosts_of.person, 'person');
    RETURN QUERY
        SELECT h.host, h.name, h.state FROM bothy.terminal_hosts h
         WHERE h.owner = terminal_hosts_of.person
         ORDER BY h.name, h.host;
END
$$;
COMMENT ON FUNCTION bothy.terminal_hosts_of(uuid) IS
    'the hosts a person owns, by name';
