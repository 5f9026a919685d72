-- The two group roles an operator grants to logins.  Roles are cluster-wide
-- and outlive the extension, so they are created only when missing.
DO $roles$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'bothy_gateway') THEN
        CREATE ROLE bothy_gateway NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'bothy_app') THEN
        CREATE ROLE bothy_app NOLOGIN;
    END IF;
END
$roles$;

COMMENT ON SCHEMA bothy IS 'bothy: shared state of the gateway nodes; use the functions, never the tables';
