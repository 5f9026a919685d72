/*
 * terminal/hosts.c
 *		This node's control connections by host (see hosts.h).
 */
#include "terminal/hosts.h"

static lws_dll2_owner_t buckets[GW_THOSTS_BUCKETS];

static lws_dll2_owner_t *
bucket(const bothy_uuid *u)
{
	/* the last bytes of a UUIDv7 are random */
	return &buckets[((unsigned) u->b[14] << 8 | u->b[15]) & (GW_THOSTS_BUCKETS - 1)];
}

void
gw_thosts_add(gw_tconn *tc)
{
	if (tc->indexed)
		return;
	lws_dll2_add_tail(&tc->in_host, bucket(&tc->host));
	tc->indexed = true;
}

void
gw_thosts_remove(gw_tconn *tc)
{
	if (!tc->indexed)
		return;
	lws_dll2_remove(&tc->in_host);
	tc->indexed = false;
}

void
gw_thosts_each(const bothy_uuid *host, gw_thosts_visit visit, void *arg)
{
	lws_dll2_t *d,
			   *next;

	for (d = bucket(host)->head; d != NULL; d = next)
	{
		gw_tconn   *tc = lws_container_of(d, gw_tconn, in_host);

		next = d->next;
		if (bothy_uuid_compare(&tc->host, host) == 0)
			visit(tc, arg);
	}
}

/* The first connection of host that match admits (NULL: any), or NULL. */
static gw_tconn *
first_of(const bothy_uuid *host, const bothy_uuid *conn, bool (*admits) (const gw_tconn *tc))
{
	lws_dll2_t *d;

	for (d = bucket(host)->head; d != NULL; d = d->next)
	{
		gw_tconn   *tc = lws_container_of(d, gw_tconn, in_host);

		if (bothy_uuid_compare(&tc->host, host) == 0 &&
			(conn == NULL || bothy_uuid_compare(&tc->id, conn) == 0) &&
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
