/*
 * metrics.c
 *		The shared counters of signals and of the workers' work.  Their SQL
 *		reader, bothy.metrics(), comes with the next extension version.
 */
#include "postgres.h"

#include "shmem.h"

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
