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
