-- bench/seam_audience_data.sql: the memberships of bench/seam_audience and
-- bench/audience_standby (one data set, so the two measure the same reads):
-- 3,000 places of 10 members, and three places a node delivers to, each with
-- the node's persons in a table of the schema bench:
--   fan-out      10,000 members; the node's 5,000 persons are members (bench.node_fanout)
--   small place  8 members, 3 of them among the node's 5,000 persons (bench.node_small)
--   large place  200,000 members; the node's 5,000 persons are members (bench.node_large)
CREATE SCHEMA bench;
SELECT setseed(0.17);
INSERT INTO bothy.places SELECT gen_random_uuid() FROM generate_series(1, 3000);
INSERT INTO bothy.memberships SELECT place, gen_random_uuid() FROM bothy.places, generate_series(1, 10);
INSERT INTO bothy.places VALUES ('c0000000-0000-4000-8000-00000000000a'),
    ('c0000000-0000-4000-8000-00000000000b'), ('c0000000-0000-4000-8000-00000000000c');
INSERT INTO bothy.threads VALUES ('f0000000-0000-4000-8000-00000000000a', 'c0000000-0000-4000-8000-00000000000a'),
    ('f0000000-0000-4000-8000-00000000000b', 'c0000000-0000-4000-8000-00000000000b'),
    ('f0000000-0000-4000-8000-00000000000c', 'c0000000-0000-4000-8000-00000000000c');
-- the fan-out: 10,000 members, the node holds 5,000 of them
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-00000000000a', gen_random_uuid() FROM generate_series(1, 10000);
CREATE TABLE bench.node_fanout AS
    SELECT person FROM bothy.memberships WHERE place = 'c0000000-0000-4000-8000-00000000000a' ORDER BY random() LIMIT 5000;
-- a small place: 8 members, 3 of them on the node among 4,997 others
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-00000000000b', gen_random_uuid() FROM generate_series(1, 8);
CREATE TABLE bench.node_small AS
    SELECT person FROM (SELECT * FROM (SELECT person FROM bothy.memberships
                                        WHERE place = 'c0000000-0000-4000-8000-00000000000b' LIMIT 3) m
                        UNION ALL SELECT gen_random_uuid() FROM generate_series(1, 4997)) s ORDER BY random();
-- a large place: 200,000 members, the node holds 5,000 of them
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-00000000000c', gen_random_uuid() FROM generate_series(1, 200000);
CREATE TABLE bench.node_large AS
    SELECT person FROM bothy.memberships WHERE place = 'c0000000-0000-4000-8000-00000000000c' ORDER BY random() LIMIT 5000;
