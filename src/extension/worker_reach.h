/*
 * worker_reach.h
 *		The fan-out worker sets the reach of audience signals
 *		(docs/signals.md, "Reach"; src/common/reach.h).
 */
#ifndef BOTHY_WORKER_REACH_H
#define BOTHY_WORKER_REACH_H

#include "coalesce.h"

/*
 * For each entry not dropped of kind gateway.typing or gateway.run, asks
 * bothy.thread_nodes about its thread and re-encodes it with the reach,
 * the new payload allocated in the current memory context (the batch's).
 * An entry the seam cannot say anything of keeps no reach (every node
 * delivers it); a failing seam is logged, at most every 10 s, and the
 * batch goes without reach.
 */
extern void bothy_fanout_reach(BothyCoalesceEntry *entries, int n);

#endif							/* BOTHY_WORKER_REACH_H */
