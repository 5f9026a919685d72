/*
 * core/uuidmap.h
 *		One hash table keyed by UUID for every route: intrusive chains of
 *		links that live inside the caller's structs, so indexing costs no
 *		allocation beyond the buckets.
 *
 * The clients route indexes its connections and runs on it, the terminal
 * its host connections, its presence entries and the relay's slots (issue
 * 26: the bucket formula was written four times beside two more tables).
 * A map is fixed (the caller's array of buckets, a power of two, never
 * allocated) or growing (doubles once it holds more links than buckets).
 * Several links may carry one key; they stay in the order they were
 * added, the oldest first, through every doubling.  No caller needs more
 * than a stable order (hub.c counts a key once, at its first admitted
 * link); the relay's slots of one session end in that order, which
 * test_relay_slot pins.  The order across keys is unspecified.
 *
 * Pure C, no lws: the relay's state machine links it without lws
 * (test_relay_slot), and test_uuidmap tests it alone.
 */
#ifndef BOTHY_GATEWAY_UUIDMAP_H
#define BOTHY_GATEWAY_UUIDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uuid.h"

/*
 * Fibonacci hashing over bytes 8..15: random in a UUIDv7 (and a v4),
 * while the first bytes of v7s made in one millisecond are equal.  Take
 * bits from above bit 32 (core/uuidset.c does too).
 */
uint64_t	gw_uuid_hash(const bothy_uuid *u);

/* A zeroed link is in no map; removing it is a no-op. */
typedef struct gw_uuidmap_link
{
	struct gw_uuidmap_link *next;	/* its bucket's chain */
	struct gw_uuidmap_link **pprev; /* what points at it; NULL: in no map */
} gw_uuidmap_link;

/* The key of the struct a link lives in. */
typedef const bothy_uuid *(*gw_uuidmap_key) (const gw_uuidmap_link *l);

typedef struct gw_uuidmap
{
	gw_uuidmap_link **buckets;	/* NULL: a growing map before its first add */
	size_t		nbuckets;		/* 0 or a power of two */
	size_t		count;			/* links in the map */
	bool		grows;			/* buckets are malloc'd and doubled */
	gw_uuidmap_key key;
	unsigned	walking;		/* gw_uuidmap_each calls under way: no doubling */
} gw_uuidmap;

/* A fixed map over a static array of buckets: a static initializer. */
#define GW_UUIDMAP_FIXED(storage, keyfn) \
	{(storage), sizeof(storage) / sizeof((storage)[0]), 0, false, (keyfn), 0}
/* A growing map: a static initializer; its buckets come with the first add. */
#define GW_UUIDMAP_GROWING(keyfn) {NULL, 0, 0, true, (keyfn), 0}

/*
 * Links l at the tail of its key's chain.  False only when a growing map
 * has no buckets and cannot allocate them (l is then in no map); a map
 * that cannot grow further keeps working with longer chains.  A link
 * already in a map is left where it is (true, counted once): relinking
 * it would cut its chain.  A growing map does not double during
 * gw_uuidmap_each (a rehash would move links under the walk); it doubles
 * at the first add after the walk.
 */
bool		gw_uuidmap_add(gw_uuidmap *m, gw_uuidmap_link *l);

/* Unlinks l; a link in no map is left as it is. */
void		gw_uuidmap_remove(gw_uuidmap *m, gw_uuidmap_link *l);

/* Whether l is in a map. */
static inline bool
gw_uuidmap_linked(const gw_uuidmap_link *l)
{
	return l->pprev != NULL;
}

/*
 * The first link with key k, then the next with the same key (NULL at the
 * end), in the order they were added.  A walker may remove the link it
 * holds once it has taken the next one.
 */
gw_uuidmap_link *gw_uuidmap_first(const gw_uuidmap *m, const bothy_uuid *k);
gw_uuidmap_link *gw_uuidmap_next_same(const gw_uuidmap *m, gw_uuidmap_link *l);

/*
 * Calls visit for every link until one returns false (then false).  visit
 * may remove (or free) the link it is given, never another, and must not
 * add: the map then refuses to double, so no link moves under the walk,
 * but whether the walk meets the added link is unspecified.
 */
typedef bool (*gw_uuidmap_visit) (gw_uuidmap_link *l, void *arg);
bool		gw_uuidmap_each(gw_uuidmap *m, gw_uuidmap_visit visit, void *arg);

/*
 * Empties the map.  A fixed map unlinks every link still in it (each is
 * then in no map, as if removed), so a later remove cannot write into the
 * cleared buckets.  A growing map gives its buckets back without reading
 * its links, which the caller may have freed (the relay's forget frees
 * its slots in a walk first); links left in it must not be used again.
 */
void		gw_uuidmap_free(gw_uuidmap *m);

#endif							/* BOTHY_GATEWAY_UUIDMAP_H */
