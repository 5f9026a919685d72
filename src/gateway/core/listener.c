/*
 * core/listener.c
 *		The shared listener (see listener.h).
 *
 * LISTEN is sent on every new connection, with the read of the channel
 * key in the same query; the connection counts as up only once both
 * results are in, because a payload sent before that is not ours to
 * receive, and none can be checked without the key.  The key is the one
 * of the server this connection reached, and it changes only with a
 * restart or a failover, which end the connection too (core/channel.h).
 * Reconciling after LISTEN (not after connect) closes the gap: whatever
 * was missed is read from the database after the node can hear new
 * signals again.
 */
#include <stdlib.h>
#include <string.h>

#include "core/channel.h"
#include "core/conn.h"
#include "core/db.h"
#include "core/listener.h"
#include "core/loop.h"
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

/* At most one record per this many ms for refused payloads (a flood is one line). */
#define REFUSED_LOG_INTERVAL_MS 10000

/*
 * Payloads handed on per turn of the loop.  libpq reads every notification
 * the socket holds at once; handing thousands on in one callback would
 * keep the loop from every client meanwhile (a flood of signals would hold
 * up identifies), so the rest waits in libpq's list for the next turn.
 */
#define LISTENER_BATCH 64

struct gw_listener
{
	gw_pgconn	pc;
	bool		listening;		/* LISTEN and the key read were ok on this connection */
	bool		listen_ok;		/* ... LISTEN's result was ok, while they run */
	bool		key_ok;			/* ... the key was read, while they run */
	gw_channel_key key;			/* the channel key of this connection's server */
	int64_t		refused_logged_ms;	/* gw_mono_ms of the last refusal record; 0: none */
	uint64_t	refused_unlogged;	/* refusals since that record */
	gw_timer	drain_timer;	/* the next turn's batch, while libpq holds more */
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

	l->listening = l->listen_ok = l->key_ok = false;
	if (!PQsendQuery(pc->pg, "LISTEN ephemeral; SELECT bothy.channel_key()") ||
		!gw_pgconn_flush(pc))
		gw_pgconn_lost(pc);
}

/* One result of the LISTEN and key query: LISTEN's, then the key's row. */
static void
listen_result(gw_listener *l, const PGresult *res)
{
	if (PQresultStatus(res) == PGRES_COMMAND_OK)
		l->listen_ok = true;
	else if (PQresultStatus(res) == PGRES_TUPLES_OK && l->listen_ok && PQntuples(res) == 1 &&
			 PQnfields(res) == 1 && !PQgetisnull(res, 0, 0))
		l->key_ok = gw_channel_parse_key(PQgetvalue(res, 0, 0),
										 (size_t) PQgetlength(res, 0, 0), &l->key);
}

static void
listen_done(gw_listener *l, bool ok)
{
	int			i;

	if (!ok)
	{
		/* bothy_gateway may LISTEN and read the key; no other login may */
		if (l->listen_ok)
			gw_log(GW_LOG_ERROR, "channel key not readable (is the login a member of bothy_gateway?)");
		else
			gw_log(GW_LOG_ERROR, "LISTEN ephemeral failed (is the login a member of bothy_gateway?)");
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
 * A payload not signed with the key: counted by reason, and logged at most
 * once per REFUSED_LOG_INTERVAL_MS with the count since the last record,
 * so a flood of forgeries costs no database call and no flood of lines.
 */
static void
refuse(gw_listener *l, gw_channel_verdict v, int be_pid)
{
	int64_t		now = gw_mono_ms();

	forget_fence_of(l, be_pid);
	gw_stats.signals_refused[v]++;
	l->refused_unlogged++;
	if (l->refused_logged_ms != 0 && now - l->refused_logged_ms < REFUSED_LOG_INTERVAL_MS)
		return;
	gw_logf(GW_LOG_WARN, "signal refused: not signed with the channel key",
			"reason=%s count=%llu", gw_channel_verdict_code(v),
			(unsigned long long) l->refused_unlogged);
	l->refused_logged_ms = now;
	l->refused_unlogged = 0;
}

/*
 * One payload: checked against the key, then decoded once for every
 * route.  A route acts on its own kinds and says whether the signal was
 * this node's own (D-M7-17-1: a node delivers its events locally before it
 * sends them).
 */
static void
hand_to_routes(gw_listener *l, const char *wire, size_t wirelen, int be_pid)
{
	char		payload[BOTHY_CHANNEL_MAX_BYTES + 1];
	size_t		len;
	gw_channel_verdict v;
	bothy_signal sig;
	bothy_decode_error err;
	bool		own = false;
	int			i;

	v = gw_channel_open(&l->key, wire, wirelen, payload, sizeof(payload), &len);
	if (v != GW_CHANNEL_SIGNED)
	{
		refuse(l, v, be_pid);
		return;
	}
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
	/* what a signal sets going waits behind the clients' calls (core/db.h) */
	gw_db_background_begin();
	for (i = 0; i < gw_route_count(); i++)
		if (gw_route_at(i)->signal != NULL && gw_route_at(i)->signal(&sig))
			own = true;
	gw_db_background_end();
	current_fence = 0;
	if (own)
		gw_stats.signals_own++;
	else
		gw_stats.signals_received[sig.kind]++;
}

static void drain_cb(gw_timer *t);

/*
 * One batch of what libpq has read; the next one a turn of the loop later,
 * on a loop timer (core/loop.h): an lws_sul set from here could run only
 * when an earlier-armed sul fell due, a signal held up to 200 ms.
 */
static void
drain(gw_listener *l)
{
	PGnotify   *n;
	int			i;

	for (i = 0; i < LISTENER_BATCH && (n = PQnotifies(l->pc.pg)) != NULL; i++)
	{
		if (strcmp(n->relname, "ephemeral") == 0)
			hand_to_routes(l, n->extra, strlen(n->extra), n->be_pid);
		PQfreemem(n);
		if (l->pc.state != GW_PG_UP)
			return;
	}
	if (i == LISTENER_BATCH)
		gw_timer_schedule(&l->drain_timer, 1);
}

static void
drain_cb(gw_timer *t)
{
	gw_listener *l = lws_container_of(t, gw_listener, drain_timer);

	if (l->pc.state == GW_PG_UP && l->listening)
		drain(l);
}

static void
listener_io(gw_pgconn *pc)
{
	gw_listener *l = pc->owner;

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

		if (res == NULL)
		{
			/* the LISTEN and key query's results are all in: up, or lost */
			if (!l->listening)
			{
				listen_done(l, l->listen_ok && l->key_ok);
				if (pc->state != GW_PG_UP)
					return;
			}
			break;
		}
		if (!l->listening)
			listen_result(l, res);
		PQclear(res);
	}
	drain(l);
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
	gw_timer_cancel(&l->drain_timer);	/* what libpq held went with the connection */
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
	gw_timer_init(&l->drain_timer, drain_cb);
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
	gw_timer_cancel(&l->drain_timer);
	gw_pgconn_stop(&l->pc);
	gw_stats.listener_up = 0;
	free(l);
}
