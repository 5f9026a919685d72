-- The terminal relay's state (docs/terminal.md, "The model"): hosts, their
-- sessions with the current grant, and the terminal log.  As everywhere, no
-- role has a privilege on these tables; the functions of the 7x parts are
-- the only way in.

-- A person's machine running the host service.  The pairing code is never
-- stored, only its SHA-256 while one is outstanding; the public key is the
-- raw 32-byte Ed25519 key the host presented when it paired.
CREATE TABLE bothy.terminal_hosts (
    host                  uuid PRIMARY KEY,
    owner                 uuid NOT NULL,
    name                  text NOT NULL
                          CHECK (char_length(name) BETWEEN 1 AND 100 AND name !~ '[[:cntrl:]]'),
    state                 text NOT NULL CHECK (state IN ('pairing', 'confirming', 'active', 'disabled')),
    require_local_confirm boolean NOT NULL,
    pairing_code_hash     bytea CHECK (octet_length(pairing_code_hash) = 32),
    public_key            bytea CHECK (octet_length(public_key) = 32),
    wrong_attempts        integer NOT NULL DEFAULT 0 CHECK (wrong_attempts >= 0),
    created_at            timestamptz NOT NULL DEFAULT now(),
    changed_at            timestamptz NOT NULL DEFAULT now(),
    -- a code is outstanding only while pairing, and pairing forgets the key
    CHECK (pairing_code_hash IS NULL OR state = 'pairing'),
    CHECK (state <> 'pairing' OR public_key IS NULL),
    CHECK (state NOT IN ('confirming', 'active') OR public_key IS NOT NULL)
);
CREATE INDEX terminal_hosts_owner ON bothy.terminal_hosts (owner);

-- One terminal session of a person's device on a host, with its current
-- grant: a UUIDv7 drawn at each open and attach, valid until
-- grant_expires_at, used once by a device stream (grant_used_at) and
-- started once by the host (grant_started_at).
CREATE TABLE bothy.terminal_sessions (
    session          uuid PRIMARY KEY,
    host             uuid NOT NULL REFERENCES bothy.terminal_hosts ON DELETE CASCADE,
    person           uuid NOT NULL,
    device           uuid NOT NULL,
    state            text NOT NULL CHECK (state IN ('opening', 'active', 'detached', 'closed')),
    grant_id         uuid NOT NULL,
    grant_expires_at timestamptz NOT NULL,
    grant_used_at    timestamptz,
    grant_started_at timestamptz,
    close_detail     text CHECK (close_detail IN ('closed_by_device', 'closed_by_host', 'open_timeout',
                                                  'recheck_failed', 'host_gone', 'idle',
                                                  'host_disabled', 'host_pairing')),
    opened_at        timestamptz NOT NULL DEFAULT now(),
    changed_at       timestamptz NOT NULL DEFAULT now(),
    CHECK ((state = 'closed') = (close_detail IS NOT NULL))
);
-- the sessions that still matter, per host (sweeps, session.open at login)
CREATE INDEX terminal_sessions_host ON bothy.terminal_sessions (host) WHERE state <> 'closed';
-- what the maintenance worker looks for
CREATE INDEX terminal_sessions_opening ON bothy.terminal_sessions (grant_expires_at) WHERE state = 'opening';
CREATE INDEX terminal_sessions_detached ON bothy.terminal_sessions (changed_at) WHERE state = 'detached';
CREATE INDEX terminal_sessions_closed ON bothy.terminal_sessions (changed_at) WHERE state = 'closed';

-- The terminal log: one row per transition of a session or a host, numbered
-- in commit order.  A transition inserts a pending row; a deferred trigger
-- numbers it at the commit under the lock of terminal_log_order, held until
-- the commit is visible, so a number is only ever visible after every
-- smaller one that will ever be (docs/terminal.md, "The terminal log").
-- Numbers may skip (a transaction that aborts after drawing one, a crash);
-- they never go back.
CREATE SEQUENCE bothy.terminal_log_seq AS bigint MAXVALUE 9007199254740991;

CREATE TABLE bothy.terminal_log (
    seq          bigint PRIMARY KEY CHECK (seq BETWEEN 1 AND 9007199254740991),
    host         uuid NOT NULL,
    session      uuid,
    transition   text NOT NULL CHECK (transition IN (
                     'session_opened', 'session_attached', 'session_started', 'session_detached',
                     'session_activated', 'session_closed',
                     'host_paired', 'host_confirmed', 'host_reset', 'host_disabled')),
    state        text NOT NULL,
    grant_id     uuid,
    close_detail text,
    logged_at    timestamptz NOT NULL,
    -- a session's row names the session; a host's row does not
    CHECK ((session IS NULL) = (transition LIKE 'host\_%'))
);
CREATE INDEX terminal_log_logged_at ON bothy.terminal_log (logged_at);

-- Transitions of transactions that have not committed yet.  UNLOGGED: a
-- row lives only until its own commit, which moves it to the log.
CREATE UNLOGGED TABLE bothy.terminal_log_pending (
    entry        uuid PRIMARY KEY,
    host         uuid NOT NULL,
    session      uuid,
    transition   text NOT NULL,
    state        text NOT NULL,
    grant_id     uuid,
    close_detail text,
    wake         boolean NOT NULL
);

-- No rows: its lock, taken at each commit that appends to the log, orders
-- the appends.  A table of its own, so that nothing else (autovacuum, a
-- reader) ever takes a conflicting lock on it.
CREATE TABLE bothy.terminal_log_order ();

-- pg_dump keeps the hosts, the sessions and the log (with its counter).
SELECT pg_catalog.pg_extension_config_dump('bothy.terminal_hosts', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.terminal_sessions', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.terminal_log', '');
SELECT pg_catalog.pg_extension_config_dump('bothy.terminal_log_seq', '');
