/*
 * coalesce.h
 *		Which signals of a set a newer one makes redundant: shared by the
 *		fan-out worker (per batch) and a producer's own NOTIFY fallback
 *		(per transaction), so a receiver hears the same either way.
 */
#ifndef BOTHY_COALESCE_H
#define BOTHY_COALESCE_H

#include "signal_queue.h"

typedef struct BothyCoalesceEntry
{
	const char *payload;		/* NUL-terminated */
	uint16		len;
	BothyQueueTag tag;			/* kind, subject and rank, as the producer decoded them */
	bool		drop;			/* coalesced away */
	int			order;			/* position in the set */
} BothyCoalesceEntry;

/*
 * Marks drop on each entry that a newer or identical one in the set makes
 * redundant: of the signals of one subject (a run's updates, an agent's
 * appended events, the terminal log's wake-ups) only the highest rank stays,
 * and of identical payloads the first.  Returns the number marked.
 */
extern int	bothy_coalesce(BothyCoalesceEntry *entries, int n);

#endif							/* BOTHY_COALESCE_H */
