-- The channel ephemeral's key (src/extension/channel.c): new in 0.3.0, so
-- this part is in the upgrade from 0.2.0 as well (Makefile, UPGRADE_PARTS).
-- A node reads it on the connection it LISTENs on and drops every payload
-- the key did not sign (docs/signals.md, "The envelope").  Only
-- bothy_gateway may execute it (90_privileges.sql): the key lets its holder
-- speak for bothy on the channel (docs/security.md).

CREATE FUNCTION bothy.channel_key() RETURNS bytea
    LANGUAGE c VOLATILE STRICT SECURITY INVOKER
    AS 'MODULE_PATHNAME', 'bothy_channel_key';
COMMENT ON FUNCTION bothy.channel_key() IS
    'the key that signs every payload on ephemeral, drawn at each server start (bothy_gateway only)';
