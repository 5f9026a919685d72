-- The seam's audience of a thread (see 50_seam.sql): changed in 0.3.0, so
-- this part is in the upgrade from 0.2.0 as well (Makefile, UPGRADE_PARTS).
--
-- A gateway asks it about all persons connected to it (thousands) at every
-- delivery, in parts of at most 1,000, sorted (docs/gateway.md,
-- "Cross-node delivery"); its cost is most of what the database spends on
-- a fan-out.  Its plan must not depend on the planner having seen the
-- tables: the 0.2.0 body ("m.person = ANY (persons)") let the planner test
-- each member of the place against the whole array on a database without
-- statistics, 40 to 100 ms for 5,110 persons instead of 4 to 5 ms.  So the
-- body has no plan to choose: bothy._place_members_among
-- (src/extension/members_sql.c) walks the place's entries of the
-- memberships' primary key alongside the sorted persons, or probes it once
-- per person when the place is much larger than the persons asked.  An
-- SQL body that probed once per person through the executor cost about
-- 3.4 us a person of a gateway's sorted part, the walk about 0.4
-- (docs/performance.md, "The audience in the database").

CREATE FUNCTION bothy._place_members_among(place uuid, persons uuid[]) RETURNS SETOF uuid
    LANGUAGE c STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS 'MODULE_PATHNAME', 'bothy_place_members_among';
COMMENT ON FUNCTION bothy._place_members_among(uuid, uuid[]) IS
    'internal: of the given persons, the members of the place, each once (the default body of bothy.thread_audience)';

CREATE OR REPLACE FUNCTION bothy.thread_audience(thread uuid, persons uuid[]) RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT bothy._place_members_among(
               (SELECT t.place FROM bothy.threads t WHERE t.thread = thread_audience.thread),
               thread_audience.persons)
$$;
COMMENT ON FUNCTION bothy.thread_audience(uuid, uuid[]) IS
    'seam: of the given persons, those who may see the thread';
