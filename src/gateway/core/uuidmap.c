/*
 * core/uuidmap.c
 *		The UUID-keyed map of intrusive chains (see uuidmap.h).
 *
 * Chains are singly linked with a back pointer to what points at each
 * link (pprev), so removal is O(1) without the bucket; adding walks to
 * the chain's tail to keep a key's links in the order they came, and
 * chains stay short: a growing map holds at most one link per bucket on
 * average, and fixed maps are sized for the connections a node holds.
 */
#include <stdlib.h>
#include <string.h>

#include "core/uuidmap.h"

#define MIN_BUCKETS 64

uint64_t
gw_uuid_hash(const bothy_uuid *u)
{
	uint64_t	h = 0;
	int			i;

	for (i = 8; i < 16; i++)
		h = h << 8 | u->b[i];
	/* Fibonacci hashing: the high bits of the product are well mixed */
	return h * UINT64_C(0x9e3779b97f4a7c15);
}

static gw_uuidmap_link **
bucket_of(gw_uuidmap_link **buckets, size_t n, const bothy_uuid *k)
{
	return &buckets[(size_t) (gw_uuid_hash(k) >> 32) & (n - 1)];
}

static void
link_tail(gw_uuidmap_link **bucket, gw_uuidmap_link *l)
{
	gw_uuidmap_link **p = bucket;

	while (*p != NULL)
		p = &(*p)->next;
	l->next = NULL;
	l->pprev = p;
	*p = l;
}

/* Doubles the buckets; on failure the map keeps its own. */
static void
grow(gw_uuidmap *m)
{
	size_t		n = m->nbuckets == 0 ? MIN_BUCKETS : m->nbuckets * 2;
	gw_uuidmap_link **nb = calloc(n, sizeof(*nb));
	size_t		i;

	if (nb == NULL)
		return;
	/* bucket by bucket, each chain in order: a key's links keep theirs */
	for (i = 0; i < m->nbuckets; i++)
	{
		gw_uuidmap_link *l = m->buckets[i],
				   *next;

		for (; l != NULL; l = next)
		{
			next = l->next;
			link_tail(bucket_of(nb, n, m->key(l)), l);
		}
	}
	free(m->buckets);
	m->buckets = nb;
	m->nbuckets = n;
}

bool
gw_uuidmap_add(gw_uuidmap *m, gw_uuidmap_link *l)
{
	/* already linked: relinking would cut its chain and count it twice */
	if (l->pprev != NULL)
		return true;
	/* no rehash under a walk: it would move links before the walker */
	if (m->grows && m->count >= m->nbuckets && m->walking == 0)
		grow(m);
	if (m->nbuckets == 0)
	{
		l->next = NULL;
		l->pprev = NULL;
		return false;
	}
	link_tail(bucket_of(m->buckets, m->nbuckets, m->key(l)), l);
	m->count++;
	return true;
}

void
gw_uuidmap_remove(gw_uuidmap *m, gw_uuidmap_link *l)
{
	if (l->pprev == NULL)
		return;
	*l->pprev = l->next;
	if (l->next != NULL)
		l->next->pprev = l->pprev;
	l->next = NULL;
	l->pprev = NULL;
	m->count--;
}

static gw_uuidmap_link *
same_from(const gw_uuidmap *m, gw_uuidmap_link *l, const bothy_uuid *k)
{
	for (; l != NULL; l = l->next)
		if (memcmp(m->key(l), k, sizeof(*k)) == 0)
			return l;
	return NULL;
}

gw_uuidmap_link *
gw_uuidmap_first(const gw_uuidmap *m, const bothy_uuid *k)
{
	if (m->nbuckets == 0)
		return NULL;
	return same_from(m, *bucket_of(m->buckets, m->nbuckets, k), k);
}

gw_uuidmap_link *
gw_uuidmap_next_same(const gw_uuidmap *m, gw_uuidmap_link *l)
{
	return same_from(m, l->next, m->key(l));
}

bool
gw_uuidmap_each(gw_uuidmap *m, gw_uuidmap_visit visit, void *arg)
{
	size_t		i;
	bool		went_on = true;

	m->walking++;
	for (i = 0; i < m->nbuckets && went_on; i++)
	{
		gw_uuidmap_link *l = m->buckets[i],
				   *next;

		for (; l != NULL && went_on; l = next)
		{
			next = l->next;
			went_on = visit(l, arg);
		}
	}
	m->walking--;
	return went_on;
}

void
gw_uuidmap_free(gw_uuidmap *m)
{
	if (m->grows)
	{
		free(m->buckets);
		m->buckets = NULL;
		m->nbuckets = 0;
	}
	else
	{
		size_t		i;

		/* a link left pointing into a cleared bucket would corrupt it */
		for (i = 0; i < m->nbuckets; i++)
			while (m->buckets[i] != NULL)
			{
				gw_uuidmap_link *l = m->buckets[i];

				m->buckets[i] = l->next;
				l->next = NULL;
				l->pprev = NULL;
			}
	}
	m->count = 0;
}
