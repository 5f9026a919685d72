/*
 * worker_common.h
 *		What every bothy background worker does the same way: attach to
 *		bothy.database with the standard signal handlers, announce its latch,
 *		and sleep on it with reloads and interrupts handled.
 */
#ifndef BOTHY_WORKER_COMMON_H
#define BOTHY_WORKER_COMMON_H

#include "shmem.h"

/*
 * Installs SIGHUP (reload) and SIGTERM (die) handlers, connects to
 * bothy.database, names the process (pg_stat_activity.application_name and
 * backend_type are the name) and publishes its latch for wake-ups.
 */
extern void bothy_worker_attach(BothyWorker worker, const char *name);

/*
 * Handles interrupts (a SIGTERM exits) and a pending reload.  A worker that
 * stays busy without sleeping calls it between units of work, so that a
 * reload under steady load is not held off until the load ends.
 */
extern void bothy_worker_handle_interrupts(void);

/*
 * Sleeps until woken or timeout_ms passed (or the postmaster died: exit),
 * then handles interrupts and a pending reload.  Returns true when woken.
 */
extern bool bothy_worker_wait(long timeout_ms);

#endif							/* BOTHY_WORKER_COMMON_H */
