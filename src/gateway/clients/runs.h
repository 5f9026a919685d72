/*
 * clients/runs.h
 *		Run updates (D-M7-17-5): the coalescer that turns gateway.run
 *		signals into run.updated snapshots for the persons here who may see
 *		the run's thread.
 *
 * At most one snapshot per run per --run-coalesce window per node: the
 * first signal after a quiet window is read and delivered at once (no
 * added latency), the ones that arrive within the window are folded into
 * one read at its end, and the highest version wins.  The snapshot is the
 * document the database holds when it is read (bothy.run_document), so it
 * is never older than the signal that caused it.
 */
#ifndef BOTHY_GATEWAY_RUNS_H
#define BOTHY_GATEWAY_RUNS_H

#include "signal.h"

/* gateway.run, from whichever producer (applications commit runs). */
void		gw_runs_signal(const bothy_signal *sig);

/* The node stops: pending reads and timers go. */
void		gw_runs_stop(void);

#endif							/* BOTHY_GATEWAY_RUNS_H */
