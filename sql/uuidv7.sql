-- bothy.uuidv7(): RFC 9562 version 7, strictly increasing within a backend.
\set VERBOSITY terse
-- each file starts from a fresh extension (and proves DROP and CREATE work)
DROP EXTENSION bothy;
CREATE EXTENSION bothy;
CREATE FUNCTION pg_temp.ms(u uuid) RETURNS bigint LANGUAGE sql
    AS $$ SELECT ('x' || translate(substr(u::text, 1, 13), '-', ''))::bit(48)::bigint $$;
CREATE TEMP TABLE generated AS
    SELECT i, bothy.uuidv7() AS u FROM generate_series(1, 20000) i;
-- version 7 and the RFC variant on every value
SELECT count(*) FILTER (WHERE substr(u::text, 15, 1) <> '7') AS not_v7,
       count(*) FILTER (WHERE substr(u::text, 20, 1) NOT IN ('8', '9', 'a', 'b')) AS not_rfc_variant
  FROM generated;
-- strictly increasing in generation order (many share a millisecond)
SELECT bool_and(a.u < b.u) AS increasing, count(DISTINCT pg_temp.ms(a.u)) < 20000 AS shared_milliseconds
  FROM generated a JOIN generated b ON b.i = a.i + 1;
-- the timestamp is the wall clock in milliseconds
SELECT abs(pg_temp.ms(bothy.uuidv7()) - (extract(epoch FROM clock_timestamp()) * 1000)::bigint) < 5000 AS wall_clock;
-- a frozen clock (race tests only): that millisecond, still strictly increasing
SET bothy.debug_uuidv7_frozen_ms = '1900000000000';
CREATE TEMP TABLE frozen AS SELECT i, bothy.uuidv7() AS u FROM generate_series(1, 20000) i;
SELECT bool_and(pg_temp.ms(u) = 1900000000000) AS frozen_ms FROM frozen;
SELECT bool_and(a.u < b.u) AS increasing FROM frozen a JOIN frozen b ON b.i = a.i + 1;
-- the clock stepping back keeps the order
SET bothy.debug_uuidv7_frozen_ms = '1850000000000';
SELECT bothy.uuidv7() > (SELECT u FROM frozen ORDER BY u DESC LIMIT 1) AS increasing_after_step_back;
RESET bothy.debug_uuidv7_frozen_ms;
-- the frozen clock refuses anything but unix milliseconds, and needs a superuser
SET bothy.debug_uuidv7_frozen_ms = 'soon';
SET bothy.debug_uuidv7_frozen_ms = '-1';
SET bothy.debug_uuidv7_frozen_ms = '1e12';
SET bothy.debug_uuidv7_frozen_ms = '281474976710656';
CREATE ROLE bothy_regress_nobody;
SET ROLE bothy_regress_nobody;
SET bothy.debug_uuidv7_frozen_ms = '1900000000000';
RESET ROLE;
DROP ROLE bothy_regress_nobody;
