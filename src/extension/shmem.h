/*
 * shmem.h
 *		bothy's shared memory: the signal queue between committing backends
 *		and the fan-out worker, the workers' latches, and the metrics.
 */
#ifndef BOTHY_SHMEM_H
#define BOTHY_SHMEM_H

#include "port/atomics.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

#include "metrics.h"

typedef enum BothyWorker
{
	BOTHY_WORKER_FANOUT = 0,	/* sends queued signals on ephemeral */
	BOTHY_WORKER_MAINTENANCE,	/* expiry, agents offline, lapsed holds, hints */
	BOTHY_WORKER_COUNT
} BothyWorker;

typedef struct BothyShared
{
	LWLock	   *queue_lock;		/* guards every queue_* field */
	uint64		queue_head;		/* bytes ever written (next write position) */
	uint64		queue_tail;		/* bytes ever consumed by the fan-out worker */
	uint64		queue_reserved;	/* bytes promised to transactions between pre-commit and commit */
	uint32		queue_capacity;	/* size of queue_data in bytes */

	/*
	 * Each running worker's process latch (MyLatch), NULL while it does not
	 * run.  PGPROC latches live for the life of the server, so a stale
	 * pointer only ever wakes some other process spuriously.
	 */
	slock_t		latch_mutex;	/* guards worker_latch */
	Latch	   *worker_latch[BOTHY_WORKER_COUNT];

	BothyMetrics metrics;		/* counters, pg_atomic_uint64 each */

	/* signs every payload on ephemeral (channel.c); set once at startup */
	unsigned char channel_key[32];

	char		queue_data[FLEXIBLE_ARRAY_MEMBER];	/* the ring buffer */
} BothyShared;

extern BothyShared *bothy_shared;

extern void bothy_shmem_install_hooks(void);

/* Wake a worker if it is running; safe in any backend, never errors. */
extern void bothy_wake_worker(BothyWorker worker);

/* Whether a worker runs now (its latch is announced); never errors. */
extern bool bothy_worker_running(BothyWorker worker);

/* A worker announces its latch at start and withdraws it at exit. */
extern void bothy_worker_latch_publish(BothyWorker worker);

#endif							/* BOTHY_SHMEM_H */
