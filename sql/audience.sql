-- The seam's default audience: bothy._place_members_among (C) against the
-- plain definition (the distinct persons given who are members of the
-- place), on places of many sizes, persons sorted or not, with duplicates,
-- NULLs, non-members and dead row versions.  The walk of the index and its
-- hand-over to probes (src/extension/members_sql.c) both run, and the
-- index scans counted show which ran: a walk visiting more than 10 entries
-- per person decided (after 64) hands over, and each probe is one more
-- scan.
\set VERBOSITY terse
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
SELECT setseed(0.47);
CREATE TEMP TABLE people AS
    SELECT i, md5(i::text || 'person')::uuid AS person FROM generate_series(1, 6000) i;
-- place 1: 3,000 members (persons 1..3000); place 2: 5 members; place 3:
-- 2,000 members (persons 2001..4000) in the same index around them
INSERT INTO bothy.places VALUES ('c0000000-0000-4000-8000-000000000001'),
    ('c0000000-0000-4000-8000-000000000002'), ('c0000000-0000-4000-8000-000000000003');
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-000000000001', person FROM people WHERE i <= 3000;
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-000000000002', person FROM people WHERE i IN (7, 700, 2999, 4000, 5999);
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-000000000003', person FROM people WHERE i BETWEEN 2001 AND 4000;
-- compares one call with the plain definition; prints the sizes
CREATE FUNCTION pg_temp.check_members(place uuid, persons uuid[]) RETURNS TABLE (asked int, found bigint, same boolean)
LANGUAGE sql AS $$
    SELECT cardinality(persons),
           (SELECT count(*) FROM bothy._place_members_among(place, persons)),
           (SELECT array_agg(p ORDER BY p) FROM bothy._place_members_among(place, persons) p)
             IS NOT DISTINCT FROM
           (SELECT array_agg(DISTINCT u ORDER BY u) FROM unnest(persons) u
             WHERE EXISTS (SELECT FROM bothy.memberships m WHERE m.place = check_members.place AND m.person = u))
$$;
-- every member asked, sorted (the gateway's order): the walk alone
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000001',
    ARRAY(SELECT person FROM people WHERE i <= 3000 ORDER BY person));
-- every person asked, in no order: half are members
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000001',
    ARRAY(SELECT person FROM people ORDER BY random()));
-- a part of 1,000 in a range of the sorted persons, as a gateway sends it
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000001',
    ARRAY(SELECT person FROM people ORDER BY person OFFSET 2000 LIMIT 1000));
-- 1,000 at random among 3,000 members, with duplicates and NULLs
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000001',
    ARRAY(SELECT person FROM people WHERE i <= 3000 ORDER BY random() LIMIT 1000)
    || ARRAY(SELECT person FROM people WHERE i <= 3000 ORDER BY random() LIMIT 100)
    || ARRAY[NULL, NULL]::uuid[]);
-- 20 persons spread over 3,000 members: the walk hands over to probes
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000001',
    ARRAY(SELECT person FROM people WHERE i % 300 = 0 ORDER BY person));
-- which ran, counted in the index's scans of this transaction: one scan for
-- a walk alone, one more per person probed after a hand-over
BEGIN;
SELECT pg_stat_get_xact_numscans('bothy.memberships_pkey'::regclass) AS scans \gset
SELECT count(*) AS walked FROM bothy._place_members_among('c0000000-0000-4000-8000-000000000001',
    ARRAY(SELECT person FROM people WHERE i <= 3000));
SELECT pg_stat_get_xact_numscans('bothy.memberships_pkey'::regclass) - :scans AS walk_scans;
SELECT pg_stat_get_xact_numscans('bothy.memberships_pkey'::regclass) AS scans \gset
SELECT count(*) AS probed FROM bothy._place_members_among('c0000000-0000-4000-8000-000000000001',
    ARRAY(SELECT person FROM people WHERE i % 300 = 0));
SELECT pg_stat_get_xact_numscans('bothy.memberships_pkey'::regclass) - :scans AS handover_scans;
COMMIT;
-- the same 20 and 20 who are not members, in no order
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000001',
    ARRAY(SELECT person FROM people WHERE i % 300 = 0 ORDER BY random())
    || ARRAY(SELECT md5(i::text || 'stranger')::uuid FROM generate_series(1, 20) i));
-- a small place asked about 6,000 persons: a step per member
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000002',
    ARRAY(SELECT person FROM people ORDER BY person));
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000002',
    ARRAY(SELECT person FROM people ORDER BY random()));
-- a place whose members sit between other places' entries
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000003',
    ARRAY(SELECT person FROM people WHERE i % 3 = 0 ORDER BY person));
-- nobody: no member among them, an empty array, NULLs only, a place with no members
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000002',
    ARRAY(SELECT md5(i::text || 'stranger')::uuid FROM generate_series(1, 50) i));
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000001', '{}');
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000001', '{NULL,NULL}');
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-00000000ffff',
    ARRAY(SELECT person FROM people WHERE i <= 10));
SELECT count(*) AS null_place FROM bothy._place_members_among(NULL, ARRAY(SELECT person FROM people WHERE i <= 10));
SELECT count(*) AS null_persons FROM bothy._place_members_among('c0000000-0000-4000-8000-000000000001', NULL);
-- a two-dimensional array is read as its elements, as unnest reads it
SELECT count(*) AS two_dimensions FROM bothy._place_members_among('c0000000-0000-4000-8000-000000000001',
    ARRAY[ARRAY[(SELECT person FROM people WHERE i = 1)], ARRAY[(SELECT person FROM people WHERE i = 2)]]);
-- dead versions in the index: members removed, and removed and added again
-- (no vacuum between: the index keeps the dead entries beside the live ones)
DELETE FROM bothy.memberships WHERE place = 'c0000000-0000-4000-8000-000000000001'
    AND person IN (SELECT person FROM people WHERE i % 10 = 0 AND i <= 3000);
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-000000000001', person FROM people WHERE i % 20 = 0 AND i <= 3000;
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000001',
    ARRAY(SELECT person FROM people WHERE i <= 3000 ORDER BY person));
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000001',
    ARRAY(SELECT person FROM people WHERE i % 10 = 0 ORDER BY person));
-- the snapshot of the statement: a change of this transaction is seen
BEGIN;
DELETE FROM bothy.memberships WHERE place = 'c0000000-0000-4000-8000-000000000002';
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-000000000002', person FROM people WHERE i IN (1, 2);
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000002',
    ARRAY(SELECT person FROM people ORDER BY person));
ROLLBACK;
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000002',
    ARRAY(SELECT person FROM people ORDER BY person));
-- a member removed and added again in this transaction: the index holds
-- the removed version's entry (not dead to all yet) before the new one's,
-- under the same key; the walk steps over the first and finds the second
BEGIN;
DELETE FROM bothy.memberships WHERE place = 'c0000000-0000-4000-8000-000000000002'
    AND person = (SELECT person FROM people WHERE i = 7);
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-000000000002', person FROM people WHERE i = 7;
SELECT * FROM pg_temp.check_members('c0000000-0000-4000-8000-000000000002',
    ARRAY(SELECT person FROM people ORDER BY person));
ROLLBACK;
-- the seam over it: a thread's place
INSERT INTO bothy.threads VALUES ('f0000000-0000-4000-8000-000000000001', 'c0000000-0000-4000-8000-000000000002');
SELECT count(*) AS thread_audience FROM bothy.thread_audience('f0000000-0000-4000-8000-000000000001',
    ARRAY(SELECT person FROM people));
SELECT count(*) AS unknown_thread FROM bothy.thread_audience('f0000000-0000-4000-8000-00000000ffff',
    ARRAY(SELECT person FROM people));
