/*
 * listener.c
 *		The shared listener (see listener.h).
 *
 * LISTEN is sent on every new connection; the connection counts as up
 * only once its result is in, because a payload sent before that is not
 * ours to receive.  Reconciling after LISTEN (not after connect) closes
 * the gap: whatever was missed is read from the database after the node
 * can hear new signals again.
 */
#include <stdlib.h>
#include <string.h>

#include "listener.h"
#include "log.h"
#include "metrics.h"
#include "pgconn.h"

struct gw_listener
{
	gw_pgconn	pc;
	gw_route	routes[GW_LISTENER_MAX_ROUTES];
	int			nroutes;
	bool		listening;		/* LISTEN's result was ok on this connection */
	bool		lost;			/* a loss since the last LISTEN: reconcile next */
	const char *conninfo;
	const int  *backoff_ms;
	int			connect_timeout_ms;
	struct lws_context *context;
	struct lws_vhost *vhost;
};

static void
listener_up(gw_pgconn *pc)
{
	gw_listener *l = pc->owner;

	l->listening = false;
	if (!PQsendQuery(pc->pg, "LISTEN ephemeral") || !gw_pgconn_flush(pc))
		gw_pgconn_lost(pc);
}

static void
listen_done(gw_listener *l, bool ok)
{
	int			i;

	if (!ok)
	{
		gw_log(GW_LOG_ERROR, "LISTEN ephemeral failed");
		gw_pgconn_lost(&l->pc);
		return;
	}
	l->listening = true;
	gw_stats.listener_up = 1;
	if (!l->lost)
	{
		gw_log(GW_LOG_INFO, "listener listening on ephemeral");
		return;
	}
	l->lost = false;
	gw_stats.listener_reconnects++;
	gw_log(GW_LOG_INFO, "listener connection restored");
	for (i = 0; i < l->nroutes; i++)
		if (l->routes[i].reconcile != NULL)
		{
			gw_stats.route_reconciles++;
			l->routes[i].reconcile(l->routes[i].ctx);
		}
}

static void
listener_io(gw_pgconn *pc)
{
	gw_listener *l = pc->owner;
	PGnotify   *n;

	if (pc->flushing && !gw_pgconn_flush(pc))
	{
		gw_pgconn_lost(pc);
		return;
	}
	if (!PQconsumeInput(pc->pg))
	{
		gw_pgconn_lost(pc);
		return;
	}
	while (!PQisBusy(pc->pg))
	{
		PGresult   *res = PQgetResult(pc->pg);
		bool		ok;

		if (res == NULL)
			break;
		ok = PQresultStatus(res) == PGRES_COMMAND_OK;
		PQclear(res);
		if (!l->listening)
		{
			listen_done(l, ok);
			if (pc->state != GW_PG_UP)
				return;
		}
	}
	while ((n = PQnotifies(pc->pg)) != NULL)
	{
		int			i;

		if (strcmp(n->relname, "ephemeral") == 0)
			for (i = 0; i < l->nroutes; i++)
				l->routes[i].payload(l->routes[i].ctx, n->extra, strlen(n->extra));
		PQfreemem(n);
	}
	if (PQstatus(pc->pg) == CONNECTION_BAD)
		gw_pgconn_lost(pc);
}

static void
listener_down(gw_pgconn *pc)
{
	gw_listener *l = pc->owner;

	/* one record per loss: the retries after it are silent */
	if (l->listening || !l->lost)
	{
		gw_stats.listener_losses++;
		gw_log(GW_LOG_WARN, "listener connection lost, reconnecting");
	}
	l->lost = true;
	l->listening = false;
	gw_stats.listener_up = 0;
}

static const gw_pgconn_ops listener_ops = {listener_up, listener_io, listener_down, NULL};

gw_listener *
gw_listener_create(struct lws_context *context, struct lws_vhost *vhost, const char *conninfo,
				   const int *backoff_ms, int connect_timeout_ms)
{
	gw_listener *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	l->context = context;
	l->vhost = vhost;
	l->conninfo = conninfo;
	l->backoff_ms = backoff_ms;
	l->connect_timeout_ms = connect_timeout_ms;
	return l;
}

bool
gw_listener_add_route(gw_listener *l, const gw_route *route)
{
	if (l->nroutes >= GW_LISTENER_MAX_ROUTES)
		return false;
	l->routes[l->nroutes++] = *route;
	return true;
}

void
gw_listener_start(gw_listener *l)
{
	gw_pgconn_start(&l->pc, l->context, l->vhost, l->conninfo, GW_LISTENER_APPNAME,
					l->backoff_ms, l->connect_timeout_ms, &listener_ops, l);
}

bool
gw_listener_up(const gw_listener *l)
{
	return l->listening;
}

void
gw_listener_destroy(gw_listener *l)
{
	if (l == NULL)
		return;
	gw_pgconn_stop(&l->pc);
	gw_stats.listener_up = 0;
	free(l);
}
