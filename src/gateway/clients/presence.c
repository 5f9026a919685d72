/*
 * clients/presence.c
 *		The node's presence writer (see presence.h; D-M7-17-6).
 *
 * What changed is kept as a set of gateway sessions, not of rows: the row
 * of a session is read from the hub when a flush is built, so a session
 * that changed five times in an interval costs one element, and one that
 * ended and came back is sent as it is now.  A session with a ready
 * person connection is a row; one without is an ended session.  Of two
 * ready connections of one session (a resume on this node while the old
 * connection is not closed yet) the row is the newer binding's: bind IDs
 * are UUIDv7s of the database, so the binding made last has the highest,
 * and the SQL side refuses a session twice in one flush.
 *
 * At most one flush is in flight.  Building a delta moves the changed set
 * aside (the flight) and starts a new one, so what changes meanwhile is
 * kept apart; a failed delta hands its flight back, a successful one only
 * the part it did not carry (a delta carries at most DELTA_MAX sessions,
 * and the rest follows at once in the next call).  A full flush needs no
 * set: it reads every ready person connection, which covers whatever
 * changed before it was built.  It cannot be split either, since the SQL
 * side deletes the node's rows that a full flush does not name.
 *
 * While no query connection is open, no flush is queued: the interval
 * counts a failure and the changes wait, instead of piling calls up in the
 * pool to time out one by one.
 */
#include <stdlib.h>
#include <string.h>

#include "clients/hub.h"
#include "clients/presence.h"
#include "clients/settings.h"
#include "clients/stats.h"
#include "core/node.h"
#include "core/uuidset.h"
#include "logline.h"

/* The most sessions (rows and ended) one delta carries. */
#define DELTA_MAX 10000

static const char sql_flush[] =
"SELECT bothy.presence_flush($1::uuid, $2::boolean, $3::uuid[], $4::uuid[], $5::uuid[], "
"$6::uuid[], $7::boolean[], $8::uuid[])";

static struct
{
	lws_sorted_usec_list_t sul;	/* the next interval */
	bool		started;		/* gw_presence_start was called */
	bool		stopping;		/* gw_presence_stop was called: no new flush */
	bool		need_full;		/* the next flush is a full one */
	bool		due;			/* an interval passed while a flush ran */
	bool		failing;		/* in a run of failures, logged at its start */
	bool		flight_full;	/* the flush in flight is a full one */
	uint64_t	run_failures;	/* failures of the current run */
	gw_db_call *call;			/* the flush in flight, or NULL */
	gw_uuidset	changed;		/* sessions changed or ended, not in flight */
	gw_uuidset	flight;			/* sessions of the delta in flight */
	size_t		flight_rest;	/* first slot of flight the delta did not carry */
} pw;

static void flush(void);

/* --- the rows ---------------------------------------------------------- */

static bool
is_row(const gw_client *c)
{
	return c->presence && c->conn.state == GW_CS_READY && c->kind == GW_CONN_PERSON;
}

static void
visit_newest(gw_client *c, void *arg)
{
	gw_client **newest = arg;

	if (is_row(c) &&
		(*newest == NULL || bothy_uuid_compare(&c->bind, &(*newest)->bind) > 0))
		*newest = c;
}

/* The connection whose row the session is, or NULL: the session ended. */
static gw_client *
row_of(const bothy_uuid *session)
{
	gw_client  *newest = NULL;

	gw_hub_each(&gw_clients_hub, GW_HUB_SESSION, session, visit_newest, &newest);
	return newest;
}

typedef struct other_counted
{
	const gw_client *except;
	bool		found;
} other_counted;

static void
visit_counted(gw_client *c, void *arg)
{
	other_counted *o = arg;

	if (c != o->except && c->presence)
		o->found = true;
}

/* Another connection of c's session is counted in the node's rows. */
static bool
session_counted_elsewhere(const gw_client *c)
{
	other_counted o = {c, false};

	gw_hub_each(&gw_clients_hub, GW_HUB_SESSION, &c->session, visit_counted, &o);
	return o.found;
}

/* --- the changed sessions ---------------------------------------------- */

static void
keep(const bothy_uuid *session)
{
	if (pw.stopping)
		return;
	/* out of memory: a full flush loses nothing, whatever was not kept */
	if (!gw_uuidset_add(&pw.changed, session))
		pw.need_full = true;
}

/* The flight's sessions from slot from on go back to the changed set. */
static bool
give_back(size_t from)
{
	const bothy_uuid *u;
	bool		any = false;

	while ((u = gw_uuidset_next(&pw.flight, &from)) != NULL)
	{
		keep(u);
		any = true;
	}
	gw_uuidset_clear(&pw.flight);
	return any;
}

/* --- the call ---------------------------------------------------------- */

/* A PostgreSQL array literal under construction: "{a,b,NULL}". */
typedef struct literal
{
	char	   *text;
	size_t		len;
} literal;

static bool
literal_init(literal *l, size_t n, size_t width)
{
	l->text = malloc(n * (width + 1) + 3);
	if (l->text == NULL)
		return false;
	l->text[0] = '{';
	l->len = 1;
	return true;
}

static void
literal_add(literal *l, const char *item, size_t n)
{
	if (l->len > 1)
		l->text[l->len++] = ',';
	memcpy(l->text + l->len, item, n);
	l->len += n;
}

static void
literal_uuid(literal *l, const bothy_uuid *u)
{
	char		text[BOTHY_UUID_STRLEN + 1];

	bothy_uuid_format(u, text);
	literal_add(l, text, BOTHY_UUID_STRLEN);
}

static void
literal_end(literal *l)
{
	l->text[l->len++] = '}';
	l->text[l->len] = '\0';
}

enum
{
	L_SESSIONS, L_PERSONS, L_DEVICES, L_FOCUS, L_IDLE, L_ENDED, N_LITERALS
};

static void
failed(bool full, const char *reason, const PGresult *res)
{
	const char *state = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	gw_clients_stats.presence_write_failures++;
	pw.run_failures++;
	if (pw.failing)
		return;
	/* one record per run of failures: an outage would repeat it each interval */
	pw.failing = true;
	gw_logf(GW_LOG_WARN, "gateway presence not written, retrying at the next interval",
			"kind=%s reason=%s sqlstate=%s", full ? "full" : "delta", reason,
			state != NULL ? state : "none");
}

static void
flush_done(void *arg, gw_db_result result, const PGresult *res)
{
	bool		full = pw.flight_full;
	const char *answer = NULL;

	(void) arg;
	pw.call = NULL;
	if (result == GW_DB_OK && PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
		answer = PQgetvalue(res, 0, 0);
	if (answer != NULL && strcmp(answer, "t") == 0)
	{
		bool		more = false;

		gw_clients_stats.presence_flushes[full ? 1 : 0]++;
		if (pw.failing)
		{
			gw_logf(GW_LOG_INFO, "gateway presence written again", "failures=%llu",
					(unsigned long long) pw.run_failures);
			pw.failing = false;
			pw.run_failures = 0;
		}
		if (full)
			pw.need_full = false;
		else
			more = give_back(pw.flight_rest);
		/* the rest of a large delta, or an interval that passed meanwhile */
		if (!pw.stopping && (more || pw.due))
			flush();
		return;
	}
	if (answer != NULL && !full && strcmp(answer, "f") == 0)
	{
		/* never flushed, expired, or emptied by a crash: the full flush covers all */
		gw_log(GW_LOG_INFO, "gateway presence missing in the database, sending every row");
		gw_uuidset_clear(&pw.flight);
		pw.need_full = true;
		if (!pw.stopping)
			flush();
		return;
	}
	pw.due = false;				/* the retry waits for the next interval */
	if (!full)
		give_back(0);
	failed(full, result == GW_DB_TIMEOUT ? "timeout" : result == GW_DB_OK ? "answer" : "error",
		   result == GW_DB_ERROR ? res : NULL);
}

/*
 * One call of bothy.presence_flush with the given rows and ended sessions.
 * On false (not sent) the caller's delta must be handed back.
 */
static bool
submit(bool full, gw_client *const *rows, size_t nrows, const bothy_uuid *ended, size_t nended)
{
	literal		l[N_LITERALS];
	const char *params[8];
	size_t		i;
	int			k,
				ok = 0;

	for (k = 0; k < N_LITERALS; k++)
	{
		size_t		width = k == L_IDLE ? 1 : BOTHY_UUID_STRLEN;

		if (literal_init(&l[k], k == L_ENDED ? nended : nrows, width))
			ok++;
		else
			l[k].text = NULL;
	}
	if (ok == N_LITERALS)
	{
		for (i = 0; i < nrows; i++)
		{
			const gw_client *c = rows[i];

			literal_uuid(&l[L_SESSIONS], &c->session);
			literal_uuid(&l[L_PERSONS], &c->principal);
			literal_uuid(&l[L_DEVICES], &c->device);
			if (c->has_focus)
				literal_uuid(&l[L_FOCUS], &c->focus);
			else
				literal_add(&l[L_FOCUS], "NULL", 4);
			literal_add(&l[L_IDLE], c->idle ? "t" : "f", 1);
		}
		for (i = 0; i < nended; i++)
			literal_uuid(&l[L_ENDED], &ended[i]);
		params[0] = gw.id_text;
		params[1] = full ? "true" : "false";
		for (k = 0; k < N_LITERALS; k++)
		{
			literal_end(&l[k]);
			params[2 + k] = l[k].text;
		}
		pw.flight_full = full;
		pw.call = gw_db_submit(gw.db, sql_flush, 8, params, flush_done, NULL);
	}
	for (k = 0; k < N_LITERALS; k++)
		free(l[k].text);
	if (pw.call == NULL)
	{
		failed(full, ok == N_LITERALS ? "queue" : "memory", NULL);
		return false;
	}
	return true;
}

/* --- the flushes ------------------------------------------------------- */

typedef struct collected
{
	gw_client **rows;
	size_t		n;
} collected;

static void
collect_row(gw_client *c, void *arg)
{
	collected  *all = arg;

	if (is_row(c) && row_of(&c->session) == c)
		all->rows[all->n++] = c;
}

static void
flush_full(void)
{
	collected	all = {NULL, 0};

	/* every change so far is in the rows read now */
	gw_uuidset_clear(&pw.changed);
	all.rows = malloc((gw_hub_count(&gw_clients_hub) + 1) * sizeof(gw_client *));
	if (all.rows == NULL)
	{
		failed(true, "memory", NULL);
		return;
	}
	gw_hub_each_conn(&gw_clients_hub, collect_row, &all);
	submit(true, all.rows, all.n, NULL, 0);
	free(all.rows);
}

static void
flush_delta(void)
{
	gw_uuidset	empty = pw.flight;
	size_t		n = pw.changed.count < DELTA_MAX ? pw.changed.count : DELTA_MAX;
	gw_client **rows = malloc((n + 1) * sizeof(gw_client *));
	bothy_uuid *ended = malloc((n + 1) * sizeof(bothy_uuid));
	size_t		nrows = 0,
				nended = 0,
				pos = 0;
	const bothy_uuid *u;

	if (rows == NULL || ended == NULL)
	{
		free(rows);
		free(ended);
		failed(false, "memory", NULL);
		return;
	}
	/* the changes from here on collect apart from this delta */
	pw.flight = pw.changed;
	pw.changed = empty;
	while (nrows + nended < n && (u = gw_uuidset_next(&pw.flight, &pos)) != NULL)
	{
		gw_client  *c = row_of(u);

		if (c != NULL)
			rows[nrows++] = c;
		else
			ended[nended++] = *u;
	}
	pw.flight_rest = pos;
	if (!submit(false, rows, nrows, ended, nended))
		give_back(0);
	free(rows);
	free(ended);
}

static void
flush(void)
{
	pw.due = false;
	if (!gw_db_up(gw.db))
	{
		failed(pw.need_full, "database_down", NULL);
		return;
	}
	if (pw.need_full)
		flush_full();
	else
		flush_delta();
}

static void
interval(lws_sorted_usec_list_t *sul)
{
	if (pw.stopping)
		return;
	lws_sul_schedule(gw.context, 0, sul, interval,
					 (lws_usec_t) gw_csettings.presence_flush_interval * LWS_US_PER_MS);
	if (pw.call != NULL)
	{
		/* one flush at a time: the next starts when this one is done */
		pw.due = true;
		return;
	}
	flush();
}

/* --- the interface ----------------------------------------------------- */

void
gw_presence_start(void)
{
	if (pw.started || pw.stopping)
		return;
	pw.started = true;
	pw.need_full = true;
	interval(&pw.sul);
}

bool
gw_presence_stop(void)
{
	if (!pw.stopping)
	{
		pw.stopping = true;
		lws_sul_cancel(&pw.sul);
	}
	if (pw.call != NULL)
		return false;
	gw_uuidset_free(&pw.changed);
	gw_uuidset_free(&pw.flight);
	return true;
}

void
gw_presence_changed(gw_client *c)
{
	if (!c->presence)
	{
		if (!session_counted_elsewhere(c))
			gw_clients_stats.presence_rows++;
		c->presence = 1;
	}
	keep(&c->session);
}

void
gw_presence_ended(gw_client *c)
{
	if (!c->presence)
		return;
	c->presence = 0;
	if (!session_counted_elsewhere(c))
		gw_clients_stats.presence_rows--;
	keep(&c->session);
}
