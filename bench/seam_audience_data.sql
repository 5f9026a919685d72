-- bench/seam_audience_data.sql: the memberships of bench/seam_audience and
-- bench/audience_standby (one data set, so the two measure the same reads):
-- 3,000 places of 10 members, four places a node delivers to, and the
-- persons of five nodes in tables of the schema bench:
--   fan-out      10,000 members; the node's 5,000 persons are members (bench.node_fanout)
--   small place  8 members, 3 of them among the node's 5,000 persons (bench.node_small)
--   large place  200,000 members; the node's 5,000 persons are members (bench.node_large)
--   20 members   10 of them among the node's 5,000 persons, 10 on another node
--                (bench.node_twenty; issue 34's thread)
--   spread       the fan-out place again, 50 of its members among the node's
--                5,000 persons (bench.node_spread: a large audience over many nodes)
-- Each of the five nodes' persons is bound to a node of its own
-- (bothy.device_bindings, a device a binding; nodes e0000000-...-00000000000a
-- to -e, as the shapes; spread's 50 members have a second device there),
-- and three more nodes hold 5,000 each: the fan-out place's other 5,000
-- members (-1), 5,000 of the large place's others (-2), the 20- and
-- 8-member places' other members and members of the 3,000 places (-3).
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
-- the issue's thread: 20 members, 10 on the node among 4,990 others, 10 on another node
INSERT INTO bothy.places VALUES ('c0000000-0000-4000-8000-00000000000d');
INSERT INTO bothy.threads VALUES ('f0000000-0000-4000-8000-00000000000d', 'c0000000-0000-4000-8000-00000000000d');
INSERT INTO bothy.memberships SELECT 'c0000000-0000-4000-8000-00000000000d', gen_random_uuid() FROM generate_series(1, 20);
CREATE TABLE bench.node_twenty AS
    SELECT person FROM (SELECT * FROM (SELECT person FROM bothy.memberships
                                        WHERE place = 'c0000000-0000-4000-8000-00000000000d' LIMIT 10) m
                        UNION ALL SELECT gen_random_uuid() FROM generate_series(1, 4990)) s ORDER BY random();
-- spread: 50 of the fan-out place's members on a node of 5,000
CREATE TABLE bench.node_spread AS
    SELECT person FROM (SELECT * FROM (SELECT person FROM bench.node_fanout LIMIT 50) m
                        UNION ALL SELECT gen_random_uuid() FROM generate_series(1, 4950)) s ORDER BY random();
-- the bindings: each node's persons to its node, and three other nodes of 5,000
CREATE TABLE bench.bound (person uuid, node uuid);
INSERT INTO bench.bound
    SELECT person, 'e0000000-0000-4000-8000-00000000000a'::uuid FROM bench.node_fanout
    UNION ALL SELECT person, 'e0000000-0000-4000-8000-00000000000b' FROM bench.node_small
    UNION ALL SELECT person, 'e0000000-0000-4000-8000-00000000000c' FROM bench.node_large
    UNION ALL SELECT person, 'e0000000-0000-4000-8000-00000000000d' FROM bench.node_twenty
    UNION ALL SELECT person, 'e0000000-0000-4000-8000-00000000000e' FROM bench.node_spread
    UNION ALL SELECT person, 'e0000000-0000-4000-8000-000000000001' FROM bothy.memberships
               WHERE place = 'c0000000-0000-4000-8000-00000000000a'
                 AND person NOT IN (SELECT person FROM bench.node_fanout)
    UNION ALL (SELECT person, 'e0000000-0000-4000-8000-000000000002' FROM bothy.memberships
                WHERE place = 'c0000000-0000-4000-8000-00000000000c'
                  AND person NOT IN (SELECT person FROM bench.node_large) LIMIT 5000);
INSERT INTO bench.bound
    SELECT person, 'e0000000-0000-4000-8000-000000000003' FROM (
        SELECT person FROM bothy.memberships
         WHERE place IN ('c0000000-0000-4000-8000-00000000000b', 'c0000000-0000-4000-8000-00000000000d')
           AND person NOT IN (SELECT person FROM bench.bound)
        UNION ALL (SELECT m.person FROM bothy.memberships m JOIN bothy.places p USING (place)
                    WHERE p.place::text NOT LIKE 'c0000000-%' LIMIT 4985)) s;
INSERT INTO bothy.device_bindings (device, person, gateway_session, bind_id, node)
    SELECT gen_random_uuid(), person, gen_random_uuid(), gen_random_uuid(), node FROM bench.bound ORDER BY random();
