/*
 * bothy.c
 *		Module entry: _PG_init defines the settings and refuses to run unless
 *		the library is preloaded.
 *
 * bothy must be in shared_preload_libraries: its background workers and
 * shared memory can only be set up by the postmaster, and a backend that
 * loaded the library late would run with none of them.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "settings.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

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
}
