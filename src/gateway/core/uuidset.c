/*
 * core/uuidset.c
 *		A growing set of UUIDs (see uuidset.h).
 *
 * Kept at most half full, so a probe ends after a few slots.  The hash
 * is gw_uuid_hash (core/uuidmap.h), over the last eight bytes: random in
 * a UUIDv7 (and in a v4), while the first bytes of v7s made in one
 * millisecond are equal.
 */
#include <stdlib.h>
#include <string.h>

#include "core/uuidmap.h"
#include "core/uuidset.h"

#define MIN_CAP 64
/* A cleared set at most this large keeps its memory. */
#define KEEP_CAP 1024

static size_t
slot_of(const bothy_uuid *u, size_t cap)
{
	/* the one UUID hash of the gateway (core/uuidmap.h), its high bits */
	return (size_t) (gw_uuid_hash(u) >> 32) & (cap - 1);
}

/* The slot holding u, or the free slot where it belongs. */
static size_t
probe(const gw_uuidset *s, const bothy_uuid *u)
{
	size_t		i = slot_of(u, s->cap);

	while (s->used[i] && memcmp(&s->slots[i], u, sizeof(*u)) != 0)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static bool
grow(gw_uuidset *s)
{
	gw_uuidset	bigger = {0};
	size_t		i;

	bigger.cap = s->cap == 0 ? MIN_CAP : s->cap * 2;
	bigger.slots = malloc(bigger.cap * sizeof(bothy_uuid));
	bigger.used = calloc(bigger.cap, 1);
	if (bigger.slots == NULL || bigger.used == NULL)
	{
		free(bigger.slots);
		free(bigger.used);
		return false;
	}
	for (i = 0; i < s->cap; i++)
		if (s->used[i])
		{
			size_t		j = probe(&bigger, &s->slots[i]);

			bigger.slots[j] = s->slots[i];
			bigger.used[j] = 1;
		}
	bigger.count = s->count;
	free(s->slots);
	free(s->used);
	*s = bigger;
	return true;
}

bool
gw_uuidset_add(gw_uuidset *s, const bothy_uuid *u)
{
	size_t		i;

	if (s->cap > 0)
	{
		i = probe(s, u);
		if (s->used[i])
			return true;
	}
	if ((s->count + 1) * 2 > s->cap)
	{
		if (!grow(s))
			return false;
	}
	i = probe(s, u);
	s->slots[i] = *u;
	s->used[i] = 1;
	s->count++;
	return true;
}

bool
gw_uuidset_contains(const gw_uuidset *s, const bothy_uuid *u)
{
	return s->cap > 0 && s->used[probe(s, u)];
}

const bothy_uuid *
gw_uuidset_next(const gw_uuidset *s, size_t *pos)
{
	while (*pos < s->cap)
	{
		size_t		i = (*pos)++;

		if (s->used[i])
			return &s->slots[i];
	}
	return NULL;
}

void
gw_uuidset_clear(gw_uuidset *s)
{
	if (s->cap > KEEP_CAP)
	{
		gw_uuidset_free(s);
		return;
	}
	if (s->count > 0)
		memset(s->used, 0, s->cap);
	s->count = 0;
}

void
gw_uuidset_free(gw_uuidset *s)
{
	free(s->slots);
	free(s->used);
	memset(s, 0, sizeof(*s));
}
