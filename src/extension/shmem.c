/*
 * shmem.c
 *		Setting up bothy's shared memory (PG 15: shmem_request_hook for the
 *		request, shmem_startup_hook for the initialisation, each chained to
 *		the hook installed before ours) and waking the workers.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"

#include "channel.h"
#include "settings.h"
#include "shmem.h"

#define BOTHY_LWLOCK_TRANCHE "bothy"

BothyShared *bothy_shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static Size
bothy_shmem_size(void)
{
	return add_size(offsetof(BothyShared, queue_data),
					(Size) bothy_signal_queue_size_kb * 1024);
}

static void
bothy_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(bothy_shmem_size());
	RequestNamedLWLockTranche(BOTHY_LWLOCK_TRANCHE, 1);
}

static void
bothy_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	bothy_shared = ShmemInitStruct("bothy", bothy_shmem_size(), &found);
	if (!found)
	{
		bothy_shared->queue_lock = &(GetNamedLWLockTranche(BOTHY_LWLOCK_TRANCHE))->lock;
		bothy_shared->queue_head = 0;
		bothy_shared->queue_tail = 0;
		bothy_shared->queue_reserved = 0;
		bothy_shared->queue_capacity = (uint32) bothy_signal_queue_size_kb * 1024;
		SpinLockInit(&bothy_shared->latch_mutex);
		for (int w = 0; w < BOTHY_WORKER_COUNT; w++)
			bothy_shared->worker_latch[w] = NULL;
		bothy_metrics_init(&bothy_shared->metrics);
		bothy_channel_key_init(bothy_shared->channel_key);
	}
	LWLockRelease(AddinShmemInitLock);
}

void
bothy_shmem_install_hooks(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = bothy_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = bothy_shmem_startup;
}

void
bothy_wake_worker(BothyWorker worker)
{
	Latch	   *latch;

	if (bothy_shared == NULL)
		return;
	SpinLockAcquire(&bothy_shared->latch_mutex);
	latch = bothy_shared->worker_latch[worker];
	SpinLockRelease(&bothy_shared->latch_mutex);
	if (latch != NULL)
		SetLatch(latch);
}

bool
bothy_worker_running(BothyWorker worker)
{
	bool		running;

	if (bothy_shared == NULL)
		return false;
	SpinLockAcquire(&bothy_shared->latch_mutex);
	running = bothy_shared->worker_latch[worker] != NULL;
	SpinLockRelease(&bothy_shared->latch_mutex);
	return running;
}

static void
withdraw_latch(int code, Datum arg)
{
	BothyWorker worker = (BothyWorker) DatumGetInt32(arg);

	SpinLockAcquire(&bothy_shared->latch_mutex);
	if (bothy_shared->worker_latch[worker] == MyLatch)
		bothy_shared->worker_latch[worker] = NULL;
	SpinLockRelease(&bothy_shared->latch_mutex);
}

void
bothy_worker_latch_publish(BothyWorker worker)
{
	SpinLockAcquire(&bothy_shared->latch_mutex);
	bothy_shared->worker_latch[worker] = MyLatch;
	SpinLockRelease(&bothy_shared->latch_mutex);
	on_shmem_exit(withdraw_latch, Int32GetDatum((int32) worker));
}
