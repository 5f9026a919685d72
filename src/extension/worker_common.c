/*
 * worker_common.c
 *		The start and the sleep shared by bothy's background workers, in the
 *		shape of worker_spi: handlers installed before signals are unblocked,
 *		sleeping only in WaitLatch with WL_EXIT_ON_PM_DEATH, then
 *		ResetLatch, CHECK_FOR_INTERRUPTS and a reload when one is pending.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"

#include "settings.h"
#include "worker_common.h"

void
bothy_worker_attach(BothyWorker worker, const char *name)
{
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(bothy_database, NULL, 0);
	pgstat_report_appname(name);
	bothy_worker_latch_publish(worker);
}

void
bothy_worker_handle_interrupts(void)
{
	CHECK_FOR_INTERRUPTS();
	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
	}
}

bool
bothy_worker_wait(long timeout_ms)
{
	int			rc;

	rc = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
				   timeout_ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	bothy_worker_handle_interrupts();
	return (rc & WL_LATCH_SET) != 0;
}
