/*
 * bothy.c
 *		Module entry: _PG_init defines the settings and refuses to run unless
 *		the library is preloaded.
 *
 * bothy must be in shared_preload_libraries: its background workers and
 * shared memory (the signal queue) can only be set up by the postmaster,
 * and a backend that loaded the library late would run with none of them.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"

#include "bothy_ext.h"
#include "channel.h"
#include "settings.h"
#include "shmem.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/*
 * Workers start when recovery finished, connect to bothy.database, and are
 * restarted a second after they exit or crash.
 */
static void
register_worker(const char *name, const char *function)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "bothy");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "%s", function);
	snprintf(worker.bgw_name, BGW_MAXLEN, "%s", name);
	snprintf(worker.bgw_type, BGW_MAXLEN, "%s", name);
	RegisterBackgroundWorker(&worker);
}

void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bothy must be loaded via shared_preload_libraries"),
				 errhint("Add bothy to shared_preload_libraries in postgresql.conf and restart the server.")));

	bothy_settings_define();

	/*
	 * Inside the postmaster this ERROR becomes FATAL, so the server refuses
	 * to start on an inconsistent configuration instead of running with it.
	 */
	bothy_settings_consistent(ERROR);

	bothy_shmem_install_hooks();
	bothy_channel_guard_install();
	/* every backend forked from here inherits the staging callbacks */
	bothy_stage_register_callbacks();
	register_worker("bothy fan-out", "bothy_fanout_main");
	register_worker("bothy maintenance", "bothy_maintenance_main");
}
