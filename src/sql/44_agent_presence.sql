-- Agent presence across nodes (D-M7-17-10).

-- Store an agent's heartbeat as seen by a node, monotonically: a heartbeat
-- older than the stored one (of any node) changes nothing.  A heartbeat time
-- ahead of the database clock is stored as now, so one node's fast clock
-- cannot keep an agent online past its timeout.  Returns whether it was
-- stored.
CREATE FUNCTION bothy.agent_heartbeat_persist(agent uuid, node uuid, heartbeat_at timestamptz,
        state text, billing_mode text DEFAULT NULL, actor uuid DEFAULT NULL)
    RETURNS boolean
    LANGUAGE plpgsql VOLATILE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
DECLARE
    stored boolean;
BEGIN
    PERFORM bothy._need(agent_heartbeat_persist.agent, 'agent'),
            bothy._need_v7(agent_heartbeat_persist.node, 'node'),
            bothy._need(agent_heartbeat_persist.heartbeat_at, 'heartbeat_at'),
            bothy._need_code(agent_heartbeat_persist.state, 'state', ARRAY['online', 'busy', 'offline']);
    IF agent_heartbeat_persist.billing_mode IS NOT NULL THEN
        PERFORM bothy._need_code(agent_heartbeat_persist.billing_mode, 'billing_mode',
                                 ARRAY['free', 'included', 'metered']);
    END IF;
    INSERT INTO bothy.agent_presence AS a (agent, node, heartbeat_at, state, billing_mode, actor)
    VALUES (agent_heartbeat_persist.agent, agent_heartbeat_persist.node,
            least(agent_heartbeat_persist.heartbeat_at, now()), agent_heartbeat_persist.state,
            agent_heartbeat_persist.billing_mode, agent_heartbeat_persist.actor)
    ON CONFLICT ON CONSTRAINT agent_presence_pkey DO UPDATE
        SET node = excluded.node, heartbeat_at = excluded.heartbeat_at, state = excluded.state,
            billing_mode = excluded.billing_mode, actor = excluded.actor
        WHERE a.heartbeat_at < excluded.heartbeat_at
    RETURNING true INTO stored;
    RETURN coalesce(stored, false);
END
$$;
COMMENT ON FUNCTION bothy.agent_heartbeat_persist(uuid, uuid, timestamptz, text, text, uuid) IS
    'store an agent heartbeat if it is newer than the stored one; returns whether it was stored';

CREATE FUNCTION bothy.agent_status(agents uuid[])
    RETURNS TABLE (agent uuid, node uuid, heartbeat_at timestamptz, state text,
                   billing_mode text, actor uuid)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = pg_catalog, pg_temp
    AS $$
BEGIN
    PERFORM bothy._need(agent_status.agents, 'agents');
    RETURN QUERY
        SELECT a.agent, a.node, a.heartbeat_at, a.state, a.billing_mode, a.actor
          FROM bothy.agent_presence a
         WHERE a.agent = ANY (agent_status.agents)
         ORDER BY a.agent;
END
$$;
COMMENT ON FUNCTION bothy.agent_status(uuid[]) IS
    'the stored presence of agents: newest heartbeat, its node and state';
