/*
 * clients/runs.c
 *		The run coalescer (see runs.h).
 *
 * One entry per run seen recently, in a small hash table: the highest
 * version signalled, the highest delivered, the window, and at most one
 * read in flight.  An entry without signals for RUN_IDLE_MS is dropped; it
 * remembers the delivered version until then, so a late or repeated
 * signal of an older version delivers nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "clients/audience.h"
#include "clients/deliver.h"
#include "clients/runs.h"
#include "clients/stats.h"
#include "core/db.h"
#include "core/log.h"
#include "core/node.h"
#include "core/uuidlist.h"

#define RUN_BUCKETS 1024		/* a power of two */
#define RUN_IDLE_MS 60000		/* an entry this long without a signal goes */

typedef struct run_entry
{
	lws_dll2_t	in_bucket;
	bothy_uuid	run;
	bothy_uuid	thread;			/* of the newest signal */
	int64_t		wanted;			/* highest version signalled */
	int64_t		reading;		/* the wanted version when the read in flight began */
	int64_t		delivered;		/* highest version delivered here; -1: none */
	int64_t		window_until;	/* gw_mono_ms: no read starts before */
	int64_t		last_signal;	/* gw_mono_ms */
	gw_db_call *call;			/* the read in flight */
	lws_sorted_usec_list_t sul; /* window end, or the idle expiry */
} run_entry;

static lws_dll2_owner_t buckets[RUN_BUCKETS];

static const char sql_read[] =
"SELECT d::text, d->>'version', "
"array_to_string(ARRAY(SELECT bothy.thread_audience($2::uuid, $3::uuid[])), ',') "
"FROM bothy.run_document($1::uuid) AS d";

static void start_read(run_entry *e);

static lws_dll2_owner_t *
bucket_of(const bothy_uuid *run)
{
	return &buckets[((unsigned) run->b[14] << 8 | run->b[15]) & (RUN_BUCKETS - 1)];
}

static run_entry *
find(const bothy_uuid *run)
{
	lws_dll2_t *d;

	for (d = bucket_of(run)->head; d != NULL; d = d->next)
	{
		run_entry  *e = lws_container_of(d, run_entry, in_bucket);

		if (bothy_uuid_compare(&e->run, run) == 0)
			return e;
	}
	return NULL;
}

static void
drop(run_entry *e)
{
	lws_sul_cancel(&e->sul);
	if (e->call != NULL)
		gw_db_cancel(e->call);
	lws_dll2_remove(&e->in_bucket);
	free(e);
}

static void
timer_cb(lws_sorted_usec_list_t *sul)
{
	run_entry  *e = lws_container_of(sul, run_entry, sul);
	int64_t		now = gw_mono_ms();

	if (e->call != NULL)
		return;					/* the read's end schedules what follows */
	if (e->wanted > e->delivered)
		start_read(e);
	else if (now - e->last_signal >= RUN_IDLE_MS)
		drop(e);
	else
		lws_sul_schedule(gw.context, 0, &e->sul, timer_cb,
						 (lws_usec_t) (e->last_signal + RUN_IDLE_MS - now) * LWS_US_PER_MS);
}

/* After a read, or when there was nobody to read for: what comes next. */
static void
schedule_next(run_entry *e)
{
	int64_t		now = gw_mono_ms();
	int64_t		at = e->wanted > e->delivered ? e->window_until : e->last_signal + RUN_IDLE_MS;

	lws_sul_schedule(gw.context, 0, &e->sul, timer_cb,
					 (lws_usec_t) (at > now ? at - now : 0) * LWS_US_PER_MS + 1);
}

static void
deliver_snapshot(run_entry *e, const PGresult *res)
{
	const char *doc = PQgetvalue(res, 0, 0);
	size_t		len = (size_t) PQgetlength(res, 0, 0);
	long		version = e->reading;
	bothy_uuid *persons;
	size_t		n;
	gw_text		ev;

	/*
	 * A replaced seam need not return the version, nor a sane one: the
	 * version signalled when the read began is the floor, so a lower or
	 * missing one can never make the run be read again and again.
	 */
	if (PQgetisnull(res, 0, 1) ||
		!gw_parse_int(PQgetvalue(res, 0, 1), 0, INT64_C(9007199254740991), &version) ||
		version < e->reading)
		version = e->reading;
	if (version <= e->delivered)
		return;
	e->delivered = version;
	if (version > e->wanted)
		e->wanted = version;
	if (!gw_parse_uuid_list(PQgetvalue(res, 0, 2), &persons, &n))
	{
		gw_log(GW_LOG_ERROR, "thread audience answer not understood");
		return;
	}
	if (!gw_event_run(&ev, doc, len))
	{
		gw_log(GW_LOG_WARN, "run document is not a JSON object, not delivered");
		free(persons);
		return;
	}
	/* a document no client queue could hold would close every subscriber (4008) */
	if (ev.len > (size_t) gw.opt.send_queue / 2)
	{
		gw_clients_stats.runs_too_large++;
		gw_log(GW_LOG_WARN, "run document too large to deliver");
	}
	else
	{
		gw_clients_stats.run_snapshots++;
		gw_deliver_to_persons(GW_EV_RUN, &ev, persons, n, NULL);
	}
	gw_text_free(&ev);
	free(persons);
}

static void
read_done(void *arg, gw_db_result result, const PGresult *res)
{
	run_entry  *e = arg;

	e->call = NULL;
	if (result == GW_DB_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
		deliver_snapshot(e, res);
	else
	{
		/* lost, as a lost signal: the next signal of the run reads again */
		if (result != GW_DB_OK)
			gw_clients_stats.run_read_failures++;
		e->wanted = e->delivered;
	}
	schedule_next(e);
}

static void
start_read(run_entry *e)
{
	char		run[BOTHY_UUID_STRLEN + 1],
				thread[BOTHY_UUID_STRLEN + 1];
	const char *params[3] = {run, thread, NULL};
	bothy_uuid *persons;
	size_t		n;
	char	   *list;

	e->window_until = gw_mono_ms() + gw.opt.run_coalesce_ms;
	e->reading = e->wanted;
	persons = NULL;
	if (!gw_local_persons(&persons, &n) || n == 0)
	{
		/* nobody here to tell: nothing to read */
		free(persons);
		e->delivered = e->wanted;
		schedule_next(e);
		return;
	}
	list = gw_uuid_array_literal(persons, n);
	free(persons);
	bothy_uuid_format(&e->run, run);
	bothy_uuid_format(&e->thread, thread);
	params[2] = list;
	e->call = list != NULL ? gw_db_submit(gw.db, sql_read, 3, params, read_done, e) : NULL;
	free(list);
	if (e->call == NULL)
	{
		e->wanted = e->delivered;
		schedule_next(e);
	}
}

void
gw_runs_signal(const bothy_signal *sig)
{
	run_entry  *e = find(&sig->run);
	int64_t		now = gw_mono_ms();

	if (e == NULL)
	{
		e = calloc(1, sizeof(*e));
		if (e == NULL)
			return;
		e->run = sig->run;
		e->wanted = e->delivered = -1;
		lws_dll2_add_tail(&e->in_bucket, bucket_of(&sig->run));
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
	if (e->call != NULL)
		return;
	if (now >= e->window_until)
		start_read(e);
	else
		schedule_next(e);
}

void
gw_runs_stop(void)
{
	int			i;

	for (i = 0; i < RUN_BUCKETS; i++)
		while (buckets[i].head != NULL)
			drop(lws_container_of(buckets[i].head, run_entry, in_bucket));
}
