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

/* --- reconciliation ---------------------------------------------------- */

static const char sql_bindings[] =
"SELECT u.device, b.gateway_session, b.bind_id "
"FROM unnest($1::uuid[]) AS u(device), LATERAL bothy.device_binding(u.device) AS b "
"WHERE b.bind_id IS NOT NULL";

static struct
{
	bothy_uuid *devices;		/* of the person connections at the start */
	size_t		count;
	size_t		next;			/* the first device of the next batch */
	gw_db_call *call;
} rec;

static void submit_batch(void);

static void
batch_done(void *arg, gw_db_result result, const PGresult *res)
{
	int			i;

	(void) arg;
	rec.call = NULL;
	if (result != GW_DB_OK)
	{
		/* the signals to come, and the next loss's reconciliation, decide */
		gw_log(GW_LOG_WARN, "device bindings not read back after a listener loss");
		rec.next = rec.count;
	}
	else
	{
		for (i = 0; i < PQntuples(res); i++)
		{
			bothy_uuid	device,
						session,
						bind;
			const char *d = PQgetvalue(res, i, 0),
					   *s = PQgetvalue(res, i, 1),
					   *b = PQgetvalue(res, i, 2);

			if (bothy_uuid_parse(d, strlen(d), &device) &&
				bothy_uuid_parse(s, strlen(s), &session) &&
				bothy_uuid_parse(b, strlen(b), &bind))
				gw_fence_device(&device, &session, &bind, NULL);
		}
	}
	submit_batch();
}

static void
submit_batch(void)
{
	char	   *array,
			   *p;
	size_t		n = rec.count - rec.next,
				i;
	const char *params[1];

	if (n == 0)
	{
		free(rec.devices);
		memset(&rec, 0, sizeof(rec));
		return;
	}
	if (n > RECONCILE_BATCH)
		n = RECONCILE_BATCH;
	array = malloc(n * (BOTHY_UUID_STRLEN + 1) + 3);
	if (array == NULL)
	{
		gw_log(GW_LOG_ERROR, "device bindings not read back: out of memory");
		rec.next = rec.count;
		submit_batch();
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
		gw_log(GW_LOG_WARN, "device bindings not read back after a listener loss");
		rec.next = rec.count;
		submit_batch();
	}
}

static void
collect(gw_client *c, void *arg)
{
	size_t	   *cap = arg;

	if (c->conn.state != GW_CS_READY)
		return;
	if (c->kind == GW_CONN_AGENT)
	{
		gw_session_save_now(c);
		return;
	}
	if (c->kind != GW_CONN_PERSON || rec.devices == NULL)
		return;
	if (rec.count == *cap)
	{
		bothy_uuid *grown = realloc(rec.devices, 2 * *cap * sizeof(*grown));

		if (grown == NULL)
			return;				/* the devices so far are read back */
		rec.devices = grown;
		*cap *= 2;
	}
	rec.devices[rec.count++] = c->device;
}

void
gw_fence_reconcile(void)
{
	size_t		cap = 64;

	/* a reconciliation still running starts over with what is here now */
	if (rec.call != NULL)
		gw_db_cancel(rec.call);
	free(rec.devices);
	memset(&rec, 0, sizeof(rec));
	rec.devices = malloc(cap * sizeof(*rec.devices));
	gw_hub_each_conn(&gw_clients_hub, collect, &cap);
	submit_batch();
}
