/*
 * reach.h
 *		Which nodes an audience signal concerns: the member "reach" of
 *		gateway.typing and gateway.run (docs/signals.md, "Reach").
 *
 * The fan-out worker asks the seam which nodes hold a person who may see
 * the thread (bothy.thread_nodes) and sends their IDs with the signal; a
 * node the reach does not name skips the delivery without a database
 * call.  IDs, not hashed slots: with slots shared by several nodes, a
 * cluster of 200 nodes would have 67 of them ask for a thread whose
 * members 19 hold (docs/scaling.md).  A signal without "reach" (the seam
 * could not say, more than BOTHY_REACH_MAX nodes, or a producer's
 * fallback NOTIFY) is delivered by every node.  The extension
 * (worker_reach.c) writes it, the gateway (clients/deliver.c) reads it.
 */
#ifndef BOTHY_REACH_H
#define BOTHY_REACH_H

#include <stdbool.h>
#include <string.h>

#include "signal.h"

/* Whether the signal concerns the node: no reach, or one naming it. */
static inline bool
bothy_reach_includes(const bothy_signal *sig, const bothy_uuid *node)
{
	int			i;

	if (!(sig->optional & BOTHY_OPT_REACH))
		return true;
	for (i = 0; i < sig->nreach; i++)
		if (memcmp(sig->reach[i].b, node->b, sizeof(node->b)) == 0)
			return true;
	return false;
}

#endif							/* BOTHY_REACH_H */
