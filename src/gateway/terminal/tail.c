/*
 * terminal/tail.c
 *		The terminal log tail (see tail.h).
 */
#include <stdio.h>
#include <string.h>

#include "core/metrics.h"
#include "core/node.h"
#include "logline.h"
#include "terminal/settings.h"
#include "terminal/tail.h"

static const char sql_head[] = "SELECT bothy.terminal_log_head()";

/* 500: GW_TTAIL_BATCH */
static const char sql_after[] =
"SELECT seq, host, session, transition, state, grant_id, close_detail "
"FROM bothy.terminal_log_after($1::bigint, 500)";

gw_ttail_stats_t gw_ttail_stats;

static struct
{
	const gw_ttail_hooks *hooks;	/* gw_ttail_init */
	bool		known;			/* the head was read: last is a number of the log */
	int64_t		last;			/* the last number handed on */
	gw_db_call *call;			/* the running read, or NULL */
	bool		again;			/* woken while a read ran */
	bool		stopped;
	bool		failing;		/* the last read failed (logged once per run) */
	bool		gap;			/* the answer being handed on skipped numbers */
	lws_sorted_usec_list_t sul;	/* the poll */
} tail;

static void read_now(void);

static void
failed(gw_db_result result)
{
	gw_ttail_stats.read_failures++;
	if (!tail.failing)
		gw_logf(GW_LOG_WARN, "terminal log not read, retrying at the next poll", "result=%s",
				result == GW_DB_TIMEOUT ? "timeout" : "error");
	tail.failing = true;
}

static void
head_done(void *arg, gw_db_result result, const PGresult *res)
{
	int64_t		head = 0;

	(void) arg;
	tail.call = NULL;
	/* 0 for an empty log, else a number of it */
	if (result != GW_DB_OK || PQntuples(res) != 1 ||
		(strcmp(PQgetvalue(res, 0, 0), "0") != 0 && !gw_tlog_seq_parse(PQgetvalue(res, 0, 0), &head)))
	{
		failed(result);
		return;
	}
	tail.known = true;
	tail.last = head;
	gw_ttail_stats.seq = head;
	if (tail.failing)
		gw_log(GW_LOG_INFO, "terminal log read again");
	tail.failing = false;
	if (tail.again)
		read_now();
}

/* One row: parsed, then handed on (route.c: the control plane, then the relay). */
static bool
hand_on(const PGresult *res, int i)
{
	const char *cols[GW_TLOG_NCOLS];
	gw_tlog_row row;
	int64_t		seq;
	int			c;

	for (c = 0; c < GW_TLOG_NCOLS; c++)
		cols[c] = PQgetisnull(res, i, c) ? NULL : PQgetvalue(res, i, c);
	if (!gw_tlog_seq_parse(cols[GW_TLOG_COL_SEQ], &seq) || seq <= tail.last)
	{
		/* no number to go on from: the read is retried at the next poll */
		gw_log(GW_LOG_ERROR, "terminal log answer not understood");
		return false;
	}
	/*
	 * Numbers are drawn at commit under the log's lock, so a number skipped
	 * is a row pruned before this node read it (bothy.terminal_log_retention:
	 * a node away that long) or, rarely, one whose commit failed after
	 * drawing it.  Either way its state is read back, after this answer.
	 */
	if (seq > tail.last + 1)
		tail.gap = true;
	tail.last = seq;
	gw_ttail_stats.seq = seq;
	if (!gw_tlog_row_parse(cols, &row))
	{
		gw_ttail_stats.rows_dropped++;
		gw_log(GW_LOG_WARN, "terminal log row dropped as malformed");
		return true;
	}
	gw_ttail_stats.rows[row.transition]++;
	tail.hooks->row(&row);
	return true;
}

static void
after_done(void *arg, gw_db_result result, const PGresult *res)
{
	int			i,
				n;

	(void) arg;
	tail.call = NULL;
	if (result != GW_DB_OK || PQnfields(res) != GW_TLOG_NCOLS)
	{
		failed(result);
		return;
	}
	if (tail.failing)
		gw_log(GW_LOG_INFO, "terminal log read again");
	tail.failing = false;
	n = PQntuples(res);
	tail.gap = false;
	for (i = 0; i < n; i++)
		if (!hand_on(res, i))
			break;
	if (tail.gap)
	{
		gw_ttail_stats.gaps++;
		gw_log(GW_LOG_WARN, "terminal log rows missing after the last one read, reconciling");
		tail.hooks->gap();
	}
	if (i < n)
		return;
	/* a full batch: more rows wait */
	if (n == GW_TTAIL_BATCH || tail.again)
		read_now();
}

static void
read_now(void)
{
	char		after[24];
	const char *params[1] = {after};

	tail.again = false;
	if (tail.stopped)
		return;
	if (tail.call != NULL)
	{
		tail.again = true;
		return;
	}
	if (!tail.known)
	{
		tail.call = gw_db_submit(gw.db, sql_head, 0, NULL, head_done, NULL);
		if (tail.call == NULL)
			failed(GW_DB_ERROR);
		return;
	}
	snprintf(after, sizeof(after), "%lld", (long long) tail.last);
	tail.call = gw_db_submit(gw.db, sql_after, 1, params, after_done, NULL);
	if (tail.call == NULL)
		failed(GW_DB_ERROR);
}

static void
poll_cb(lws_sorted_usec_list_t *sul)
{
	(void) sul;
	read_now();
	if (!tail.stopped)
		lws_sul_schedule(gw.context, 0, &tail.sul, poll_cb,
						 (lws_usec_t) gw_tsettings.terminal_log_poll_interval * LWS_US_PER_MS);
}

void
gw_ttail_init(const gw_ttail_hooks *hooks)
{
	tail.hooks = hooks;
}

void
gw_ttail_start(void)
{
	tail.stopped = false;
	poll_cb(NULL);
}

void
gw_ttail_wake(int64_t seq)
{
	if (tail.known && seq != 0 && seq <= tail.last)
		return;
	read_now();
}

void
gw_ttail_stop(void)
{
	tail.stopped = true;
	lws_sul_cancel(&tail.sul);
}

void
gw_ttail_forget(void)
{
	gw_ttail_stop();
	tail.call = NULL;
}

bool
gw_ttail_idle(void)
{
	return tail.call == NULL;
}

void
gw_ttail_metrics(gw_metrics_out *out)
{
	const char *transitions[GW_TLOG_HOST_DISABLED + 1];
	int			i;

	for (i = 0; i <= GW_TLOG_HOST_DISABLED; i++)
		transitions[i] = gw_ttransition_name((gw_ttransition) i);
	gw_metrics_labelled(out, "bothy_terminal_log_rows_total", "Terminal log rows the tail read, by transition.",
						"transition", transitions, gw_ttail_stats.rows, GW_TLOG_HOST_DISABLED + 1);
	gw_metrics_counter(out, "bothy_terminal_log_rows_dropped_total",
					   "Terminal log rows dropped as malformed.", gw_ttail_stats.rows_dropped);
	gw_metrics_counter(out, "bothy_terminal_log_gaps_total",
					   "Reads of the terminal log that found numbers missing after the last one read "
					   "(then reconciled from the states).", gw_ttail_stats.gaps);
	gw_metrics_counter(out, "bothy_terminal_log_read_failures_total",
					   "Reads of the terminal log that failed (retried at the next poll).",
					   gw_ttail_stats.read_failures);
	gw_metrics_gauge(out, "bothy_terminal_log_seq",
					 "The last terminal log number this node read (0 before the first).",
					 (long long) gw_ttail_stats.seq);
}
