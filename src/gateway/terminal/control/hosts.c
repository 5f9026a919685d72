/*
 * terminal/control/hosts.c
 *		This node's control connections by host (see hosts.h).
 */
#include "terminal/control/hosts.h"

static const bothy_uuid *
host_key(const gw_uuidmap_link *l)
{
	return &lws_container_of(l, gw_tconn, in_host)->host;
}

static gw_uuidmap_link *buckets[GW_THOSTS_BUCKETS];
static gw_uuidmap hosts = GW_UUIDMAP_FIXED(buckets, host_key);

void
gw_thosts_add(gw_tconn *tc)
{
	if (tc->indexed)
		return;
	gw_uuidmap_add(&hosts, &tc->in_host);	/* fixed: cannot fail */
	tc->indexed = true;
}

void
gw_thosts_remove(gw_tconn *tc)
{
	if (!tc->indexed)
		return;
	gw_uuidmap_remove(&hosts, &tc->in_host);
	tc->indexed = false;
}

void
gw_thosts_each(const bothy_uuid *host, gw_thosts_visit visit, void *arg)
{
	gw_uuidmap_link *l,
			   *next;

	for (l = gw_uuidmap_first(&hosts, host); l != NULL; l = next)
	{
		next = gw_uuidmap_next_same(&hosts, l);
		visit(lws_container_of(l, gw_tconn, in_host), arg);
	}
}

/* The first connection of host that match admits (NULL: any), or NULL. */
static gw_tconn *
first_of(const bothy_uuid *host, const bothy_uuid *conn, bool (*admits) (const gw_tconn *tc))
{
	gw_uuidmap_link *l;

	for (l = gw_uuidmap_first(&hosts, host); l != NULL; l = gw_uuidmap_next_same(&hosts, l))
	{
		gw_tconn   *tc = lws_container_of(l, gw_tconn, in_host);

		if ((conn == NULL || bothy_uuid_compare(&tc->id, conn) == 0) &&
			(admits == NULL || admits(tc)))
			return tc;
	}
	return NULL;
}

gw_tconn *
gw_thosts_find(const bothy_uuid *host, const bothy_uuid *conn)
{
	return first_of(host, conn, NULL);
}

bool
gw_thosts_connected(const bothy_uuid *host)
{
	return first_of(host, NULL, gw_tconn_connected) != NULL;
}

bool
gw_thosts_any(const bothy_uuid *host)
{
	return first_of(host, NULL, NULL) != NULL;
}
