/*
 * clients/agents.h
 *		Agent presence (D-M7-17-10; docs/configuration.md,
 *		"bothy.agent_presence_timeout": offline is decided once for the
 *		cluster by the database's maintenance worker).
 *
 * An agent is present here while its consumer connection is ready and
 * talks: every message counts as a heartbeat.  The newest heartbeat is
 * stored monotonically (bothy.agent_heartbeat_persist) at once on a
 * takeover (the connection became ready, or the agent was known offline
 * here) and on a change of state, otherwise at most every
 * bothy.agent_heartbeat_persist_interval.  A takeover or a change of state
 * is announced: agent.presence_changed to every person here, then
 * gateway.agent_presence to the other nodes (multi mode).  Offline comes
 * from the database as gateway.agent_presence of the cluster's node.
 */
#ifndef BOTHY_GATEWAY_AGENTS_H
#define BOTHY_GATEWAY_AGENTS_H

#include <stdint.h>

#include "clients/client.h"
#include "clients/protocol.h"
#include "signal.h"

/* An agent connection became ready: a takeover. */
void		gw_agents_ready(gw_client *c);

/* A message from a ready agent connection (m: a heartbeat may carry a state). */
void		gw_agents_message(gw_client *c, const gw_msg *m);

/* The sweep: stores the newest heartbeat when the persist interval passed. */
void		gw_agents_tick(gw_client *c);

/* The connection closes: its running store finishes unseen. */
void		gw_agents_closed(gw_client *c);

/* gateway.agent_presence of another node or of the database. */
void		gw_agents_signal(const bothy_signal *sig);

/*
 * This node's memory of agent: the state and the time of the newest
 * heartbeat of its ready connection here; false when it has none.
 */
bool		gw_agents_local(const bothy_uuid *agent, bothy_agent_state *state, int64_t *seen_ms);

#endif							/* BOTHY_GATEWAY_AGENTS_H */
