/*
 * test_uuidmap.c
 *		Unit tests of src/gateway/core/uuidmap.c, the one UUID-keyed map of
 *		both routes: add, find and remove, several links of one key in the
 *		order they came, growth past many doublings, removal during a walk,
 *		and many UUIDv7 keys of one millisecond (equal first bytes) spread
 *		over the buckets.  test_callers runs the callers' patterns: a
 *		per-key walk removing the link it holds (hub.c, hosts.c), freeing
 *		inside a walk (the relay's forget), a second add of a linked link,
 *		an add during a walk of a growing map, a free with links left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/uuidmap.h"
#include "uuidv7.h"
#include "unit.h"

typedef struct item
{
	bothy_uuid	key;
	int			n;				/* its number, to check order and identity */
	gw_uuidmap_link link;
} item;

static const bothy_uuid *
item_key(const gw_uuidmap_link *l)
{
	return &((const item *) ((const char *) l - offsetof(item, link)))->key;
}

static item *
item_of(gw_uuidmap_link *l)
{
	return l == NULL ? NULL : (item *) ((char *) l - offsetof(item, link));
}

/* A deterministic stream of bytes for the v7 generator (xorshift64). */
static uint64_t seed = UINT64_C(0x2545f4914f6cdd1d);

static void
random_bytes(uint8_t *out, size_t n)
{
	size_t		i;

	for (i = 0; i < n; i++)
	{
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		out[i] = (uint8_t) seed;
	}
}

/* n UUIDv7 of one millisecond: their first bytes are equal. */
static void
v7_keys(item *items, size_t n)
{
	bothy_uuidv7_state st = {0};
	size_t		i;

	for (i = 0; i < n; i++)
	{
		uint8_t		r[BOTHY_UUIDV7_RANDOM_BYTES];

		random_bytes(r, sizeof(r));
		bothy_uuidv7_next(&st, UINT64_C(1765000000000), r, &items[i].key);
		items[i].n = (int) i;
		memset(&items[i].link, 0, sizeof(items[i].link));
	}
}

static size_t
longest_chain(const gw_uuidmap *m)
{
	size_t		i,
				most = 0;

	for (i = 0; i < m->nbuckets; i++)
	{
		size_t		len = 0;
		gw_uuidmap_link *l;

		for (l = m->buckets[i]; l != NULL; l = l->next)
			len++;
		if (len > most)
			most = len;
	}
	return most;
}

static bool
finds_all(const gw_uuidmap *m, item *items, size_t n, size_t step)
{
	size_t		i;

	for (i = 0; i < n; i += step)
		if (item_of(gw_uuidmap_first(m, &items[i].key)) != &items[i])
			return false;
	return true;
}

static void
test_fixed(void)
{
	static gw_uuidmap_link *storage[16];
	gw_uuidmap	m = GW_UUIDMAP_FIXED(storage, item_key);
	item		it[5];
	bothy_uuid	absent;
	gw_uuidmap_link *l;

	v7_keys(it, 5);
	it[3].key = it[1].key;		/* 1, 3 and 4 share a key */
	it[4].key = it[1].key;
	memset(&absent, 0xab, sizeof(absent));
	UNIT_OK(gw_uuidmap_first(&m, &it[0].key) == NULL, "fixed: an empty map finds nothing");
	for (int i = 0; i < 5; i++)
		UNIT_OK(gw_uuidmap_add(&m, &it[i].link), "fixed: add");
	UNIT_OK(m.count == 5 && m.nbuckets == 16, "fixed: counts its links and never grows");
	UNIT_OK(item_of(gw_uuidmap_first(&m, &it[0].key)) == &it[0] &&
			item_of(gw_uuidmap_first(&m, &it[2].key)) == &it[2], "fixed: finds each key");
	UNIT_OK(gw_uuidmap_first(&m, &absent) == NULL, "fixed: an absent key is not found");
	l = gw_uuidmap_first(&m, &it[1].key);
	UNIT_OK(item_of(l) == &it[1] && item_of(l = gw_uuidmap_next_same(&m, l)) == &it[3] &&
			item_of(l = gw_uuidmap_next_same(&m, l)) == &it[4] &&
			gw_uuidmap_next_same(&m, l) == NULL, "fixed: one key's links in the order added");
	gw_uuidmap_remove(&m, &it[3].link);
	l = gw_uuidmap_first(&m, &it[1].key);
	UNIT_OK(m.count == 4 && !gw_uuidmap_linked(&it[3].link) && item_of(l) == &it[1] &&
			item_of(gw_uuidmap_next_same(&m, l)) == &it[4], "fixed: removal from the middle of a chain");
	gw_uuidmap_remove(&m, &it[3].link);
	UNIT_OK(m.count == 4, "fixed: removing a link in no map is a no-op");
	gw_uuidmap_remove(&m, &it[1].link);
	UNIT_OK(item_of(gw_uuidmap_first(&m, &it[1].key)) == &it[4], "fixed: removal of a chain's head");
	gw_uuidmap_add(&m, &it[1].link);
	l = gw_uuidmap_first(&m, &it[1].key);
	UNIT_OK(item_of(l) == &it[4] && item_of(gw_uuidmap_next_same(&m, l)) == &it[1],
			"fixed: a link added again goes to its key's tail");
	gw_uuidmap_free(&m);
	UNIT_OK(m.count == 0 && gw_uuidmap_first(&m, &it[0].key) == NULL, "fixed: emptied");
}

/* The smallest power of two >= 64 that holds count links, one per bucket. */
static size_t
expected_buckets(size_t count)
{
	size_t		n = 64;

	while (n < count)
		n *= 2;
	return n;
}

#define MANY 20000

static item many[MANY];

static void
test_growing(void)
{
	gw_uuidmap	m = GW_UUIDMAP_GROWING(item_key);
	item		same[3];
	gw_uuidmap_link *l;
	size_t		i;

	v7_keys(same, 3);
	same[1].key = same[0].key;
	same[2].key = same[0].key;
	for (i = 0; i < 3; i++)
		gw_uuidmap_add(&m, &same[i].link);
	UNIT_OK(m.nbuckets == 64, "growing: its first add brings 64 buckets");
	v7_keys(many, MANY);
	for (i = 0; i < MANY; i++)
	{
		gw_uuidmap_add(&m, &many[i].link);
		if (m.nbuckets != expected_buckets(m.count))
			break;
	}
	UNIT_OK(i == MANY, "growing: after every add, the smallest power of two >= 64 holding it");
	UNIT_OK(m.count == MANY + 3, "growing: counts every link");
	UNIT_OK(m.nbuckets == expected_buckets(m.count) && m.nbuckets == 32768,
			"growing: the smallest power of two >= 64 holding one link per bucket");
	UNIT_OK(finds_all(&m, many, MANY, 1), "growing: every key found after many doublings");
	l = gw_uuidmap_first(&m, &same[0].key);
	UNIT_OK(item_of(l) == &same[0] && item_of(l = gw_uuidmap_next_same(&m, l)) == &same[1] &&
			item_of(gw_uuidmap_next_same(&m, l)) == &same[2],
			"growing: one key's links keep their order through the doublings");
	for (i = 0; i < 3; i++)
		gw_uuidmap_remove(&m, &same[i].link);
	for (i = 0; i < MANY; i++)
		gw_uuidmap_remove(&m, &many[i].link);
	UNIT_OK(m.count == 0 && gw_uuidmap_first(&m, &many[7].key) == NULL, "growing: all removed");
	gw_uuidmap_free(&m);
	UNIT_OK(m.buckets == NULL && m.nbuckets == 0, "growing: free gives the buckets back");
	UNIT_OK(gw_uuidmap_add(&m, &many[0].link) &&
			item_of(gw_uuidmap_first(&m, &many[0].key)) == &many[0],
			"growing: usable again after free");
	gw_uuidmap_remove(&m, &many[0].link);
	gw_uuidmap_free(&m);
}

typedef struct walk
{
	gw_uuidmap *m;
	size_t		seen;
	size_t		stop_after;		/* 0: never stop */
} walk;

static bool
remove_even(gw_uuidmap_link *l, void *arg)
{
	walk	   *w = arg;

	w->seen++;
	if (item_of(l)->n % 2 == 0)
		gw_uuidmap_remove(w->m, l);
	return w->stop_after == 0 || w->seen < w->stop_after;
}

static void
test_walk(void)
{
	static gw_uuidmap_link *storage[256];	/* chains of about 40: removal inside them */
	gw_uuidmap	m = GW_UUIDMAP_FIXED(storage, item_key);
	walk		w = {&m, 0, 0};
	size_t		i;
	bool		odd_found = true,
				even_gone = true;

	v7_keys(many, 10000);
	for (i = 0; i < 10000; i++)
		gw_uuidmap_add(&m, &many[i].link);
	UNIT_OK(gw_uuidmap_each(&m, remove_even, &w), "walk: runs to the end");
	UNIT_OK(w.seen == 10000, "walk: visits every link once, removals during the walk included");
	UNIT_OK(m.count == 5000, "walk: the removed ones are gone from the count");
	for (i = 0; i < 10000; i++)
	{
		gw_uuidmap_link *l = gw_uuidmap_first(&m, &many[i].key);

		if (i % 2 == 0)
			even_gone = even_gone && l == NULL;
		else
			odd_found = odd_found && item_of(l) == &many[i];
	}
	UNIT_OK(even_gone && odd_found, "walk: what was removed is gone, the rest is found");
	w.seen = 0;
	w.stop_after = 10;
	UNIT_OK(!gw_uuidmap_each(&m, remove_even, &w) && w.seen == 10, "walk: stops when a visit says so");
	gw_uuidmap_free(&m);
}

static void
test_one_millisecond(void)
{
	static gw_uuidmap_link *storage[4096];
	gw_uuidmap	fixed = GW_UUIDMAP_FIXED(storage, item_key);
	gw_uuidmap	growing = GW_UUIDMAP_GROWING(item_key);
	static item again[4096];
	size_t		i;
	char		diag[96];

	/* 4096 v7 keys of one millisecond: 4096 buckets, a chain of 1 on average */
	v7_keys(many, 4096);
	UNIT_OK(bothy_uuidv7_ms(&many[0].key) == bothy_uuidv7_ms(&many[4095].key) &&
			memcmp(many[0].key.b, many[4095].key.b, 6) == 0, "v7: the keys share their millisecond");
	for (i = 0; i < 4096; i++)
		gw_uuidmap_add(&fixed, &many[i].link);
	snprintf(diag, sizeof(diag), "v7 in a fixed map of 4096: the longest chain is %zu",
			 longest_chain(&fixed));
	unit_diag(diag);
	/* a formula over the first bytes would put all 4096 in very few chains */
	UNIT_OK(longest_chain(&fixed) <= 12, "v7: one millisecond's keys spread over the buckets");
	UNIT_OK(finds_all(&fixed, many, 4096, 1), "v7: each found in the fixed map");
	memcpy(again, many, sizeof(again));
	for (i = 0; i < 4096; i++)
		memset(&again[i].link, 0, sizeof(again[i].link));
	for (i = 0; i < 4096; i++)
		gw_uuidmap_add(&growing, &again[i].link);
	UNIT_OK(longest_chain(&growing) <= 12, "v7: spread in a growing map too");
	UNIT_OK(finds_all(&growing, again, 4096, 1), "v7: each found in the growing map");
	gw_uuidmap_free(&fixed);
	gw_uuidmap_free(&growing);
}

static void
test_hash(void)
{
	bothy_uuid	a,
				b;

	memset(&a, 0, sizeof(a));
	b = a;
	b.b[0] = 0xff;				/* the clock's bytes do not count */
	UNIT_OK(gw_uuid_hash(&a) == gw_uuid_hash(&b), "hash: over bytes 8..15 only");
	b = a;
	b.b[15] = 1;
	UNIT_OK((gw_uuid_hash(&a) >> 32) != (gw_uuid_hash(&b) >> 32),
			"hash: the last byte moves the high bits");
}

/* hub.c's gw_hub_each and hosts.c's gw_thosts_each: take next, then drop l. */
static void
test_key_walk_removing(void)
{
	static gw_uuidmap_link *storage[8];
	gw_uuidmap	m = GW_UUIDMAP_FIXED(storage, item_key);
	item		it[6];
	gw_uuidmap_link *l,
			   *next;
	int			order[6],
				seen = 0,
				i;

	v7_keys(it, 6);
	for (i = 1; i < 5; i++)		/* 0..4 share a key, 5 has its own */
		it[i].key = it[0].key;
	for (i = 0; i < 6; i++)
		gw_uuidmap_add(&m, &it[i].link);
	for (l = gw_uuidmap_first(&m, &it[0].key); l != NULL && seen < 6; l = next)
	{
		next = gw_uuidmap_next_same(&m, l);
		order[seen++] = item_of(l)->n;
		gw_uuidmap_remove(&m, l);
	}
	UNIT_OK(seen == 5 && order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 3 &&
			order[4] == 4, "key walk: removing each link held visits the key's five in order");
	UNIT_OK(m.count == 1 && gw_uuidmap_first(&m, &it[0].key) == NULL &&
			item_of(gw_uuidmap_first(&m, &it[5].key)) == &it[5],
			"key walk: the key is gone, the other key stays");
	gw_uuidmap_free(&m);
}

/* The relay's forget: each visit frees its struct; the map goes after. */
static bool
free_item(gw_uuidmap_link *l, void *arg)
{
	(*(size_t *) arg)++;
	free(item_of(l));
	return true;
}

static void
test_free_inside_walk(void)
{
	gw_uuidmap	m = GW_UUIDMAP_GROWING(item_key);
	item		keys[300];
	size_t		i,
				freed = 0;

	v7_keys(keys, 300);
	for (i = 0; i < 300; i++)
	{
		item	   *it = calloc(1, sizeof(*it));

		if (it == NULL)
			abort();
		it->key = keys[i % 100].key;	/* chains of three links of one key */
		it->n = (int) i;
		gw_uuidmap_add(&m, &it->link);
	}
	/* AddressSanitizer fails the run if the walk reads a freed link */
	UNIT_OK(gw_uuidmap_each(&m, free_item, &freed) && freed == 300,
			"free inside each: every link visited once, none read after its free");
	gw_uuidmap_free(&m);
	UNIT_OK(m.buckets == NULL && m.nbuckets == 0, "free inside each: the buckets go after");
}

static void
test_double_add(void)
{
	static gw_uuidmap_link *storage[4];
	gw_uuidmap	fixed = GW_UUIDMAP_FIXED(storage, item_key);
	gw_uuidmap	growing = GW_UUIDMAP_GROWING(item_key);
	item		it[3];
	gw_uuidmap_link *l;

	v7_keys(it, 3);
	it[1].key = it[0].key;
	it[2].key = it[0].key;
	for (int i = 0; i < 3; i++)
		gw_uuidmap_add(&fixed, &it[i].link);
	UNIT_OK(gw_uuidmap_add(&fixed, &it[1].link) && fixed.count == 3,
			"double add: a linked link is counted once");
	l = gw_uuidmap_first(&fixed, &it[0].key);
	UNIT_OK(item_of(l) == &it[0] && item_of(l = gw_uuidmap_next_same(&fixed, l)) == &it[1] &&
			item_of(l = gw_uuidmap_next_same(&fixed, l)) == &it[2] &&
			gw_uuidmap_next_same(&fixed, l) == NULL, "double add: the chain is whole and in order");
	gw_uuidmap_remove(&fixed, &it[1].link);
	gw_uuidmap_remove(&fixed, &it[0].link);
	gw_uuidmap_remove(&fixed, &it[2].link);
	UNIT_OK(fixed.count == 0 && storage[0] == NULL && storage[1] == NULL && storage[2] == NULL &&
			storage[3] == NULL, "double add: removing each once empties the map");
	gw_uuidmap_add(&growing, &it[0].link);
	UNIT_OK(gw_uuidmap_add(&growing, &it[0].link) && growing.count == 1,
			"double add: counted once in a growing map too");
	gw_uuidmap_remove(&growing, &it[0].link);
	gw_uuidmap_free(&growing);
}

typedef struct adder
{
	gw_uuidmap *m;
	item	   *extra;			/* the links the visits add */
	size_t		added;
	size_t		visits[64 + 1];	/* by item number: how often visited */
	size_t		nbuckets_seen;	/* the largest bucket count a visit saw */
} adder;

static bool
add_one(gw_uuidmap_link *l, void *arg)
{
	adder	   *a = arg;
	int			n = item_of(l)->n;

	if (n < 64)
		a->visits[n]++;
	else
		a->visits[64]++;
	if (a->added < 64)
		gw_uuidmap_add(a->m, &a->extra[a->added++].link);
	if (a->m->nbuckets > a->nbuckets_seen)
		a->nbuckets_seen = a->m->nbuckets;
	return true;
}

/* An add that would double a growing map during a walk waits for the walk. */
static void
test_add_during_walk(void)
{
	gw_uuidmap	m = GW_UUIDMAP_GROWING(item_key);
	static item base[64],
				extra[65];
	adder		a = {&m, extra, 0, {0}, 0};
	size_t		i;
	bool		once = true;

	v7_keys(base, 64);
	v7_keys(extra, 65);
	for (i = 0; i < 65; i++)
		extra[i].n = 1000 + (int) i;
	for (i = 0; i < 64; i++)
		gw_uuidmap_add(&m, &base[i].link);
	UNIT_OK(m.count == 64 && m.nbuckets == 64, "add during each: full, the next add would double");
	UNIT_OK(gw_uuidmap_each(&m, add_one, &a), "add during each: the walk ends");
	for (i = 0; i < 64; i++)
		once = once && a.visits[i] == 1;
	UNIT_OK(once, "add during each: every link there before the walk visited exactly once");
	UNIT_OK(a.nbuckets_seen == 64 && m.nbuckets == 64 && m.count == 128,
			"add during each: linked but no doubling under the walk");
	UNIT_OK(finds_all(&m, extra, 64, 1) && finds_all(&m, base, 64, 1),
			"add during each: every link found after the walk");
	gw_uuidmap_add(&m, &extra[64].link);
	UNIT_OK(m.nbuckets == 128 && m.walking == 0 && finds_all(&m, extra, 65, 1) &&
			finds_all(&m, base, 64, 1), "add during each: the first add after the walk doubles");
	for (i = 0; i < 64; i++)
		gw_uuidmap_remove(&m, &base[i].link);
	for (i = 0; i < 65; i++)
		gw_uuidmap_remove(&m, &extra[i].link);
	gw_uuidmap_free(&m);
}

/* A fixed map's free unlinks what is left: a later remove writes nothing. */
static void
test_free_with_links(void)
{
	static gw_uuidmap_link *storage[2];
	gw_uuidmap	m = GW_UUIDMAP_FIXED(storage, item_key);
	item		it[4];

	v7_keys(it, 4);
	for (int i = 0; i < 4; i++)
		gw_uuidmap_add(&m, &it[i].link);
	gw_uuidmap_free(&m);
	UNIT_OK(m.count == 0 && storage[0] == NULL && storage[1] == NULL, "free: a fixed map emptied");
	UNIT_OK(!gw_uuidmap_linked(&it[0].link) && !gw_uuidmap_linked(&it[3].link) &&
			it[1].link.next == NULL, "free: the links left are in no map");
	gw_uuidmap_add(&m, &it[2].link);
	gw_uuidmap_remove(&m, &it[1].link);
	UNIT_OK(m.count == 1 && item_of(gw_uuidmap_first(&m, &it[2].key)) == &it[2],
			"free: removing a link the free unlinked leaves the map and its count alone");
	gw_uuidmap_remove(&m, &it[2].link);
	UNIT_OK(m.count == 0 && storage[0] == NULL && storage[1] == NULL, "free: usable again");
}

int
main(void)
{
	test_hash();
	test_fixed();
	test_growing();
	test_walk();
	test_one_millisecond();
	test_key_walk_removing();
	test_free_inside_walk();
	test_double_add();
	test_add_during_walk();
	test_free_with_links();
	return unit_done();
}
