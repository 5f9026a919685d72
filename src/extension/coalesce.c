/*
 * coalesce.c
 *		Which signals of a set a newer one makes redundant (coalesce.h).
 *
 * Two sorts, no hashing: the sets are a batch of the fan-out worker (at
 * most bothy.fanout_batch_size) or one transaction's staged signals.
 */
#include "postgres.h"

#include "bothy_ext.h"
#include "coalesce.h"

static int
compare_payload(const void *a, const void *b)
{
	const BothyCoalesceEntry *x = *(const BothyCoalesceEntry *const *) a;
	const BothyCoalesceEntry *y = *(const BothyCoalesceEntry *const *) b;
	int			c;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	c = memcmp(x->payload, y->payload, x->len);
	return c != 0 ? c : x->order - y->order;
}

/*
 * The signals a newer one of the same subject makes redundant
 * (bothy_queue_tag_of), sorted by kind, then by subject, highest rank first.
 */
static int
compare_subject(const void *a, const void *b)
{
	const BothyQueueTag *x = &(*(const BothyCoalesceEntry *const *) a)->tag;
	const BothyQueueTag *y = &(*(const BothyCoalesceEntry *const *) b)->tag;
	int			c;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	c = bothy_uuid_compare(&x->subject, &y->subject);
	if (c != 0)
		return c;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return (*(const BothyCoalesceEntry *const *) a)->order -
		(*(const BothyCoalesceEntry *const *) b)->order;
}

int
bothy_coalesce(BothyCoalesceEntry *entries, int n)
{
	BothyCoalesceEntry **sorted;
	int			subjects = 0;
	int			dropped = 0;

	if (n < 2)
		return 0;
	sorted = palloc(sizeof(BothyCoalesceEntry *) * n);
	for (int i = 0; i < n; i++)
		sorted[i] = &entries[i];
	qsort(sorted, n, sizeof(BothyCoalesceEntry *), compare_payload);
	/* sorted by bytes, then by position: the first of identical payloads stays */
	for (int i = 1; i < n; i++)
		if (sorted[i - 1]->len == sorted[i]->len &&
			memcmp(sorted[i - 1]->payload, sorted[i]->payload, sorted[i]->len) == 0)
			sorted[i]->drop = true;

	for (int i = 0; i < n; i++)
		if (!entries[i].drop && entries[i].tag.has_subject)
			sorted[subjects++] = &entries[i];
	qsort(sorted, subjects, sizeof(BothyCoalesceEntry *), compare_subject);
	for (int i = 1; i < subjects; i++)
		if (sorted[i - 1]->tag.kind == sorted[i]->tag.kind &&
			bothy_uuid_compare(&sorted[i - 1]->tag.subject, &sorted[i]->tag.subject) == 0)
			sorted[i]->drop = true;
	pfree(sorted);
	for (int i = 0; i < n; i++)
		dropped += entries[i].drop ? 1 : 0;
	return dropped;
}
