/*
 * metrics.c
 *		The shared counters of signals and of the workers' work, and their
 *		SQL side: bothy.metrics() reads them, bothy._metrics_add() lets the
 *		extension's SQL functions count the work they did.
 *
 * Counting where the work happens (in the SQL function that expired the rows
 * or queued the push) means a counter moves whoever did the work: the
 * maintenance worker, or a gateway's presence flush that expired a silent
 * node first.  Counters are not transactional: work counted by a
 * transaction that then rolls back stays counted, which only the rare
 * failed commit can cause.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "shmem.h"

/* The name and label of each counter in bothy.metrics(). */
typedef struct CounterName
{
	const char *metric;
	const char *label;			/* NULL: the metric has no label */
} CounterName;

static const CounterName counter_names[BOTHY_COUNTER_COUNT] = {
	[BOTHY_PRESENCE_ROWS_EXPIRED] = {"presence_rows_expired", NULL},
	[BOTHY_AGENTS_OFFLINE] = {"agents_offline", NULL},
	[BOTHY_HOLDS_RELEASED] = {"holds_released", NULL},
	[BOTHY_HINTS_SENT] = {"hints_sent", NULL},
	[BOTHY_PUSHES_QUEUED] = {"pushes_queued", NULL},
	[BOTHY_PUSHES_CLAIMED] = {"pushes_claimed", NULL},
	[BOTHY_FANOUT_BATCHES] = {"fanout_batches", NULL},
	[BOTHY_ERRORS_FANOUT] = {"worker_errors", "fanout"},
	[BOTHY_FANOUT_REACHED] = {"signals_reached", NULL},
	[BOTHY_ERRORS_REACH] = {"worker_errors", "reach"},
	[BOTHY_ERRORS_MAINTENANCE] = {"worker_errors", "maintenance"},
	[BOTHY_TERMINAL_EXPIRED_OPEN_TIMEOUT] = {"terminal_sessions_expired", "open_timeout"},
	[BOTHY_TERMINAL_EXPIRED_HOST_DISABLED] = {"terminal_sessions_expired", "host_disabled"},
	[BOTHY_TERMINAL_EXPIRED_HOST_PAIRING] = {"terminal_sessions_expired", "host_pairing"},
	[BOTHY_TERMINAL_EXPIRED_IDLE] = {"terminal_sessions_expired", "idle"},
	[BOTHY_TERMINAL_LOG_PRUNED] = {"terminal_log_pruned", NULL},
};

static const char *const signal_counter_names[BOTHY_SIGNAL_COUNTER_COUNT] = {
	[BOTHY_SIGNALS_STAGED] = "signals_staged",
	[BOTHY_SIGNALS_SENT] = "signals_sent",
	[BOTHY_SIGNALS_COALESCED] = "signals_coalesced",
	[BOTHY_SIGNALS_FALLBACK] = "signals_fallback",
	[BOTHY_SIGNALS_LOST] = "signals_lost",
};

void
bothy_metrics_init(BothyMetrics *metrics)
{
	for (int c = 0; c < BOTHY_SIGNAL_COUNTER_COUNT; c++)
		for (int k = 0; k < BOTHY_KIND_COUNT; k++)
			pg_atomic_init_u64(&metrics->signals[c][k], 0);
	for (int c = 0; c < BOTHY_COUNTER_COUNT; c++)
		pg_atomic_init_u64(&metrics->counters[c], 0);
}

void
bothy_count_signal(BothySignalCounter counter, bothy_kind kind, uint64 n)
{
	if (bothy_shared != NULL && kind > BOTHY_KIND_NONE && kind < BOTHY_KIND_COUNT && n > 0)
		pg_atomic_fetch_add_u64(&bothy_shared->metrics.signals[counter][kind], n);
}

void
bothy_count(BothyCounter counter, uint64 n)
{
	if (bothy_shared != NULL && n > 0)
		pg_atomic_fetch_add_u64(&bothy_shared->metrics.counters[counter], n);
}

static void
put_metric(ReturnSetInfo *rsinfo, const char *metric, const char *label, uint64 value)
{
	Datum		values[3];
	bool		nulls[3] = {false, label == NULL, false};

	values[0] = CStringGetTextDatum(metric);
	values[1] = label != NULL ? CStringGetTextDatum(label) : (Datum) 0;
	/* a bigint counter wraps after 2^63 events, centuries away */
	values[2] = Int64GetDatum((int64) value);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

PG_FUNCTION_INFO_V1(bothy_metrics);

/*
 * bothy.metrics() returns (metric, label, value): every signal counter per
 * kind (the label is the kind), then every work counter.  All rows always
 * appear, zeros included, so a monitoring query never misses a series.
 */
Datum
bothy_metrics(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	InitMaterializedSRF(fcinfo, 0);
	if (bothy_shared == NULL)
		elog(ERROR, "bothy shared memory is not attached");
	/* wal.fence, the last kind, is the fan-out worker's own: no producer's signal */
	StaticAssertStmt(BOTHY_KIND_WAL_FENCE == BOTHY_KIND_COUNT - 1, "wal.fence must be the last kind");
	for (int c = 0; c < BOTHY_SIGNAL_COUNTER_COUNT; c++)
		for (int k = BOTHY_KIND_NONE + 1; k < BOTHY_KIND_WAL_FENCE; k++)
			put_metric(rsinfo, signal_counter_names[c], bothy_kind_name((bothy_kind) k),
					   pg_atomic_read_u64(&bothy_shared->metrics.signals[c][k]));
	for (int c = 0; c < BOTHY_COUNTER_COUNT; c++)
		put_metric(rsinfo, counter_names[c].metric, counter_names[c].label,
				   pg_atomic_read_u64(&bothy_shared->metrics.counters[c]));
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(bothy_metrics_add);

/*
 * bothy._metrics_add(metric, label, n): adds n to a work counter named as
 * bothy.metrics() names it.  Internal: only the extension's functions call
 * it, so an unknown name is a bug and an error.
 */
Datum
bothy_metrics_add(PG_FUNCTION_ARGS)
{
	char	   *metric;
	char	   *label;
	int64		n;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(2))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						errmsg("metric and n must not be null")));
	metric = text_to_cstring(PG_GETARG_TEXT_PP(0));
	label = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	n = PG_GETARG_INT64(2);
	if (n < 0)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						errmsg("a counter only grows: n must not be negative")));
	for (int c = 0; c < BOTHY_COUNTER_COUNT; c++)
		if (strcmp(counter_names[c].metric, metric) == 0 &&
			(counter_names[c].label == NULL) == (label == NULL) &&
			(label == NULL || strcmp(counter_names[c].label, label) == 0))
		{
			bothy_count((BothyCounter) c, (uint64) n);
			PG_RETURN_VOID();
		}
	ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					errmsg("\"%s\" is not a bothy work counter", metric)));
}
