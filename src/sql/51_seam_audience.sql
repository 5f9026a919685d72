-- The seam's audience of a thread (see 50_seam.sql): changed in 0.3.0, so
-- this part is in the upgrade from 0.2.0 as well (Makefile, UPGRADE_PARTS).
--
-- Its plan must not depend on the planner having seen the tables: a
-- gateway asks about all persons connected to it (thousands) at every
-- delivery, on a new installation with no statistics as much as on an
-- analyzed one.  A body of the form "m.person = ANY (persons)" leaves the
-- planner a plan that scans the place's members and tests each against the
-- whole array, one by one (the array is a parameter, never hashed, and
-- estimated at 10 elements): 5,110 members asked about 5,110 persons took
-- 40 to 100 ms without statistics, and as long with statistics from before
-- the place grew, against 4 to 5 ms once analyzed.  So the persons are
-- iterated, each once (DISTINCT), and each is probed in an index of
-- memberships: the EXISTS with OFFSET 0 cannot become a join or a hashed
-- subplan, and without sequential scans the probe is an index lookup
-- whatever size the planner believes the table has.  Its cost is one probe
-- per person asked, with or without statistics, whatever the place's size.
CREATE OR REPLACE FUNCTION bothy.thread_audience(thread uuid, persons uuid[]) RETURNS SETOF uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    SET enable_seqscan = off
    AS $$
    SELECT p.person
      FROM (SELECT DISTINCT u.person FROM unnest(thread_audience.persons) AS u(person)) AS p
     WHERE EXISTS (SELECT FROM bothy.memberships m
                    WHERE m.place = (SELECT t.place FROM bothy.threads t
                                      WHERE t.thread = thread_audience.thread)
                      AND m.person = p.person
                   OFFSET 0)
$$;
COMMENT ON FUNCTION bothy.thread_audience(uuid, uuid[]) IS
    'seam: of the given persons, those who may see the thread';
