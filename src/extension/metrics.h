/*
 * metrics.h
 *		Counters kept in shared memory and read by bothy.metrics().
 *
 * Every counter is a pg_atomic_uint64 that only grows: producers and
 * workers add without a lock, and a reader sees each counter exactly.
 */
#ifndef BOTHY_METRICS_H
#define BOTHY_METRICS_H

#include "port/atomics.h"

#include "signal.h"

/* Per-kind signal counters. */
typedef enum BothySignalCounter
{
	BOTHY_SIGNALS_STAGED = 0,	/* committed by a producer (queued or sent by fallback) */
	BOTHY_SIGNALS_SENT,			/* notified by the fan-out worker */
	BOTHY_SIGNALS_COALESCED,	/* dropped: a newer one in the worker's batch, or in a fallback, said it */
	BOTHY_SIGNALS_FALLBACK,		/* sent by a plain NOTIFY in the producer's transaction */
	BOTHY_SIGNALS_LOST,			/* taken from the queue, then its sending transaction failed */
	BOTHY_SIGNAL_COUNTER_COUNT
} BothySignalCounter;

/*
 * Counters of the workers' work.  Their SQL names are in metrics.c; the
 * SQL functions that do the work count it there with bothy._metrics_add().
 */
typedef enum BothyCounter
{
	BOTHY_PRESENCE_ROWS_EXPIRED = 0,	/* presence rows of nodes silent for the TTL */
	BOTHY_AGENTS_OFFLINE,		/* agents set offline from their newest heartbeat */
	BOTHY_HOLDS_RELEASED,		/* consumer holds whose lease lapsed */
	BOTHY_HINTS_SENT,			/* notifications signalled as gateway.hint */
	BOTHY_PUSHES_QUEUED,		/* notifications put in the push outbox */
	BOTHY_PUSHES_CLAIMED,		/* push outbox rows claimed by a sender */
	BOTHY_FANOUT_BATCHES,		/* transactions the fan-out worker committed */
	BOTHY_ERRORS_FANOUT,		/* a batch the fan-out worker failed to send */
	BOTHY_FANOUT_REACHED,		/* audience signals sent with their nodes' reach */
	BOTHY_ERRORS_REACH,			/* a batch whose reach bothy.thread_nodes failed to give */
	BOTHY_ERRORS_MAINTENANCE,	/* a task or an item the maintenance worker failed */
	BOTHY_TERMINAL_EXPIRED_OPEN_TIMEOUT,	/* openings the worker ended: open_timeout */
	BOTHY_TERMINAL_EXPIRED_HOST_DISABLED,	/* sessions of a disabled host it ended */
	BOTHY_TERMINAL_EXPIRED_HOST_PAIRING,	/* sessions of a host back to pairing it ended */
	BOTHY_TERMINAL_EXPIRED_IDLE,	/* sessions detached too long it ended */
	BOTHY_TERMINAL_LOG_PRUNED,	/* terminal log rows past their retention */
	BOTHY_COUNTER_COUNT
} BothyCounter;

typedef struct BothyMetrics
{
	pg_atomic_uint64 signals[BOTHY_SIGNAL_COUNTER_COUNT][BOTHY_KIND_COUNT];
	pg_atomic_uint64 counters[BOTHY_COUNTER_COUNT];
} BothyMetrics;

extern void bothy_metrics_init(BothyMetrics *metrics);
extern void bothy_count_signal(BothySignalCounter counter, bothy_kind kind, uint64 n);
extern void bothy_count(BothyCounter counter, uint64 n);

#endif							/* BOTHY_METRICS_H */
