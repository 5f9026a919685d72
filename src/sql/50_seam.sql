-- The seam to the rest of the product: lookups the gateway asks.  Their
-- default bodies read the extension's minimal tables; an operator with a
-- schema of their own replaces them with CREATE OR REPLACE FUNCTION, keeping
-- the signature, SECURITY DEFINER and the pinned search_path.
-- bothy.thread_audience is in 51_seam_audience.sql (changed in 0.3.0, so
-- the upgrade replaces it too).

CREATE FUNCTION bothy.thread_place(thread uuid) RETURNS uuid
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$ SELECT t.place FROM bothy.threads t WHERE t.thread = thread_place.thread $$;
COMMENT ON FUNCTION bothy.thread_place(uuid) IS
    'seam: the place a thread is in (NULL for an unknown thread)';

CREATE FUNCTION bothy.run_document(run uuid) RETURNS jsonb
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
    SELECT r.document || jsonb_build_object('run', r.run, 'thread', r.thread,
                                            'agent', r.agent, 'version', r.version)
      FROM bothy.runs r WHERE r.run = run_document.run
$$;
COMMENT ON FUNCTION bothy.run_document(uuid) IS
    'seam: the run document a run.updated snapshot carries (NULL for an unknown run)';

CREATE FUNCTION bothy.agent_known(agent uuid) RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$ SELECT EXISTS (SELECT FROM bothy.agents a WHERE a.agent = agent_known.agent) $$;
COMMENT ON FUNCTION bothy.agent_known(uuid) IS
    'seam: whether an agent exists';
