/*
 * reach.h
 *		Which nodes an audience signal concerns: the member "reach" of
 *		gateway.typing and gateway.run (docs/signals.md, "Reach").
 *
 * The fan-out worker asks the seam which nodes hold a person who may see
 * the thread (bothy.thread_nodes) and sends the answer as a mask of 63
 * bits, one per slot; a node whose slot's bit is clear skips the delivery
 * without a database call.  Several nodes may share a slot (their IDs are
 * random): a node asks needlessly then, never wrongly, since it still asks
 * the seam who of its own persons may see the thread.  A signal without
 * "reach" (the seam could not say, or a producer's fallback NOTIFY) is
 * delivered by every node, as before 0.3.0.
 *
 * The slot: the last eight bytes of the node's UUID (a v7's random bits)
 * as a big-endian number, modulo 63.  The extension (worker_reach.c) and
 * the gateway (clients/deliver.c) share this header, so they agree.
 */
#ifndef BOTHY_REACH_H
#define BOTHY_REACH_H

#include <stdbool.h>
#include <stdint.h>

#include "uuid.h"

#define BOTHY_REACH_SLOTS 63	/* bits of a non-negative int64 */

static inline int
bothy_reach_slot(const bothy_uuid *node)
{
	uint64_t	v = 0;

	for (int i = 8; i < 16; i++)
		v = (v << 8) | node->b[i];
	return (int) (v % BOTHY_REACH_SLOTS);
}

/* The mask with the node's slot set. */
static inline int64_t
bothy_reach_bit(const bothy_uuid *node)
{
	return (int64_t) (UINT64_C(1) << bothy_reach_slot(node));
}

/* Whether a signal's reach (present) includes the node. */
static inline bool
bothy_reach_includes(int64_t reach, const bothy_uuid *node)
{
	return (reach & bothy_reach_bit(node)) != 0;
}

#endif							/* BOTHY_REACH_H */
