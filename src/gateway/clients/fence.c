/*
 * clients/fence.c
 *		Device replacement and consumer fencing (see fence.h).
 *
 * Bind IDs are UUIDv7s made by the database (bothy.device_bind), so they
 * order the bindings of every node without comparing clocks, and two
 * bindings in one millisecond still have one order: of two crossing
 * signals exactly one closes a connection (D-M7-17-3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clients/fence.h"
#include "clients/hub.h"
#include "clients/rest.h"
#include "clients/session.h"
#include "clients/stats.h"
#include "core/node.h"
#include "logline.h"

/* Devices read back per call of the reconciliation. */
#define RECONCILE_BATCH 500

typedef struct device_bound
{
	const bothy_uuid *session;
	const bothy_uuid *bind;
	const gw_client *except;
	bool		newer_here;
} device_bound;

static void
visit_device(gw_client *c, void *arg)
{
	device_bound *b = arg;
	int			order;

	/*
	 * Also a connection of the same session: a resume elsewhere (or here)
	 * leaves the old connection of the session stale, and one device has
	 * one connection (04 6.1).
	 */
	if (c == b->except || c->kind != GW_CONN_PERSON || c->conn.state == GW_CS_CLOSING)
		return;
	order = bothy_uuid_compare(&c->bind, b->bind);
	if (c->conn.state == GW_CS_IDENTIFYING)
	{
		/* c->bind holds the newest binding seen while identify runs */
		if (order < 0)
			c->bind = *b->bind;
		return;
	}
	if (c->conn.state != GW_CS_READY)
		return;
	if (order < 0)
		gw_conn_close(&c->conn, GW_CLOSE_TAKEN, "device taken elsewhere");
	else if (order > 0)
		b->newer_here = true;
}

bool
gw_fence_device(const bothy_uuid *device, const bothy_uuid *session,
				const bothy_uuid *bind, const gw_client *except)
{
	device_bound b = {session, bind, except, false};

	gw_hub_each(&gw_clients_hub, GW_HUB_DEVICE, device, visit_device, &b);
	return !b.newer_here;
}

typedef struct consumer_taken
{
	const bothy_uuid *holder;
	const gw_client *except;
} consumer_taken;

static void
visit_consumer(gw_client *c, void *arg)
{
	consumer_taken *t = arg;

	if (c == t->except || c->kind != GW_CONN_AGENT || c->conn.state == GW_CS_CLOSING ||
		bothy_uuid_compare(&c->bind, t->holder) == 0)
		return;
	if (c->conn.state == GW_CS_IDENTIFYING)
		c->save_at_ready = true;
	else if (c->conn.state == GW_CS_READY)
		gw_session_save_now(c);
}

void
gw_fence_consumer(const bothy_uuid *agent, const bothy_uuid *holder, const gw_client *except)
{
	consumer_taken t = {holder, except};

	gw_hub_each(&gw_clients_hub, GW_HUB_PRINCIPAL, agent, visit_consumer, &t);
	/* a REST poll waiting here under another holder is fenced too */
	gw_rest_fenced(agent, holder);
}

/* --- reading the bindings back ------------------------------------------ */

/*
 * Devices whose binding is read from the database and then decided as if
 * its signal had come: every person device after a lost listener, and each
 * device a gateway.device signal would take from a connection here.  One
 * queue, read RECONCILE_BATCH devices a call, one call at a time, so a
 * flood of signals costs the pool one call in flight however many there
 * are.  Past PENDING_MAX devices the queue gives up on single devices and
 * reads every connection's device once the current call is back.
 */
#define PENDING_MAX 10000

static const char sql_bindings[] =
"SELECT u.device, b.gateway_session, b.bind_id "
"FROM unnest($1::uuid[]) AS u(device), LATERAL bothy.device_binding(u.device) AS b "
"WHERE b.bind_id IS NOT NULL";

static struct
{
	bothy_uuid *devices;		/* to read, oldest first from next */
	size_t		count;
	size_t		cap;
	size_t		next;			/* the first device of the next batch */
	gw_db_call *call;
	bool		everything;		/* overflowed: read every person connection's device */
} rec;

static void submit_batch(void);

static void
batch_done(void *arg, gw_db_result result, const PGresult *res)
{
	int			i;

	(void) arg;
	rec.call = NULL;
	if (result != GW_DB_OK)
		/* the signals to come, and the next loss's reconciliation, decide */
		gw_log(GW_LOG_WARN, "device bindings not read back");
	else
	{
		for (i = 0; i < PQntuples(res); i++)
		{
			bothy_uuid	device,
						session,
						bind;

			if (gw_db_uuid_at(res, i, 0, &device) && gw_db_uuid_at(res, i, 1, &session) &&
				gw_db_uuid_at(res, i, 2, &bind))
				gw_fence_device(&device, &session, &bind, NULL);
		}
	}
	submit_batch();
}

static void collect_all(bool agents_too);

static void
submit_batch(void)
{
	char	   *array,
			   *p;
	size_t		n = rec.count - rec.next,
				i;
	const char *params[1];

	if (rec.call != NULL)
		return;					/* its answer submits the next */
	if (n == 0 && rec.everything)
	{
		rec.everything = false;
		rec.count = rec.next = 0;
		collect_all(false);
		n = rec.count;
	}
	if (n == 0)
	{
		rec.count = rec.next = 0;
		return;
	}
	if (n > RECONCILE_BATCH)
		n = RECONCILE_BATCH;
	array = malloc(n * (BOTHY_UUID_STRLEN + 1) + 3);
	if (array == NULL)
	{
		gw_log(GW_LOG_ERROR, "device bindings not read back: out of memory");
		rec.count = rec.next = 0;
		return;
	}
	p = array;
	*p++ = '{';
	for (i = 0; i < n; i++)
	{
		if (i > 0)
			*p++ = ',';
		bothy_uuid_format(&rec.devices[rec.next + i], p);
		p += BOTHY_UUID_STRLEN;
	}
	*p++ = '}';
	*p = '\0';
	rec.next += n;
	params[0] = array;
	rec.call = gw_db_submit(gw.db, sql_bindings, 1, params, batch_done, NULL);
	free(array);
	if (rec.call == NULL)
	{
		gw_log(GW_LOG_WARN, "device bindings not read back");
		rec.count = rec.next = 0;
	}
}

/*
 * Queues device to be read; false when out of memory, or, for a signal's
 * device (capped), when PENDING_MAX wait already.  The reconciliation's
 * devices are never capped: they are every person connection here, and a
 * cap would read the same first ones again and again.
 */
static bool
enqueue(const bothy_uuid *device, bool capped)
{
	if (rec.next > 0 && rec.next == rec.count)
		rec.count = rec.next = 0;	/* all read: start the array over */
	if (capped && rec.count - rec.next >= PENDING_MAX)
		return false;
	if (rec.count == rec.cap)
	{
		size_t		cap = rec.cap == 0 ? 64 : 2 * rec.cap;
		bothy_uuid *grown = realloc(rec.devices, cap * sizeof(*grown));

		if (grown == NULL)
			return false;
		rec.devices = grown;
		rec.cap = cap;
	}
	rec.devices[rec.count++] = *device;
	return true;
}

/* arg: non-NULL after a lost listener, when agent connections save too. */
static void
collect(gw_client *c, void *arg)
{
	if (c->conn.state != GW_CS_READY)
		return;
	if (c->kind == GW_CONN_AGENT && arg != NULL)
		gw_session_save_now(c);
	else if (c->kind == GW_CONN_PERSON && !enqueue(&c->device, false))
		gw_log(GW_LOG_ERROR, "device bindings not read back: out of memory");
}

static void
collect_all(bool agents_too)
{
	gw_hub_each_conn(&gw_clients_hub, collect, agents_too ? &rec : NULL);
}

void
gw_fence_reconcile(void)
{
	/* a reconciliation still running starts over with what is here now */
	if (rec.call != NULL)
		gw_db_cancel(rec.call);
	rec.call = NULL;
	rec.count = rec.next = 0;
	rec.everything = false;
	collect_all(true);
	submit_batch();
}

/* --- a signal of another node ---------------------------------------------- */

typedef struct device_heard
{
	const bothy_uuid *bind;
	bool		would_act;
} device_heard;

static void
visit_heard(gw_client *c, void *arg)
{
	device_heard *h = arg;

	if (c->kind == GW_CONN_PERSON && c->conn.state != GW_CS_CLOSING &&
		bothy_uuid_compare(&c->bind, h->bind) < 0 &&
		(c->conn.state == GW_CS_READY || c->conn.state == GW_CS_IDENTIFYING))
		h->would_act = true;
}

void
gw_fence_device_heard(const bothy_uuid *device, const bothy_uuid *bind)
{
	device_heard h = {bind, false};

	gw_hub_each(&gw_clients_hub, GW_HUB_DEVICE, device, visit_heard, &h);
	if (!h.would_act)
		return;					/* nothing here it could take: no read */
	gw_clients_stats.device_checks++;
	if (!enqueue(device, true))
		rec.everything = true;	/* too many to read one by one: read them all, later */
	submit_batch();
}
