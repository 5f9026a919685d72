/*
 * worker_maintenance.c
 *		The maintenance worker: every bothy.presence_flush_interval it expires
 *		the presence rows of silent nodes, sets offline the agents whose
 *		newest heartbeat is too old, releases lapsed consumer holds,
 *		decides hint or push for new notifications (also at once when a
 *		notification commits, which wakes it), ends the terminal sessions
 *		nobody else will end and prunes the terminal log.
 *
 * Each decision is made here once for the whole cluster, so no gateway needs
 * a timer that races another node's (docs/terminal.md, "The maintenance
 * worker"; docs/configuration.md, "The rules across two settings").  The work
 * itself is SQL (src/sql/45_maintenance.sql): an operator can read it, and
 * the same functions count what they did.  Each task runs in a transaction of
 * its own: a failing task is logged and counted and the next one still
 * runs.  The worker idles until the extension is installed at the version
 * this library was built for, so it survives DROP EXTENSION, CREATE
 * EXTENSION and a pending ALTER EXTENSION UPDATE.
 */
#include "postgres.h"

#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "settings.h"
#include "shmem.h"
#include "worker_common.h"

PGDLLEXPORT void bothy_maintenance_main(Datum arg);

/* Notifications decided per transaction; more are taken at once after. */
#define HINT_BATCH 500
/* Terminal sessions ended per transaction; likewise. */
#define TERMINAL_BATCH 500

typedef struct MaintenanceTask
{
	const char *name;			/* for the log */
	const char *sql;			/* one row, one integer: the items handled */
	int			batch;			/* > 0: run again while a full batch was handled */
	bool		on_wake;		/* also run when a commit woke the worker */
} MaintenanceTask;

static const MaintenanceTask tasks[] = {
	{"presence expiry", "SELECT bothy._presence_expire()", 0, false},
	{"agent offline", "SELECT bothy._agents_expire()", 0, false},
	{"hold release", "SELECT bothy._holds_expire()", 0, false},
	{"hint decision", "SELECT bothy._hints_decide(" CppAsString2(HINT_BATCH) ")", HINT_BATCH, true},
	{"terminal session", "SELECT bothy._terminal_sessions_expire(" CppAsString2(TERMINAL_BATCH) ")",
	TERMINAL_BATCH, false},
	{"terminal log", "SELECT bothy._terminal_log_prune()", 0, false},
};

typedef enum WorkState
{
	WORK_UNKNOWN,
	WORK_NO_EXTENSION,			/* not installed in bothy.database */
	WORK_OTHER_VERSION,			/* installed at a version this library does not drive */
	WORK_INCONSISTENT,			/* the settings break a cross-setting rule */
	WORK_READY
} WorkState;

/*
 * The installed extension version, or NULL: read in a transaction of its
 * own, in the caller's memory context.
 */
static char *
installed_version(void)
{
	MemoryContext caller = CurrentMemoryContext;
	char	   *version = NULL;

	StartTransactionCommand();
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (SPI_execute("SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'bothy'",
					true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_extension");
	if (SPI_processed == 1)
	{
		char	   *v = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		version = MemoryContextStrdup(caller, v);
	}
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	return version;
}

static WorkState
current_state(void)
{
	char	   *version;
	WorkState	state;

	/* DEBUG1: the state change below is the one record an operator reads */
	if (!bothy_settings_consistent(DEBUG1))
		return WORK_INCONSISTENT;
	version = installed_version();
	if (version == NULL)
		state = WORK_NO_EXTENSION;
	else if (strcmp(version, BOTHY_SCHEMA_VERSION) != 0)
		state = WORK_OTHER_VERSION;
	else
		state = WORK_READY;
	if (version != NULL)
		pfree(version);
	return state;
}

/* One log record when the worker starts or stops being able to work. */
static void
report_state(WorkState state)
{
	switch (state)
	{
		case WORK_READY:
			ereport(LOG, (errmsg("bothy maintenance is working")));
			break;
		case WORK_NO_EXTENSION:
			ereport(LOG, (errmsg("bothy maintenance waits for CREATE EXTENSION bothy in database \"%s\"",
								 bothy_database)));
			break;
		case WORK_OTHER_VERSION:
			ereport(LOG, (errmsg("bothy maintenance waits for ALTER EXTENSION bothy UPDATE to version %s",
								 BOTHY_SCHEMA_VERSION)));
			break;
		case WORK_INCONSISTENT:
			/* the presence rule's record is quoted by docs/operations.md */
			if (!bothy_settings_consistent_in(DEBUG1, BOTHY_SETTINGS_PRESENCE))
				ereport(LOG, (errmsg("bothy maintenance is paused: bothy.presence_ttl must be more than twice bothy.presence_flush_interval")));
			else
				ereport(LOG, (errmsg("bothy maintenance is paused: %s", bothy_settings_broken())));
			break;
		case WORK_UNKNOWN:
			break;
	}
}

/* run_task: the extension went away while the task ran. */
#define TASK_GONE (-2)

/*
 * Runs one task in a transaction of its own; the items handled, -1 on
 * failure, TASK_GONE when the extension was dropped (or changed version)
 * meanwhile.
 */
static int64
run_task(const MaintenanceTask *task)
{
	MemoryContext caller = CurrentMemoryContext;
	volatile int64 handled = -1;

	PG_TRY();
	{
		bool		isnull;
		Datum		d;

		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		SPI_connect();
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, task->sql);
		if (SPI_execute(task->sql, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "maintenance query returned no row");
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		handled = isnull ? 0 : DatumGetInt32(d);
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(caller);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		if (current_state() != WORK_READY)
		{
			/*
			 * DROP EXTENSION (or an update) came between the round's check
			 * and this task: not a failure of the task.  The next round
			 * logs the new state once.
			 */
			FreeErrorData(edata);
			handled = TASK_GONE;
		}
		else
		{
			/* the task's own error, at LOG: an ERROR would end the worker */
			edata->elevel = LOG;
			ThrowErrorData(edata);
			FreeErrorData(edata);
			bothy_count(BOTHY_ERRORS_MAINTENANCE, 1);
			ereport(LOG, (errmsg("bothy maintenance could not finish the %s task, trying again at the next interval",
								 task->name)));
			handled = -1;
		}
	}
	PG_END_TRY();
	pgstat_report_activity(STATE_IDLE, NULL);
	return handled;
}

static void
run_tasks(bool all)
{
	for (size_t i = 0; i < lengthof(tasks); i++)
	{
		const MaintenanceTask *task = &tasks[i];

		int64		handled;

		if (!all && !task->on_wake)
			continue;
		while ((handled = run_task(task)) >= task->batch && task->batch > 0)
			CHECK_FOR_INTERRUPTS();
		if (handled == TASK_GONE)
			return;				/* the extension went away during the round */
	}
}

void
bothy_maintenance_main(Datum arg)
{
	WorkState	state = WORK_UNKNOWN;
	TimestampTz next_round = 0;
	bool		woken = false;

	bothy_worker_attach(BOTHY_WORKER_MAINTENANCE, "bothy maintenance");

	/*
	 * The worker yields to anyone it waits for: a DROP EXTENSION, ALTER
	 * EXTENSION or an operator's LOCK takes the schema's objects in its own
	 * order, and the worker's task may hold one of them and wait for
	 * another.  With the default deadlock_timeout both sides check after
	 * a second, and the DDL was as likely to be the one cancelled.  The
	 * worker checks for a cycle after 10 ms of waiting, and gives up any
	 * lock wait after a second: its task is tried again at the next
	 * interval (logged and counted as a failed task).
	 */
	SetConfigOption("deadlock_timeout", "10ms", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("lock_timeout", "1s", PGC_SUSET, PGC_S_OVERRIDE);

	for (;;)
	{
		TimestampTz now = GetCurrentTimestamp();
		bool		round_due = now >= next_round;
		WorkState	new_state;
		long		wait_ms;

		if (round_due || woken)
		{
			new_state = current_state();
			if (new_state != state)
				report_state(new_state);
			state = new_state;
			if (state == WORK_READY)
				run_tasks(round_due);
		}
		if (round_due)
			next_round = TimestampTzPlusMilliseconds(now, bothy_presence_flush_interval_ms);
		wait_ms = (long) ((next_round - GetCurrentTimestamp()) / 1000);
		woken = bothy_worker_wait(Max(wait_ms, 1));
	}
}
