/*
 * clients/hub.c
 *		The node's connection registry (see hub.h).
 */
#include <stddef.h>
#include <string.h>

#include "clients/client.h"
#include "clients/clients.h"
#include "clients/hub.h"

static const bothy_uuid *session_key(const gw_uuidmap_link *l);
static const bothy_uuid *principal_key(const gw_uuidmap_link *l);
static const bothy_uuid *device_key(const gw_uuidmap_link *l);

static gw_uuidmap_link *sessions[GW_HUB_BUCKETS];
static gw_uuidmap_link *principals[GW_HUB_BUCKETS];
static gw_uuidmap_link *devices[GW_HUB_BUCKETS];

gw_hub		gw_clients_hub = {{
		[GW_HUB_SESSION] = GW_UUIDMAP_FIXED(sessions, session_key),
		[GW_HUB_PRINCIPAL] = GW_UUIDMAP_FIXED(principals, principal_key),
		[GW_HUB_DEVICE] = GW_UUIDMAP_FIXED(devices, device_key),
}};

static gw_client *
conn_of(const gw_uuidmap_link *l, gw_hub_index index)
{
	return (gw_client *) ((const char *) (l - index) - offsetof(gw_client, in_index));
}

static const bothy_uuid *
session_key(const gw_uuidmap_link *l)
{
	return &conn_of(l, GW_HUB_SESSION)->session;
}

static const bothy_uuid *
principal_key(const gw_uuidmap_link *l)
{
	return &conn_of(l, GW_HUB_PRINCIPAL)->principal;
}

static const bothy_uuid *
device_key(const gw_uuidmap_link *l)
{
	return &conn_of(l, GW_HUB_DEVICE)->device;
}

void
gw_hub_unindex_conn(gw_hub *hub, gw_client *c)
{
	int			i;

	for (i = 0; i < 3; i++)
		gw_uuidmap_remove(&hub->index[i], &c->in_index[i]);
}

void
gw_hub_index_conn(gw_hub *hub, gw_client *c)
{
	int			i;

	for (i = 0; i < 3; i++)
	{
		if (i == GW_HUB_DEVICE && c->kind != GW_CONN_PERSON)
			continue;
		/* a fixed map: adding cannot fail */
		gw_uuidmap_add(&hub->index[i], &c->in_index[i]);
	}
}

void
gw_hub_each(gw_hub *hub, gw_hub_index index, const bothy_uuid *key,
			gw_hub_visit visit, void *arg)
{
	gw_uuidmap *m = &hub->index[index];
	gw_uuidmap_link *l,
			   *next;

	for (l = gw_uuidmap_first(m, key); l != NULL; l = next)
	{
		next = gw_uuidmap_next_same(m, l);
		visit(conn_of(l, index), arg);
	}
}

typedef struct each_arg
{
	gw_hub_visit visit;
	void	   *arg;
} each_arg;

static void
visit_client(gw_conn *c, void *arg)
{
	each_arg   *e = arg;

	e->visit(gw_client_of(c), e->arg);
}

/* The core lists the connections of each path: the route's are /gateway's. */
void
gw_hub_each_conn(gw_hub *hub, gw_hub_visit visit, void *arg)
{
	each_arg	e = {visit, arg};

	(void) hub;
	gw_conn_each(&gw_clients_ws, visit_client, &e);
}

uint32_t
gw_hub_count(const gw_hub *hub)
{
	(void) hub;
	return gw_conn_count(&gw_clients_ws);
}
