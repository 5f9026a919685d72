/*
 * core/uuidset.h
 *		A growing set of UUIDs (open addressing, linear probing): the
 *		presence writer's gateway sessions changed since its last flush.
 *
 * Memory follows what was added, not what is connected: an empty set
 * holds no allocation, and emptying a large set gives its memory back.
 * There is no removal of one element: a set is emptied whole, and one
 * that was used in part is walked on from a slot (gw_uuidset_next) to
 * hand its rest elsewhere.
 */
#ifndef BOTHY_GATEWAY_UUIDSET_H
#define BOTHY_GATEWAY_UUIDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uuid.h"

typedef struct gw_uuidset
{
	bothy_uuid *slots;			/* cap elements, NULL while cap is 0 */
	uint8_t    *used;			/* 1 where slots[i] holds an element */
	size_t		cap;			/* 0 or a power of two */
	size_t		count;			/* elements held */
} gw_uuidset;

/* An empty set is all zeros: {0} or memset. */

/* Adds u (a second add of it changes nothing); false when out of memory. */
bool		gw_uuidset_add(gw_uuidset *s, const bothy_uuid *u);

bool		gw_uuidset_contains(const gw_uuidset *s, const bothy_uuid *u);

/*
 * The element in the first used slot at or after *pos, with *pos moved past
 * it; NULL at the end.  Walk a whole set from *pos = 0; the set must not
 * change during the walk.
 */
const bothy_uuid *gw_uuidset_next(const gw_uuidset *s, size_t *pos);

/* Empties the set (a small one keeps its memory for the next interval). */
void		gw_uuidset_clear(gw_uuidset *s);

/* Empties the set and frees all of its memory. */
void		gw_uuidset_free(gw_uuidset *s);

#endif							/* BOTHY_GATEWAY_UUIDSET_H */
