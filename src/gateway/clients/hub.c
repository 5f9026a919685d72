/*
 * clients/hub.c
 *		The node's connection registry (see hub.h).
 */
#include <stddef.h>
#include <string.h>

#include "clients/client.h"
#include "clients/clients.h"
#include "clients/hub.h"

gw_hub		gw_clients_hub;

static unsigned
bucket(const bothy_uuid *u)
{
	/* the last bytes of a UUID are random in every version in use */
	return ((unsigned) u->b[14] << 8 | u->b[15]) & (GW_HUB_BUCKETS - 1);
}

static lws_dll2_owner_t *
table(gw_hub *hub, gw_hub_index index)
{
	switch (index)
	{
		case GW_HUB_SESSION:
			return hub->sessions;
		case GW_HUB_PRINCIPAL:
			return hub->principals;
		case GW_HUB_DEVICE:
			return hub->devices;
	}
	return NULL;
}

static const bothy_uuid *
key_of(const gw_client *c, gw_hub_index index)
{
	switch (index)
	{
		case GW_HUB_SESSION:
			return &c->session;
		case GW_HUB_PRINCIPAL:
			return &c->principal;
		case GW_HUB_DEVICE:
			return &c->device;
	}
	return NULL;
}

void
gw_hub_unindex_conn(gw_hub *hub, gw_client *c)
{
	int			i;

	(void) hub;
	for (i = 0; i < 3; i++)
		lws_dll2_remove(&c->in_index[i]);
}

void
gw_hub_index_conn(gw_hub *hub, gw_client *c)
{
	int			i;

	for (i = 0; i < 3; i++)
	{
		if (i == GW_HUB_DEVICE && c->kind != GW_CONN_PERSON)
			continue;
		lws_dll2_add_tail(&c->in_index[i],
						  &table(hub, (gw_hub_index) i)[bucket(key_of(c, (gw_hub_index) i))]);
	}
}

static gw_client *
conn_of(lws_dll2_t *d, gw_hub_index index)
{
	return (gw_client *) ((char *) (d - index) - offsetof(gw_client, in_index));
}

void
gw_hub_each(gw_hub *hub, gw_hub_index index, const bothy_uuid *key,
			gw_hub_visit visit, void *arg)
{
	lws_dll2_owner_t *owner = &table(hub, index)[bucket(key)];
	lws_dll2_t *d,
			   *next;

	for (d = owner->head; d != NULL; d = next)
	{
		gw_client  *c = conn_of(d, index);

		next = d->next;
		if (memcmp(key_of(c, index), key, sizeof(*key)) == 0)
			visit(c, arg);
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

/* Whether a connection before stop in the same bucket has c's key and is admitted. */
static bool
seen_before(lws_dll2_owner_t *owner, lws_dll2_t *stop, gw_hub_index index,
			const gw_client *c, gw_hub_filter accept)
{
	lws_dll2_t *d;

	for (d = owner->head; d != stop; d = d->next)
	{
		const gw_client *o = conn_of(d, index);

		if (memcmp(key_of(o, index), key_of(c, index), sizeof(bothy_uuid)) == 0 && accept(o))
			return true;
	}
	return false;
}

void
gw_hub_each_key(gw_hub *hub, gw_hub_index index, gw_hub_filter accept,
				gw_hub_key_visit visit, void *arg)
{
	lws_dll2_owner_t *buckets = table(hub, index);
	int			i;

	/* a bucket holds few connections (a key's all share one), so the scan back is short */
	for (i = 0; i < GW_HUB_BUCKETS; i++)
	{
		lws_dll2_t *d;

		for (d = buckets[i].head; d != NULL; d = d->next)
		{
			gw_client  *c = conn_of(d, index);

			if (accept(c) && !seen_before(&buckets[i], d, index, c, accept))
				visit(key_of(c, index), arg);
		}
	}
}
