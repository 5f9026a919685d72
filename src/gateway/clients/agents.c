/*
 * clients/agents.c
 *		Agent presence as this node sees it (see agents.h).
 *
 * The memory is the agent's connection itself (client.h: agent_state,
 * seen_ms, persisted_ms, announced): a node holds one ready consumer
 * connection per agent at most for long (a second one fences the first),
 * so there is no table of agents to keep in step with the connections.
 */
#include <stdio.h>
#include <string.h>

#include "clients/agents.h"
#include "clients/deliver.h"
#include "clients/events.h"
#include "clients/hub.h"
#include "clients/settings.h"
#include "clients/stats.h"
#include "core/db.h"
#include "core/node.h"
#include "core/publish.h"
#include "logline.h"

static const char sql_persist[] =
"SELECT bothy.agent_heartbeat_persist($1::uuid, $2::uuid, "
"to_timestamp($3::double precision / 1000), $4)";

static bothy_agent_state
state_of(const gw_client *c)
{
	return c->agent_state == GW_AGENT_BUSY ? BOTHY_AGENT_BUSY : BOTHY_AGENT_ONLINE;
}

static void
persisted(void *arg, gw_db_result result, const PGresult *res)
{
	gw_client  *c = arg;
	bool		stored;

	c->persist = NULL;
	if (result != GW_DB_OK)
	{
		/* the next tick tries again (one store in flight at most) */
		c->persisted_ms = 0;
		gw_clients_stats.heartbeat_persist_failures++;
		return;
	}
	/* false: a newer heartbeat of another node is stored; nothing to do */
	if (gw_db_bool(res, &stored) && stored)
		gw_clients_stats.heartbeats_persisted++;
}

static void
persist(gw_client *c)
{
	char		agent[BOTHY_UUID_STRLEN + 1],
				at[24];
	const char *params[4] = {agent, gw.id_text, at, bothy_agent_state_code(state_of(c))};

	if (c->persist != NULL)
		return;					/* one at a time; the tick stores the newer one next */
	bothy_uuid_format(&c->principal, agent);
	snprintf(at, sizeof(at), "%lld", (long long) c->seen_ms);
	c->persisted_ms = c->seen_ms;
	c->persist = gw_db_submit(gw.db, sql_persist, 4, params, persisted, c);
	if (c->persist == NULL)
		c->persisted_ms = 0;
}

/* Deliver here first, then tell the other nodes (D-M7-17-5). */
static void
announce(gw_client *c)
{
	bothy_signal sig;
	gw_text		ev;

	memset(&sig, 0, sizeof(sig));
	sig.kind = BOTHY_KIND_GATEWAY_AGENT_PRESENCE;
	sig.node = gw.id;
	sig.agent = c->principal;
	sig.state = state_of(c);
	c->announced = true;
	gw_clients_stats.agent_presence_announced++;
	if (gw_event_agent_presence(&ev, &sig))
	{
		gw_deliver_to_all_persons(GW_EV_AGENT_PRESENCE, &ev);
		gw_text_free(&ev);
	}
	gw_publish(&sig);
}

void
gw_agents_ready(gw_client *c)
{
	c->agent_state = GW_AGENT_ONLINE;
	c->seen_ms = gw_now_ms();
	c->persisted_ms = 0;
	persist(c);
	announce(c);
}

void
gw_agents_message(gw_client *c, const gw_msg *m)
{
	bool		changed = m->op == GW_OP_HEARTBEAT && m->has_state &&
		m->state != (gw_agent_state) c->agent_state;

	c->seen_ms = gw_now_ms();
	if (changed)
		c->agent_state = (uint8_t) m->state;
	if (changed || !c->announced)
	{
		/* a change, or the agent was known offline here: stored at once */
		c->persisted_ms = 0;
		persist(c);
		announce(c);
	}
}

void
gw_agents_tick(gw_client *c)
{
	if (c->seen_ms > c->persisted_ms &&
		gw_now_ms() - c->persisted_ms >= gw_csettings.agent_heartbeat_persist_interval)
		persist(c);
}

void
gw_agents_closed(gw_client *c)
{
	if (c->persist != NULL)
	{
		gw_db_cancel(c->persist);
		c->persist = NULL;
	}
}

static void
forget_announcement(gw_client *c, void *arg)
{
	(void) arg;
	/* offline for the cluster: this connection's next message takes it over again */
	if (c->kind == GW_CONN_AGENT && c->conn.state == GW_CS_READY)
		c->announced = false;
}

void
gw_agents_signal(const bothy_signal *sig)
{
	gw_text		ev;

	if (sig->state == BOTHY_AGENT_OFFLINE)
		gw_hub_each(&gw_clients_hub, GW_HUB_PRINCIPAL, &sig->agent, forget_announcement, NULL);
	if (!gw_event_agent_presence(&ev, sig))
		return;
	gw_deliver_to_all_persons(GW_EV_AGENT_PRESENCE, &ev);
	gw_text_free(&ev);
}

typedef struct local_agent
{
	bool		found;
	bothy_agent_state state;
	int64_t		seen_ms;
} local_agent;

static void
visit_local(gw_client *c, void *arg)
{
	local_agent *l = arg;

	if (c->kind != GW_CONN_AGENT || c->conn.state != GW_CS_READY || !c->announced)
		return;
	if (!l->found || c->seen_ms > l->seen_ms)
	{
		l->found = true;
		l->state = state_of(c);
		l->seen_ms = c->seen_ms;
	}
}

bool
gw_agents_local(const bothy_uuid *agent, bothy_agent_state *state, int64_t *seen_ms)
{
	local_agent l = {false, BOTHY_AGENT_OFFLINE, 0};

	gw_hub_each(&gw_clients_hub, GW_HUB_PRINCIPAL, agent, visit_local, &l);
	*state = l.state;
	*seen_ms = l.seen_ms;
	return l.found;
}
