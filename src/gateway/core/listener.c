/*
 * core/listener.c
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

#include "core/listener.h"
#include "core/metrics.h"
#include "core/pgconn.h"
#include "core/route.h"
#include "logline.h"
#include "signal.h"

/*
 * The fence of the signal handed to the routes now, for the hooks that
 * read it through gw_listener_fence() (which takes no listener: the hooks
 * do not know it); set only around that hand-off.
 */
static uint64_t current_fence;

uint64_t
gw_listener_fence(void)
{
	return current_fence;
}

struct gw_listener
{
	gw_pgconn	pc;
	bool		listening;		/* LISTEN's result was ok on this connection */
	bool		lost;			/* a loss since the last LISTEN: reconcile next */
	const char *conninfo;
	const int  *backoff_ms;
	int			connect_timeout_ms;
	struct lws_context *context;
	struct lws_vhost *vhost;

	/*
	 * The last wal.fence heard, for the signals the same process notified
	 * after it (the fan-out worker notifies a batch's fence first, in the
	 * batch's transaction, docs/signals.md "The fence"); 0 for any other
	 * process's, a producer's fallback NOTIFY, which carries none.
	 */
	int			fence_pid;		/* 0: no fence known */
	uint64_t	fence_lsn;
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
	for (i = 0; i < gw_route_count(); i++)
		if (gw_route_at(i)->reconcile != NULL)
		{
			gw_stats.route_reconciles[i]++;
			gw_route_at(i)->reconcile();
		}
}

/*
 * A payload of the fence's process that is not understood may be a fence
 * (a newer form, or a broken one): the fence known may then be lower than
 * the one meant for what follows, so it is forgotten, and that process's
 * signals are read on the primary until its next wal.fence
 * (docs/signals.md, "The fence").
 */
static void
forget_fence_of(gw_listener *l, int be_pid)
{
	if (be_pid == l->fence_pid)
		l->fence_pid = 0;
}

/*
 * One payload: decoded once for every route.  A route acts on its own
 * kinds and says whether the signal was this node's own (D-M7-17-1: a node
 * delivers its events locally before it sends them).
 */
static void
hand_to_routes(gw_listener *l, const char *payload, size_t len, int be_pid)
{
	bothy_signal sig;
	bothy_decode_error err;
	bool		own = false;
	int			i;

	switch (bothy_signal_decode(payload, len, &sig, &err))
	{
		case BOTHY_DECODE_MALFORMED:
			forget_fence_of(l, be_pid);
			gw_stats.signals_dropped[err.reason]++;
			gw_logf(GW_LOG_WARN, "signal dropped as malformed", "reason=%s",
					bothy_reason_code(err.reason));
			return;
		case BOTHY_DECODE_IGNORED:
			forget_fence_of(l, be_pid);
			gw_stats.signals_ignored++;
			return;
		case BOTHY_DECODE_OK:
			break;
	}
	if (sig.kind == BOTHY_KIND_WAL_FENCE)
	{
		l->fence_pid = be_pid;
		l->fence_lsn = (uint64_t) sig.lsn;
		gw_stats.signals_received[sig.kind]++;
		return;
	}
	current_fence = be_pid == l->fence_pid ? l->fence_lsn : 0;
	for (i = 0; i < gw_route_count(); i++)
		if (gw_route_at(i)->signal != NULL && gw_route_at(i)->signal(&sig))
			own = true;
	current_fence = 0;
	if (own)
		gw_stats.signals_own++;
	else
		gw_stats.signals_received[sig.kind]++;
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
		if (strcmp(n->relname, "ephemeral") == 0)
			hand_to_routes(l, n->extra, strlen(n->extra), n->be_pid);
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
	l->fence_pid = 0;			/* a batch's fence may have been missed */
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
