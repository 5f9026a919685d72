/*
 * test_uuidset.c
 *		Unit tests of src/gateway/core/uuidset.c: adding twice, growing past
 *		many resizes, walking the rest of a set from a slot, clearing and
 *		UUIDs that differ only in their first bytes (v7s of one millisecond
 *		differ in their last).
 */
#include <stdio.h>
#include <string.h>

#include "core/uuidset.h"
#include "unit.h"

static bothy_uuid
make(uint32_t n, int at)
{
	bothy_uuid	u;

	memset(&u, 0, sizeof(u));
	u.b[at] = (uint8_t) (n >> 24);
	u.b[at + 1] = (uint8_t) (n >> 16);
	u.b[at + 2] = (uint8_t) (n >> 8);
	u.b[at + 3] = (uint8_t) n;
	return u;
}

static bool
holds_all(const gw_uuidset *s, uint32_t n, int at)
{
	uint32_t	i;

	for (i = 0; i < n; i++)
	{
		bothy_uuid	u = make(i, at);

		if (!gw_uuidset_contains(s, &u))
			return false;
	}
	return true;
}

/* Walks the whole set: every element once. */
static size_t
walk_count(const gw_uuidset *s)
{
	size_t		pos = 0,
				n = 0;

	while (gw_uuidset_next(s, &pos) != NULL)
		n++;
	return n;
}

int
main(void)
{
	gw_uuidset	s = {0};
	gw_uuidset	rest = {0};
	bothy_uuid	a = make(1, 12),
				b = make(2, 12);
	const bothy_uuid *u;
	size_t		pos = 0,
				taken = 0;
	uint32_t	i;
	bool		ok = true;

	unit_diag("src/gateway/core/uuidset.c");
	UNIT_OK(!gw_uuidset_contains(&s, &a), "an empty set holds nothing");
	UNIT_OK(gw_uuidset_next(&s, &pos) == NULL, "an empty set walks to its end at once");
	UNIT_OK(gw_uuidset_add(&s, &a) && gw_uuidset_add(&s, &a) && s.count == 1,
			"adding twice holds one element");
	UNIT_OK(gw_uuidset_contains(&s, &a) && !gw_uuidset_contains(&s, &b), "contains only what was added");
	gw_uuidset_clear(&s);
	UNIT_OK(s.count == 0 && !gw_uuidset_contains(&s, &a) && s.cap > 0,
			"clear empties a small set and keeps its memory");

	for (i = 0; i < 50000 && ok; i++)
	{
		bothy_uuid	u2 = make(i, 12);

		ok = gw_uuidset_add(&s, &u2);
	}
	UNIT_OK(ok && s.count == 50000 && holds_all(&s, 50000, 12), "50,000 elements across resizes");
	UNIT_OK(s.count * 2 <= s.cap, "at most half full");
	UNIT_OK(walk_count(&s) == 50000, "a walk sees every element once");

	/* the first 10,000 of a walk, then the rest handed to another set */
	pos = 0;
	while (taken < 10000 && gw_uuidset_next(&s, &pos) != NULL)
		taken++;
	while ((u = gw_uuidset_next(&s, &pos)) != NULL)
		gw_uuidset_add(&rest, u);
	UNIT_OK(taken == 10000 && rest.count == 40000, "the rest of a walk from a slot");
	gw_uuidset_clear(&s);
	UNIT_OK(s.count == 0 && s.cap == 0 && s.slots == NULL, "clear gives a large set's memory back");
	gw_uuidset_free(&rest);
	UNIT_OK(rest.cap == 0 && rest.count == 0, "free empties");

	/* differing only in the first bytes, as a hash of the first bytes would fail */
	ok = true;
	for (i = 0; i < 5000 && ok; i++)
	{
		bothy_uuid	u2 = make(i, 0);

		ok = gw_uuidset_add(&s, &u2);
	}
	UNIT_OK(ok && s.count == 5000 && holds_all(&s, 5000, 0), "UUIDs differing in their first bytes");
	gw_uuidset_free(&s);
	return unit_done();
}
