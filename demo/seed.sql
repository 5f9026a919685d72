-- demo/seed.sql: the demo database's extension, roles and rows, run by
-- demo/cluster as the instance's superuser at every start.  Idempotent:
-- every statement leaves what a previous run made as it was.
-- psql variables: the IDs of demo/ids and the two login passwords.
\set ON_ERROR_STOP on
SET client_min_messages = warning;

CREATE EXTENSION IF NOT EXISTS bothy;

-- The logins the processes use, each only a member of its group role
-- (docs/sql-api.md, "Privileges"): the gateways may call the gateway
-- functions and LISTEN, the driver only the application functions.
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'bothy_demo_gateway') AS need_gateway \gset
\if :need_gateway
CREATE ROLE bothy_demo_gateway LOGIN IN ROLE bothy_gateway;
\endif
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'bothy_demo_app') AS need_app \gset
\if :need_app
CREATE ROLE bothy_demo_app LOGIN IN ROLE bothy_app;
\endif
ALTER ROLE bothy_demo_gateway PASSWORD :'gateway_password';
ALTER ROLE bothy_demo_app PASSWORD :'app_password';

-- The rows, written as the application would: through its functions, as
-- its role.
SET ROLE bothy_demo_app;
SELECT bothy.place_put(:'place');
SELECT bothy.thread_put(:'thread', :'place');
SELECT bothy.membership_added(:'place', :'ada');
SELECT bothy.membership_added(:'place', :'grace');
SELECT bothy.agent_put(:'agent');
-- version 0 is stored once; the driver's versions are higher
SELECT bothy.run_changed(:'run', :'thread', :'agent', 0,
    '{"title":"Waiting for the driver","status":"queued","progress":0,"step":"Not started"}');
RESET ROLE;
