/*
 * terminal/presence.c
 *		Host presence across nodes (see presence.h).
 *
 * Entries live in a fixed hash table of intrusive lists by host, each
 * malloc'd when first heard.  Expiry is a walk of every entry once a
 * second: the entries are the cluster's connected hosts, and a walk is
 * cheaper than a timer per entry re-armed at every heartbeat.
 *
 * terminal.host_gone leaves a tombstone for one window instead of
 * dropping the entry: a connection's last terminal.host_present and its
 * terminal.host_gone are separate calls on the sending node, which may
 * commit in either order, and a present heard after the gone would
 * otherwise count a closed connection for a whole window.  A conn ID
 * names one connection for its life, so nothing of a gone one is news.
 */
#include <stdlib.h>

#include "core/node.h"
#include "terminal/hosts.h"
#include "terminal/presence.h"
#include "terminal/send.h"
#include "terminal/stats.h"

#define BUCKETS 4096			/* a power of two */

typedef struct entry
{
	lws_dll2_t	in_bucket;
	bothy_uuid	host;
	bothy_uuid	conn;
	int64_t		heard;			/* gw_mono_ms of its last announcement, or of its gone */
	bool		gone;			/* a tombstone: terminal.host_gone was heard */
} entry;

static lws_dll2_owner_t buckets[BUCKETS];
static uint32_t nentries;		/* tombstones included */
static uint32_t nlive;			/* not gone */

static lws_dll2_owner_t *
bucket(const bothy_uuid *host)
{
	return &buckets[((unsigned) host->b[14] << 8 | host->b[15]) & (BUCKETS - 1)];
}

int64_t
gw_tpresence_window(void)
{
	return gw.cluster.terminal_host_heartbeat_interval * gw.cluster.terminal_host_heartbeat_miss_limit;
}

static entry *
find(const bothy_uuid *host, const bothy_uuid *conn)
{
	lws_dll2_t *d;

	for (d = bucket(host)->head; d != NULL; d = d->next)
	{
		entry	   *e = lws_container_of(d, entry, in_bucket);

		if (bothy_uuid_compare(&e->conn, conn) == 0 && bothy_uuid_compare(&e->host, host) == 0)
			return e;
	}
	return NULL;
}

static void
drop(entry *e)
{
	lws_dll2_remove(&e->in_bucket);
	if (!e->gone)
		nlive--;
	free(e);
	nentries--;
}

/* The entry of (host, conn), made when missing; NULL when the view is full. */
static entry *
entry_of(const bothy_uuid *host, const bothy_uuid *conn)
{
	entry	   *e = find(host, conn);

	if (e != NULL)
		return e;
	if (nentries >= GW_TPRESENCE_MAX || (e = calloc(1, sizeof(*e))) == NULL)
	{
		gw_tstats.presence_refused++;
		return NULL;
	}
	e->host = *host;
	e->conn = *conn;
	lws_dll2_add_tail(&e->in_bucket, bucket(host));
	nentries++;
	nlive++;
	return e;
}

void
gw_tpresence_heard(const bothy_uuid *host, const bothy_uuid *conn, int64_t now)
{
	entry	   *e = entry_of(host, conn);

	if (e != NULL && !e->gone)
		e->heard = now;
}

void
gw_tpresence_gone(const bothy_uuid *host, const bothy_uuid *conn, int64_t now)
{
	entry	   *e = entry_of(host, conn);

	if (e == NULL || e->gone)
		return;
	e->gone = true;
	e->heard = now;
	nlive--;
}

bool
gw_tpresence_counts(const bothy_uuid *host, int64_t now)
{
	int64_t		window = gw_tpresence_window();
	lws_dll2_t *d;

	for (d = bucket(host)->head; d != NULL; d = d->next)
	{
		entry	   *e = lws_container_of(d, entry, in_bucket);

		/* inclusive: no more than the window since its last announcement */
		if (!e->gone && bothy_uuid_compare(&e->host, host) == 0 && now - e->heard <= window)
			return true;
	}
	return false;
}

bool
gw_tpresence_connected(const bothy_uuid *host, int64_t now)
{
	return gw_thosts_connected(host) || gw_tpresence_counts(host, now);
}

void
gw_tpresence_expire(int64_t now)
{
	int64_t		window = gw_tpresence_window();
	int			i;

	for (i = 0; i < BUCKETS && nentries > 0; i++)
	{
		lws_dll2_t *d,
				   *next;

		for (d = buckets[i].head; d != NULL; d = next)
		{
			entry	   *e = lws_container_of(d, entry, in_bucket);

			next = d->next;
			if (now - e->heard > window)
				drop(e);
		}
	}
}

uint32_t
gw_tpresence_entries(void)
{
	return nlive;
}

void
gw_tpresence_clear(void)
{
	gw_tpresence_expire(INT64_MAX);
}

/* terminal.host_present or terminal.host_gone of tc. */
static void
publish(bothy_kind kind, const gw_tconn *tc)
{
	bothy_signal sig = {0};

	sig.kind = kind;
	sig.host_id = tc->host;
	sig.conn_id = tc->id;
	gw_terminal_send(&sig);
}

void
gw_tpresence_announce(gw_tconn *tc)
{
	if (!gw.cluster.multi)
		return;
	tc->announced = true;
	gw_tstats.announced++;
	publish(BOTHY_KIND_TERMINAL_HOST_PRESENT, tc);
}

void
gw_tpresence_withdraw(gw_tconn *tc)
{
	if (!gw.cluster.multi || !tc->announced)
		return;
	tc->announced = false;
	publish(BOTHY_KIND_TERMINAL_HOST_GONE, tc);
}
