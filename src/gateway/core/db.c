/*
 * core/db.c
 *		The asynchronous query pool (see db.h).
 *
 * Each slot runs one call at a time with PQsendQueryParams (text params,
 * or binary ones where the caller gives their length; text results), so a
 * slot's state is just "idle" or "this call".  A call whose deadline
 * passes while it runs cannot be cancelled without a blocking PQcancel, so
 * its slot is reset instead: the server ends the statement when it sees
 * the connection gone.
 *
 * Two queues: the calls of clients (identify, REST, presence, publish)
 * and the background calls that signals caused (db.h,
 * gw_db_background_begin).  A free slot takes a client's call first, and
 * background calls never hold every slot, so a flood of signals from the
 * channel delays no identify behind its reads (docs/security.md); the
 * background queue is bounded, and a call past it is refused at once.
 */
#include <stdlib.h>
#include <string.h>

#include "core/db.h"
#include "core/dbread.h"
#include "core/pgconn.h"
#include "logline.h"

typedef struct db_slot
{
	gw_pgconn	pc;
	gw_db	   *db;
	gw_db_call *call;			/* running here, or NULL */
	PGresult   *first;			/* first result of the running call */
} db_slot;

struct gw_db_call
{
	lws_dll2_t	queue;			/* in db->queue while waiting */
	lws_dll2_t	pending;		/* in db->pending until freed */
	gw_db	   *db;
	const char *sql;
	int			nparams;
	char	   *params[GW_DB_MAX_PARAMS];
	int			lengths[GW_DB_MAX_PARAMS];	/* of the binary ones */
	int			formats[GW_DB_MAX_PARAMS];	/* 0 text, 1 binary */
	gw_db_cb	cb;				/* NULL once cancelled */
	void	   *arg;
	db_slot    *slot;			/* running here, or NULL */
	gw_dbread_call read;		/* a read for a standby (dbread.c); fence 0: none */
	bool		background;		/* caused by a signal: db->background, never every slot */
	lws_usec_t	queued_at;
	lws_usec_t	deadline;		/* queued_at + the pool's timeout */
};

struct gw_db
{
	struct lws_context *context;
	int			timeout_ms;
	int			nslots;
	db_slot    *slots;
	lws_dll2_owner_t queue;		/* waiting calls of clients, oldest first */
	lws_dll2_owner_t background;	/* waiting background calls, oldest first */
	lws_dll2_owner_t pending;	/* waiting or running, oldest (first due) first */
	lws_sorted_usec_list_t sul_deadline;	/* armed for a call of pending */
	lws_usec_t	sul_at;			/* when it fires; 0: not armed */
	bool		was_up;			/* for the one record per outage */
	lws_usec_t	timeout_logged;	/* when "database call timed out" was last logged */
	uint64_t	timeouts_unlogged;	/* time-outs since */
	const char *failure;		/* the reason last logged while down, or NULL */
	gw_dbread  *reads;			/* the standbys, or NULL */
};

/* Calls submitted now are background calls while this is above 0. */
static int	background_depth;

static void dispatch(gw_db *db);
static gw_db_call *submit_to(gw_db *db, uint64_t fence, const char *sql, int nparams,
							 const gw_db_param *params, gw_db_cb cb, void *arg);

static void
call_free(gw_db_call *c)
{
	int			i;

	lws_dll2_remove(&c->pending);
	for (i = 0; i < c->nparams; i++)
		free(c->params[i]);
	free(c);
}

/* Hands the outcome to the caller (unless cancelled) and frees the call. */
void
gw_db_finish(gw_db_call *c, gw_db_result result, const PGresult *res)
{
	double		seconds = (double) (lws_now_usecs() - c->queued_at) / 1e6;

	gw_metrics_db_call(result, seconds);
	if (c->cb != NULL)
	{
		/* what a background call's answer submits is background work too */
		if (c->background)
			background_depth++;
		c->cb(c->arg, result, res);
		if (c->background)
			background_depth--;
	}
	call_free(c);
}

static void deadline_cb(lws_sorted_usec_list_t *sul);

/*
 * One timer for every call's deadline: the calls share the pool's timeout,
 * so the oldest is always the first due, and a timer each would cost an
 * insertion into lws's sorted list per call (O(calls) with thousands
 * waiting, as in a reconnect storm).  The timer is armed for a call that
 * may have ended since; it then only moves on to the next.
 */
static void
arm_deadline(gw_db *db)
{
	gw_db_call *head;
	lws_usec_t	delay;

	if (db->pending.head == NULL)
	{
		lws_sul_cancel(&db->sul_deadline);
		db->sul_at = 0;
		return;
	}
	head = lws_container_of(db->pending.head, gw_db_call, pending);
	if (db->sul_at != 0 && db->sul_at <= head->deadline)
		return;
	db->sul_at = head->deadline;
	delay = head->deadline - lws_now_usecs();
	/* at least 1: a delay of -1 would cancel the timer */
	lws_sul_schedule(db->context, 0, &db->sul_deadline, deadline_cb, delay > 0 ? delay : 1);
}

static void
expire(gw_db_call *c)
{
	db_slot    *slot = c->slot;
	gw_db	   *db = c->db;
	lws_usec_t	now = lws_now_usecs();

	/* one record a second at most: a flood of calls times out as one line */
	db->timeouts_unlogged++;
	if (now - db->timeout_logged >= LWS_US_PER_SEC)
	{
		gw_logf(GW_LOG_WARN, "database call timed out", "count=%llu",
				(unsigned long long) db->timeouts_unlogged);
		db->timeout_logged = now;
		db->timeouts_unlogged = 0;
	}
	if (c->read.slot != NULL)
		gw_dbread_detach(c);
	else if (slot != NULL)
	{
		slot->call = NULL;
		if (slot->first != NULL)
		{
			PQclear(slot->first);
			slot->first = NULL;
		}
		c->slot = NULL;
		gw_pgconn_lost(&slot->pc);
	}
	else
		lws_dll2_remove(&c->queue);
	gw_db_finish(c, GW_DB_TIMEOUT, NULL);
}

static void
deadline_cb(lws_sorted_usec_list_t *sul)
{
	gw_db	   *db = lws_container_of(sul, gw_db, sul_deadline);
	lws_usec_t	now = lws_now_usecs();

	db->sul_at = 0;
	while (db->pending.head != NULL)
	{
		gw_db_call *c = lws_container_of(db->pending.head, gw_db_call, pending);

		if (c->deadline > now)
			break;
		expire(c);
	}
	arm_deadline(db);
	dispatch(db);
}

static bool
slot_send(db_slot *slot, gw_db_call *c)
{
	if (!PQsendQueryParams(slot->pc.pg, c->sql, c->nparams, NULL,
						   (const char *const *) c->params, c->lengths, c->formats, 0))
		return false;
	slot->call = c;
	c->slot = slot;
	return gw_pgconn_flush(&slot->pc);
}

/* The queue a waiting call belongs in. */
static lws_dll2_owner_t *
queue_of(gw_db_call *c)
{
	return c->background ? &c->db->background : &c->db->queue;
}

/*
 * The next call for a free slot: a client's first; a background one only
 * while fewer than all slots (all but one, with two or more) run one.
 */
static gw_db_call *
next_call(gw_db *db)
{
	int			i,
				running = 0;

	if (db->queue.count > 0)
		return lws_container_of(db->queue.head, gw_db_call, queue);
	if (db->background.count == 0)
		return NULL;
	for (i = 0; i < db->nslots; i++)
		if (db->slots[i].call != NULL && db->slots[i].call->background)
			running++;
	if (running >= (db->nslots > 1 ? db->nslots - 1 : 1))
		return NULL;
	return lws_container_of(db->background.head, gw_db_call, queue);
}

static void
dispatch(gw_db *db)
{
	int			i;
	gw_db_call *c;

	for (i = 0; i < db->nslots && (c = next_call(db)) != NULL; i++)
	{
		db_slot    *slot = &db->slots[i];

		if (slot->pc.state != GW_PG_UP || slot->call != NULL)
			continue;
		lws_dll2_remove(&c->queue);
		if (!slot_send(slot, c))
		{
			/* the connection is broken: back to the head of its queue */
			slot->call = NULL;
			c->slot = NULL;
			lws_dll2_add_head(&c->queue, queue_of(c));
			gw_pgconn_lost(&slot->pc);
		}
	}
}

static void
slot_up(gw_pgconn *pc)
{
	db_slot    *slot = pc->owner;

	if (!slot->db->was_up)
		gw_log(GW_LOG_INFO, "database connection open");
	slot->db->was_up = true;
	slot->db->failure = NULL;
	dispatch(slot->db);
}

/*
 * A connect attempt failed while no query connection is up: libpq's reason
 * as its code (core/pgconn.c), once per outage and again when it changes,
 * not at every retry of every slot.
 */
static void
slot_failed(gw_pgconn *pc)
{
	db_slot    *slot = pc->owner;

	if (gw_db_up(slot->db) ||
		(slot->db->failure != NULL && strcmp(pc->failure, slot->db->failure) == 0))
		return;
	slot->db->failure = pc->failure;
	gw_logf(GW_LOG_WARN, "database connection failed", "reason=%s", pc->failure);
}

static void
slot_down(gw_pgconn *pc)
{
	db_slot    *slot = pc->owner;
	gw_db_call *c = slot->call;
	gw_db	   *db = slot->db;

	slot->call = NULL;
	if (slot->first != NULL)
	{
		PQclear(slot->first);
		slot->first = NULL;
	}
	if (db->was_up && !gw_db_up(db))
	{
		gw_log(GW_LOG_WARN, "database connection lost");
		db->was_up = false;
	}
	if (c != NULL)
	{
		/* it may or may not have run: the caller decides, as for an error */
		c->slot = NULL;
		gw_db_finish(c, GW_DB_ERROR, NULL);
	}
}

static void
slot_io(gw_pgconn *pc)
{
	db_slot    *slot = pc->owner;
	PGconn	   *pg = pc->pg;

	if (!gw_pgconn_read(pc))
	{
		gw_pgconn_lost(pc);
		return;
	}
	while (slot->call != NULL && gw_pgconn_ended(pc, &slot->first))
	{
		PGresult   *first = slot->first;
		gw_db_call *c = slot->call;
		ExecStatusType st = first != NULL ? PQresultStatus(first) : PGRES_FATAL_ERROR;

		slot->call = NULL;
		slot->first = NULL;
		c->slot = NULL;
		gw_db_finish(c, st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK ? GW_DB_OK : GW_DB_ERROR,
					 first);
		if (first != NULL)
			PQclear(first);

		/*
		 * The callback may have submitted a call that this slot failed to
		 * send, and the slot's connection is gone (PQfinish'ed) with it.
		 */
		if (pc->state != GW_PG_UP || pc->pg != pg)
			return;
	}
	/* notices and stray notifications on a query connection: nothing to do */
	if (PQstatus(pg) == CONNECTION_BAD)
	{
		gw_pgconn_lost(pc);
		return;
	}
	dispatch(slot->db);
}

static const gw_pgconn_ops slot_ops = {slot_up, slot_io, slot_down, slot_failed};

gw_db *
gw_db_create(struct lws_context *context, struct lws_vhost *vhost, const char *conninfo,
			 int pool, int timeout_ms, const int *backoff_ms)
{
	gw_db	   *db = calloc(1, sizeof(*db));
	int			i;

	if (db == NULL)
		return NULL;
	db->slots = calloc((size_t) pool, sizeof(db_slot));
	if (db->slots == NULL)
	{
		free(db);
		return NULL;
	}
	db->context = context;
	db->timeout_ms = timeout_ms;
	db->nslots = pool;
	for (i = 0; i < pool; i++)
	{
		db->slots[i].db = db;
		gw_pgconn_start(&db->slots[i].pc, context, vhost, conninfo, "bothy-gateway",
						backoff_ms, timeout_ms, &slot_ops, &db->slots[i]);
	}
	return db;
}

/* A copy of a parameter's value into the call; false when out of memory. */
static bool
copy_param(gw_db_call *c, int i, const gw_db_param *param)
{
	c->formats[i] = param->length >= 0 ? 1 : 0;
	c->lengths[i] = param->length >= 0 ? param->length : 0;
	if (param->value == NULL)
		return true;
	if (param->length < 0)
		return (c->params[i] = strdup(param->value)) != NULL;
	c->params[i] = malloc(param->length > 0 ? (size_t) param->length : 1);
	if (c->params[i] == NULL)
		return false;
	memcpy(c->params[i], param->value, (size_t) param->length);
	return true;
}

void
gw_db_drop(gw_db_call *c)
{
	c->cb = NULL;
	c->read.slot = NULL;
	lws_dll2_remove(&c->queue);
	call_free(c);
}

void
gw_db_to_primary(gw_db_call *c)
{
	c->read.slot = NULL;
	if (c->cb == NULL)
	{
		/* cancelled while a standby held it: nobody wants the answer */
		call_free(c);
		return;
	}
	lws_dll2_add_tail(&c->queue, queue_of(c));
	dispatch(c->db);
}

const char *
gw_db_call_sql(const gw_db_call *c, int *nparams, const char *const **values,
			   const int **lengths, const int **formats)
{
	*nparams = c->nparams;
	*values = (const char *const *) c->params;
	*lengths = c->lengths;
	*formats = c->formats;
	return c->sql;
}

lws_dll2_t *
gw_db_call_link(gw_db_call *c)
{
	return &c->queue;
}

gw_db_call *
gw_db_call_of_link(lws_dll2_t *link)
{
	return lws_container_of(link, gw_db_call, queue);
}

gw_dbread_call *
gw_db_call_read(gw_db_call *c)
{
	return &c->read;
}

gw_db_call *
gw_db_call_of_read(gw_dbread_call *r)
{
	return lws_container_of(r, gw_db_call, read);
}

void
gw_db_set_reads(gw_db *db, gw_dbread *reads)
{
	db->reads = reads;
}

/*
 * The database a primary connection that is up reached (what libpq
 * connected to), or NULL while none is up: a standby must answer for the
 * same one (docs/standbys.md, "At start").
 */
const char *
gw_db_dbname(const gw_db *db)
{
	int			i;

	for (i = 0; i < db->nslots; i++)
		if (db->slots[i].pc.state == GW_PG_UP)
			return PQdb(db->slots[i].pc.pg);
	return NULL;
}

gw_db_call *
gw_db_submit_read(gw_db *db, uint64_t fence, const char *sql, int nparams,
				  const gw_db_param *params, gw_db_cb cb, void *arg)
{
	/*
	 * A signal's read the standbys could have taken but for its missing
	 * fence.  Not the read of the node's own event (a typing of a client
	 * here, delivered before its signal exists): no fence can come with it,
	 * the primary answers it by design (docs/standbys.md, "What goes
	 * where"), and it is no signal's work, so not a background call.
	 */
	if (fence == 0 && db->reads != NULL && background_depth > 0)
		gw_read_stats_now.fallbacks[GW_READ_FALLBACK_UNFENCED]++;
	return submit_to(db, fence, sql, nparams, params, cb, arg);
}

gw_db_call *
gw_db_submit_params(gw_db *db, const char *sql, int nparams, const gw_db_param *params,
					gw_db_cb cb, void *arg)
{
	return submit_to(db, 0, sql, nparams, params, cb, arg);
}

/*
 * A call for the primary, or with a fence for a standby when the node has
 * any (dbread.c decides; without one it comes back here).
 */
static gw_db_call *
submit_to(gw_db *db, uint64_t fence, const char *sql, int nparams, const gw_db_param *params,
		  gw_db_cb cb, void *arg)
{
	gw_db_call *c;
	int			i;

	if (nparams > GW_DB_MAX_PARAMS || db->pending.count >= GW_DB_MAX_QUEUE)
		return NULL;
	if (background_depth > 0 && db->background.count >= GW_DB_MAX_BACKGROUND)
	{
		gw_stats.db_background_refused++;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->db = db;
	c->background = background_depth > 0;
	c->sql = sql;
	c->cb = cb;
	c->arg = arg;
	c->queued_at = lws_now_usecs();
	c->deadline = c->queued_at + (lws_usec_t) db->timeout_ms * LWS_US_PER_MS;
	lws_dll2_add_tail(&c->pending, &db->pending);
	for (i = 0; i < nparams; i++)
	{
		c->nparams = i;
		if (!copy_param(c, i, &params[i]))
		{
			c->cb = NULL;
			call_free(c);
			return NULL;
		}
	}
	c->nparams = nparams;
	arm_deadline(db);
	c->read.fence = fence;
	c->read.read_until = c->queued_at + (lws_usec_t) db->timeout_ms * LWS_US_PER_MS / 2;
	if (fence != 0 && db->reads != NULL && gw_dbread_take(db->reads, &c->read))
		return c;
	lws_dll2_add_tail(&c->queue, queue_of(c));
	dispatch(db);
	return c;
}

void
gw_db_background_begin(void)
{
	background_depth++;
}

void
gw_db_background_end(void)
{
	background_depth--;
}

gw_db_call *
gw_db_submit(gw_db *db, const char *sql, int nparams, const char *const *params,
		   gw_db_cb cb, void *arg)
{
	gw_db_param text[GW_DB_MAX_PARAMS];
	int			i;

	if (nparams > GW_DB_MAX_PARAMS)
		return NULL;
	for (i = 0; i < nparams; i++)
	{
		text[i].value = params[i];
		text[i].length = -1;
	}
	return gw_db_submit_params(db, sql, nparams, text, cb, arg);
}

void
gw_db_cancel(gw_db_call *c)
{
	if (c == NULL)
		return;
	c->cb = NULL;
	if (c->slot == NULL && c->read.slot == NULL)
	{
		lws_dll2_remove(&c->queue);
		call_free(c);
	}
}

bool
gw_db_bool_at(const PGresult *res, int col, bool *value)
{
	const char *v;

	if (res == NULL || PQntuples(res) != 1 || col >= PQnfields(res) || PQgetisnull(res, 0, col))
		v = NULL;
	else
		v = PQgetvalue(res, 0, col);
	if (v == NULL || (strcmp(v, "t") != 0 && strcmp(v, "f") != 0))
	{
		gw_log(GW_LOG_ERROR, "database answer not understood");
		return false;
	}
	*value = v[0] == 't';
	return true;
}

bool
gw_db_bool(const PGresult *res, bool *value)
{
	return res != NULL && PQnfields(res) == 1 && gw_db_bool_at(res, 0, value);
}

bool
gw_db_uuid_at(const PGresult *res, int row, int col, bothy_uuid *out)
{
	return !PQgetisnull(res, row, col) &&
		bothy_uuid_parse(PQgetvalue(res, row, col), (size_t) PQgetlength(res, row, col), out);
}

bool
gw_db_up(const gw_db *db)
{
	int			i;

	for (i = 0; i < db->nslots; i++)
		if (db->slots[i].pc.state == GW_PG_UP)
			return true;
	return false;
}

int
gw_db_pending(const gw_db *db)
{
	return (int) db->pending.count;
}

void
gw_db_destroy(gw_db *db)
{
	int			i;

	if (db == NULL)
		return;
	for (i = 0; i < db->nslots; i++)
	{
		db_slot    *slot = &db->slots[i];

		gw_pgconn_stop(&slot->pc);
		if (slot->first != NULL)
			PQclear(slot->first);
		if (slot->call != NULL)
		{
			slot->call->cb = NULL;
			slot->call->slot = NULL;
			call_free(slot->call);
		}
	}
	while (db->queue.head != NULL || db->background.head != NULL)
	{
		gw_db_call *c = lws_container_of(db->queue.head != NULL ? db->queue.head : db->background.head,
										 gw_db_call, queue);

		lws_dll2_remove(&c->queue);
		c->cb = NULL;
		call_free(c);
	}
	lws_sul_cancel(&db->sul_deadline);
	free(db->slots);
	free(db);
}
