-- The seam's node-shaped lookups (new in 0.3.0, so this part is in the
-- upgrade from 0.2.0 as well: Makefile, UPGRADE_PARTS).
--
-- Until 0.3.0 every node asked bothy.thread_audience about every person
-- connected to it at every delivery: a delivery cost a step per person
-- connected, member or not, on every node, for every event, so the
-- cluster's cost grew with the square of its size (docs/scaling.md).  Now
-- a node names itself and the database intersects the thread's audience
-- with the persons whose devices are bound to that node
-- (bothy.thread_audience_on), and the fan-out worker tells the nodes
-- beforehand which of them hold anyone who may see the thread
-- (bothy.thread_nodes, docs/signals.md "Reach"), so a node that holds
-- nobody of the audience makes no call at all.  The C bodies are in
-- src/extension/members_here.c.

-- The two orders the bodies read the bindings in: a node's persons, and a
-- person's nodes.  Entries only (the C bodies read the second column off
-- the entry).
CREATE INDEX IF NOT EXISTS device_bindings_node_person ON bothy.device_bindings (node, person);
CREATE INDEX IF NOT EXISTS device_bindings_person_node ON bothy.device_bindings (person, node);

CREATE OR REPLACE FUNCTION bothy._place_members_on(place uuid, node uuid) RETURNS SETOF uuid
    LANGUAGE c STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_place_members_on';
COMMENT ON FUNCTION bothy._place_members_on(uuid, uuid) IS
    'internal: the members of the place with a device bound to the node, each once (bothy.thread_audience_on by place)';

CREATE OR REPLACE FUNCTION bothy._place_nodes(place uuid) RETURNS uuid[]
    LANGUAGE c STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_place_nodes';
COMMENT ON FUNCTION bothy._place_nodes(uuid) IS
    'internal: the nodes the devices of the place''s members are bound to; NULL above 256 members, 128 nodes or without any (bothy.thread_nodes by place)';

-- The seam's defaults are C too: a SQL body around the internal functions
-- cost as much again as a small place's join (a set-returning SQL
-- function and a second SECURITY DEFINER call per delivery).
CREATE OR REPLACE FUNCTION bothy.thread_audience_on(thread uuid, node uuid) RETURNS SETOF uuid
    LANGUAGE c STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_thread_audience_on';
COMMENT ON FUNCTION bothy.thread_audience_on(uuid, uuid) IS
    'seam: of the persons with a device bound to the node, those who may see the thread';

CREATE OR REPLACE FUNCTION bothy.thread_nodes(thread uuid) RETURNS uuid[]
    LANGUAGE c STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_thread_nodes';
COMMENT ON FUNCTION bothy.thread_nodes(uuid) IS
    'seam: the nodes holding a person who may see the thread; NULL when it cannot say (every node asks)';
