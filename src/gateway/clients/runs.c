/*
 * clients/runs.c
 *		The run coalescer (see runs.h).
 *
 * One entry per run seen recently, in a small hash table: the highest
 * version signalled, the highest delivered, the window, and at most one
 * read in flight.  An entry without signals for RUN_IDLE_MS is dropped; it
 * remembers the delivered version until then, so a late or repeated
 * signal of an older version delivers nothing.
 *
 * A signal is a hint to look, never the authority (docs/security.md): the
 * document read says which thread the run is in and which version it is
 * at.  The audience is asked for the thread the read used; when the
 * document names another one, nothing is delivered and the run is read
 * again at once with the document's thread.  What is counted delivered is
 * the document's version, never the signal's: a version signalled beyond
 * the document's is forgotten, so it cannot hold back the next real one.
 */
#include <stdlib.h>
#include <string.h>

#include "clients/audience.h"
#include "clients/deliver.h"
#include "clients/hub.h"
#include "clients/runs.h"
#include "clients/settings.h"
#include "clients/stats.h"
#include "core/listener.h"
#include "core/loop.h"
#include "core/node.h"
#include "core/uuidmap.h"
#include "intparse.h"
#include "logline.h"

#define RUN_BUCKETS 1024		/* a power of two */
#define RUN_IDLE_MS 60000		/* an entry this long without a signal goes */

typedef struct run_entry
{
	gw_uuidmap_link in_runs;	/* runs, by run */
	bothy_uuid	run;
	bothy_uuid	thread;			/* of the newest signal, or of the document read */
	bothy_uuid	reading_thread;	/* the thread the read in flight asks the audience of */
	bool		reread;			/* the document named another thread: read again at once */
	int64_t		wanted;			/* highest version signalled */
	int64_t		reading;		/* the wanted version when the read in flight began */
	int64_t		delivered;		/* highest version delivered here; -1: none */
	int64_t		window_until;	/* gw_mono_ms: no read starts before */
	int64_t		last_signal;	/* gw_mono_ms */
	gw_audience_call *call;		/* the read in flight */
	uint64_t	fence;			/* highest fence of the signals since the last read began */
	bool		unfenced;		/* ... one of them had none: the primary reads */
	gw_text		ev;				/* its event, once the document is read */
	gw_timer	timer;			/* window end, or the idle expiry (a loop timer: core/loop.h) */
} run_entry;

static const bothy_uuid *run_key(const gw_uuidmap_link *l);

static gw_uuidmap_link *buckets[RUN_BUCKETS];
static gw_uuidmap runs = GW_UUIDMAP_FIXED(buckets, run_key);

/* A read: the document, its version, its thread and the persons here admitted. */
static const char sql_read[] =
"SELECT d::text, d->>'version', d->>'thread', " GW_AUDIENCE_HERE_COLUMN("$2", "$3") " "
"FROM bothy.run_document($1::uuid) AS d";

static void start_read(run_entry *e);

static const bothy_uuid *
run_key(const gw_uuidmap_link *l)
{
	return &lws_container_of(l, run_entry, in_runs)->run;
}

static run_entry *
find(const bothy_uuid *run)
{
	gw_uuidmap_link *l = gw_uuidmap_first(&runs, run);

	return l == NULL ? NULL : lws_container_of(l, run_entry, in_runs);
}

static void
drop(run_entry *e)
{
	gw_timer_cancel(&e->timer);
	gw_audience_cancel(e->call);
	gw_text_free(&e->ev);
	gw_uuidmap_remove(&runs, &e->in_runs);
	free(e);
}

static void
timer_cb(gw_timer *t)
{
	run_entry  *e = lws_container_of(t, run_entry, timer);
	int64_t		now = gw_mono_ms();

	if (e->call != NULL)
		return;					/* the read's end schedules what follows */
	if (e->wanted > e->delivered)
	{
		/* a signal's work, as the listener's hand-off marks it (core/db.h) */
		gw_db_background_begin();
		start_read(e);
		gw_db_background_end();
	}
	else if (now - e->last_signal >= RUN_IDLE_MS)
		drop(e);
	else
		gw_timer_schedule(&e->timer, (lws_usec_t) (e->last_signal + RUN_IDLE_MS - now) * LWS_US_PER_MS);
}

/* After a read, or when there was nobody to read for: what comes next. */
static void
schedule_next(run_entry *e)
{
	int64_t		now = gw_mono_ms();
	int64_t		at = e->wanted > e->delivered ? e->window_until : e->last_signal + RUN_IDLE_MS;

	gw_timer_schedule(&e->timer, (lws_usec_t) (at > now ? at - now : 0) * LWS_US_PER_MS + 1);
}

/*
 * The read's answer: the document, its version and its thread, then the
 * persons here admitted.  False when nothing is to be delivered.
 */
static void
read_deliver(run_entry *e, bool ok, const PGresult *res, const bothy_uuid *admitted, size_t n)
{
	long		version;
	bothy_uuid	thread;

	if (!ok || PQnfields(res) != 4 || PQgetisnull(res, 0, 0))
	{
		/* lost, as a lost signal (or an unknown run): the next signal reads again */
		if (!ok)
			gw_clients_stats.run_read_failures++;
		e->wanted = e->delivered;
		return;
	}

	/*
	 * A replaced seam must return the stored version and thread
	 * (docs/sql-api.md, "Replacing the seam"): without them no audience and
	 * no order can be trusted, so nothing is delivered.
	 */
	if (PQgetisnull(res, 0, 1) || PQgetisnull(res, 0, 2) ||
		!bothy_parse_int(PQgetvalue(res, 0, 1), 0, INT64_C(9007199254740991), &version) ||
		!gw_db_uuid_at(res, 0, 2, &thread))
	{
		gw_log(GW_LOG_WARN, "run document without its version or thread, not delivered");
		e->wanted = e->delivered;
		return;
	}
	if (bothy_uuid_compare(&thread, &e->reading_thread) != 0)
	{
		/* the audience asked was another thread's: ask again, of the run's own */
		gw_clients_stats.runs_contradicted++;
		e->thread = thread;
		e->reread = true;
		return;
	}
	if (version < e->reading)
	{
		/* a version the database never had: forgotten, unless a newer signal came */
		gw_clients_stats.runs_contradicted++;
		if (e->wanted == e->reading)
			e->wanted = version > e->delivered ? version : e->delivered;
	}
	if (version <= e->delivered)
		return;
	e->delivered = version;
	if (version > e->wanted)
		e->wanted = version;
	if (!gw_event_run(&e->ev, PQgetvalue(res, 0, 0), (size_t) PQgetlength(res, 0, 0)))
	{
		gw_log(GW_LOG_WARN, "run document is not a JSON object, not delivered");
		return;
	}
	/* a document no client queue could hold would close every subscriber (4008) */
	if (e->ev.len > (size_t) gw.opt.send_queue / 2)
	{
		gw_clients_stats.runs_too_large++;
		gw_log(GW_LOG_WARN, "run document too large to deliver");
		gw_text_free(&e->ev);
		return;
	}
	gw_clients_stats.run_snapshots++;
	gw_deliver_to_persons(GW_EV_RUN, &e->ev, admitted, n, NULL);
}

static void
read_answered(void *arg, bool ok, const PGresult *res, const bothy_uuid *admitted, size_t n)
{
	run_entry  *e = arg;

	e->call = NULL;
	read_deliver(e, ok, res, admitted, n);
	gw_text_free(&e->ev);
	if (e->reread)
	{
		e->reread = false;
		e->window_until = 0;	/* the document's own thread, at once */
	}
	schedule_next(e);
}

static void
start_read(run_entry *e)
{
	char		run[BOTHY_UUID_STRLEN + 1];
	const char *params[1] = {run};
	uint64_t	fence;

	e->window_until = gw_mono_ms() + gw_copt.run_coalesce_ms;
	e->reading = e->wanted;
	if (gw_hub_count(&gw_clients_hub) == 0)
	{
		/* nobody here to tell: nothing to read */
		e->delivered = e->wanted;
		schedule_next(e);
		return;
	}
	bothy_uuid_format(&e->run, run);
	fence = e->unfenced ? 0 : e->fence;
	e->fence = 0;
	e->unfenced = false;
	e->reading_thread = e->thread;
	e->call = gw_audience_ask_here(sql_read, 1, params, &e->thread, fence, read_answered, e);
	if (e->call == NULL)
	{
		e->wanted = e->delivered;
		schedule_next(e);
	}
}

void
gw_runs_signal(const bothy_signal *sig)
{
	run_entry  *e;
	int64_t		now = gw_mono_ms();

	if (!gw_signal_reaches_here(sig))
		return;
	e = find(&sig->run);
	if (e == NULL)
	{
		e = calloc(1, sizeof(*e));
		if (e == NULL)
			return;
		e->run = sig->run;
		e->wanted = e->delivered = -1;
		gw_timer_init(&e->timer, timer_cb);
		gw_uuidmap_add(&runs, &e->in_runs);	/* fixed: cannot fail */
	}
	e->last_signal = now;
	if (sig->version <= e->wanted || sig->version <= e->delivered)
	{
		gw_clients_stats.runs_coalesced++;
		return;
	}
	/* a version not yet read: the read of the window's end will carry it */
	if (e->wanted > e->delivered)
		gw_clients_stats.runs_coalesced++;
	e->wanted = sig->version;
	e->thread = sig->thread;
	/* the read must see this version's commit: the highest fence, or none */
	if (gw_listener_fence() == 0)
		e->unfenced = true;
	else if (gw_listener_fence() > e->fence)
		e->fence = gw_listener_fence();
	if (e->call != NULL)
		return;
	if (now >= e->window_until)
		start_read(e);
	else
		schedule_next(e);
}

static bool
drop_each(gw_uuidmap_link *l, void *arg)
{
	(void) arg;
	drop(lws_container_of(l, run_entry, in_runs));
	return true;
}

void
gw_runs_stop(void)
{
	gw_uuidmap_each(&runs, drop_each, NULL);
}
