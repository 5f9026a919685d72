/*
 * terminal/control/presence.c
 *		Host presence across nodes (see presence.h).
 *
 * Entries live in a fixed core/uuidmap.h by host, each malloc'd when
 * first heard.  Expiry is a walk of every entry once a
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

#include "core/db.h"
#include "core/node.h"
#include "core/uuidmap.h"
#include "logline.h"
#include "terminal/control/connection.h"
#include "terminal/control/hosts.h"
#include "terminal/control/presence.h"
#include "terminal/send.h"
#include "terminal/control/stats.h"
#include "terminal/settings.h"

#define BUCKETS 4096			/* a power of two */

typedef struct entry
{
	gw_uuidmap_link in_hosts;	/* hosts, by host */
	bothy_uuid	host;
	bothy_uuid	conn;
	int64_t		heard;			/* gw_mono_ms of its last announcement, or of its gone */
	bool		gone;			/* a tombstone: terminal.host_gone was heard */
} entry;

static const bothy_uuid *
host_key(const gw_uuidmap_link *l)
{
	return &lws_container_of(l, entry, in_hosts)->host;
}

static gw_uuidmap_link *buckets[BUCKETS];
static gw_uuidmap hosts = GW_UUIDMAP_FIXED(buckets, host_key);
static uint32_t nentries;		/* tombstones included */
static uint32_t nlive;			/* not gone */

static entry *
find(const bothy_uuid *host, const bothy_uuid *conn)
{
	gw_uuidmap_link *l;

	for (l = gw_uuidmap_first(&hosts, host); l != NULL; l = gw_uuidmap_next_same(&hosts, l))
	{
		entry	   *e = lws_container_of(l, entry, in_hosts);

		if (bothy_uuid_compare(&e->conn, conn) == 0)
			return e;
	}
	return NULL;
}

static void
drop(entry *e)
{
	gw_uuidmap_remove(&hosts, &e->in_hosts);
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
	gw_uuidmap_add(&hosts, &e->in_hosts);	/* fixed: cannot fail */
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
	int64_t		window = gw_tconn_window();
	gw_uuidmap_link *l;

	for (l = gw_uuidmap_first(&hosts, host); l != NULL; l = gw_uuidmap_next_same(&hosts, l))
	{
		entry	   *e = lws_container_of(l, entry, in_hosts);

		/* inclusive: no more than the window since its last announcement */
		if (!e->gone && now - e->heard <= window)
			return true;
	}
	return false;
}

bool
gw_tpresence_connected(const bothy_uuid *host, int64_t now)
{
	return gw_thosts_connected(host) || gw_tpresence_counts(host, now);
}

typedef struct expiry
{
	int64_t		now;
	int64_t		window;
} expiry;

static bool
expire_one(gw_uuidmap_link *l, void *arg)
{
	const expiry *x = arg;
	entry	   *e = lws_container_of(l, entry, in_hosts);

	if (x->now - e->heard > x->window)
		drop(e);
	return nentries > 0;		/* an empty view needs no more of the walk */
}

void
gw_tpresence_expire(int64_t now)
{
	expiry		x = {now, gw_tconn_window()};

	if (nentries > 0)
		gw_uuidmap_each(&hosts, expire_one, &x);
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

static const char sql_announce[] =
"SELECT bothy.terminal_host_announce($1::uuid, $2::uuid, $3::uuid, $4::boolean)";

static void
announced(void *arg, gw_db_result result, const PGresult *res)
{
	(void) arg;
	(void) res;
	if (result == GW_DB_OK)
		return;
	/* the next heartbeat announces again; a withdrawal lapses with the window */
	gw_tstats.announce_failures++;
	gw_log(GW_LOG_WARN, "terminal host presence not recorded");
}

/*
 * tc is there (present) or gone: recorded in the database, which stages
 * terminal.host_present or terminal.host_gone in the same transaction, so
 * a node that hears it can ask the database whether the connection is
 * real before it probes (probe.c).
 */
static void
publish(bool present, const gw_tconn *tc)
{
	char		host[BOTHY_UUID_STRLEN + 1],
				conn[BOTHY_UUID_STRLEN + 1],
				node[BOTHY_UUID_STRLEN + 1];
	const char *params[4] = {host, conn, node, present ? "true" : "false"};

	bothy_uuid_format(&tc->host, host);
	bothy_uuid_format(&tc->id, conn);
	bothy_uuid_format(&gw.id, node);
	if (gw_db_submit(gw.db, sql_announce, 4, params, announced, NULL) == NULL)
		announced(NULL, GW_DB_ERROR, NULL);
}

void
gw_tpresence_announce(gw_tconn *tc)
{
	if (!gw.cluster.multi)
		return;
	tc->announced = true;
	gw_tstats.announced++;
	publish(true, tc);
}

void
gw_tpresence_withdraw(gw_tconn *tc)
{
	if (!gw.cluster.multi || !tc->announced)
		return;
	tc->announced = false;
	publish(false, tc);
}
