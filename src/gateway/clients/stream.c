/*
 * clients/stream.c
 *		Delivering an agent's events to its consumer (see stream.h).
 *
 * One read in flight per connection; a signal that arrives meanwhile only
 * raises `latest`, and the read's end reads again.  A read that returns
 * fewer rows than asked has seen everything that exists, so `latest` drops
 * to what was delivered: that also stops a fenced connection (which reads
 * nothing) from reading in a loop until its next save closes it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "clients/agent_events.h"
#include "clients/deliver.h"
#include "clients/hub.h"
#include "clients/settings.h"
#include "clients/stats.h"
#include "clients/stream.h"
#include "core/config.h"
#include "core/db.h"
#include "core/node.h"
#include "logline.h"


static void read_more(gw_client *c);

static bool
is_consumer(const gw_client *c)
{
	return c->kind == GW_CONN_AGENT && c->conn.state == GW_CS_READY;
}

/* The events up to here need no delivery: sent, or acknowledged ahead. */
static int64_t
done_up_to(const gw_client *c)
{
	return c->sent > c->acked ? c->sent : c->acked;
}

static int64_t
room(const gw_client *c)
{
	int64_t		in_flight = c->sent > c->acked ? c->sent - c->acked : 0;

	return in_flight >= gw_copt.agent_window ? 0 : gw_copt.agent_window - in_flight;
}

static void
read_done(void *arg, gw_db_result result, const PGresult *res)
{
	gw_client  *c = arg;
	int			i,
				rows;
	int			asked = (int) (room(c) < GW_AGENT_EVENTS_MAX ? room(c) : GW_AGENT_EVENTS_MAX);

	c->fetch = NULL;
	if (!is_consumer(c))
		return;
	if (result != GW_DB_OK)
	{
		/* the next signal, ack or reconciliation reads again */
		gw_clients_stats.agent_event_read_failures++;
		return;
	}
	rows = PQntuples(res);
	for (i = 0; i < rows; i++)
	{
		gw_agent_event_row row;
		gw_text		ev;

		if (!gw_agent_event_row_get(res, i, 0, &row))
			return;
		if (row.id <= done_up_to(c))
			continue;			/* acknowledged ahead while this read ran */
		if (!gw_event_agent_event(&ev, row.id, row.type, row.data, row.created_at_ms))
		{
			gw_log(GW_LOG_ERROR, "agent event could not be encoded");
			return;
		}
		gw_deliver_to_conn(GW_EV_AGENT_EVENT, &ev, c);
		gw_text_free(&ev);
		c->sent = row.id;
		if (c->conn.state != GW_CS_READY)
			return;				/* the queue overflowed: closing */
	}
	/* fewer than asked: everything that exists was read */
	if (rows < asked && !c->refetch && c->latest > done_up_to(c))
		c->latest = done_up_to(c);
	c->refetch = false;
	read_more(c);
}

static void
read_more(gw_client *c)
{
	int64_t		n = room(c);

	if (c->fetch != NULL)
	{
		c->refetch = true;
		return;
	}
	if (!is_consumer(c) || c->latest <= done_up_to(c) || n == 0)
		return;
	c->fetch = gw_agent_events_read(&c->principal, &c->bind, done_up_to(c),
									(int) (n < GW_AGENT_EVENTS_MAX ? n : GW_AGENT_EVENTS_MAX),
									read_done, c);
}

void
gw_stream_ready(gw_client *c)
{
	c->sent = c->acked;
	c->latest = INT64_MAX;		/* a backlog may wait */
	read_more(c);
}

void
gw_stream_acked(gw_client *c)
{
	/* an ack ahead of what was sent: what it covers is never sent (done_up_to) */
	read_more(c);
}

static void
visit_signal(gw_client *c, void *arg)
{
	int64_t		event = *(const int64_t *) arg;

	if (!is_consumer(c))
		return;
	/* INT64_MAX (unknown) stays: the read in flight or due finds the end */
	if (c->latest != INT64_MAX && event > c->latest)
		c->latest = event;
	if (event > done_up_to(c))
		read_more(c);
}

void
gw_stream_signal(const bothy_signal *sig)
{
	gw_hub_each(&gw_clients_hub, GW_HUB_PRINCIPAL, &sig->agent, visit_signal, (void *) &sig->event);
}

void
gw_stream_reconcile_conn(gw_client *c)
{
	if (!is_consumer(c))
		return;
	c->latest = INT64_MAX;
	read_more(c);
}

static void
visit_reconcile(gw_client *c, void *arg)
{
	(void) arg;
	gw_stream_reconcile_conn(c);
}

void
gw_stream_reconcile(void)
{
	gw_hub_each_conn(&gw_clients_hub, visit_reconcile, NULL);
}

void
gw_stream_closed(gw_client *c)
{
	if (c->fetch != NULL)
	{
		gw_db_cancel(c->fetch);
		c->fetch = NULL;
	}
}
