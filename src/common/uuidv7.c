/*
 * uuidv7.c
 *		The UUIDv7 generator (see uuidv7.h).
 *
 * Layout: 48 bits of milliseconds, version 7, 12 bits rand_a, variant 10,
 * 62 bits rand_b.  The 42-bit counter fills rand_a and the top 30 bits of
 * rand_b, so it sits right after the timestamp and memcmp order follows it;
 * the low 32 bits of rand_b are fresh random on every call, so values stay
 * unguessable even when the counter only increments.
 */
#include "uuidv7.h"

#define BOTHY_UUIDV7_MS_MASK		((UINT64_C(1) << 48) - 1)
#define BOTHY_UUIDV7_COUNTER_MAX	((UINT64_C(1) << 42) - 1)

/*
 * A seed from the first six random bytes with the counter's top bit
 * cleared: at least 2^41 increments remain before the counter overflows.
 */
static uint64_t
bothy_uuidv7_seed(const uint8_t random[BOTHY_UUIDV7_RANDOM_BYTES])
{
	uint64_t	seed = 0;
	int			i;

	for (i = 0; i < 6; i++)
		seed = (seed << 8) | random[i];
	return seed & (BOTHY_UUIDV7_COUNTER_MAX >> 1);
}

static void
bothy_uuidv7_advance(bothy_uuidv7_state *st, uint64_t now_ms,
					 const uint8_t random[BOTHY_UUIDV7_RANDOM_BYTES])
{
	if (now_ms > st->last_ms)
	{
		st->last_ms = now_ms;
		st->counter = bothy_uuidv7_seed(random);
		return;
	}

	/*
	 * Same millisecond, or the clock went back: keep the old millisecond so
	 * the order holds, and borrow the next one when the counter runs out.
	 */
	if (st->counter >= BOTHY_UUIDV7_COUNTER_MAX)
	{
		st->last_ms = (st->last_ms + 1) & BOTHY_UUIDV7_MS_MASK;
		st->counter = bothy_uuidv7_seed(random);
		return;
	}
	st->counter++;
}

void
bothy_uuidv7_next(bothy_uuidv7_state *st, uint64_t now_ms,
				  const uint8_t random[BOTHY_UUIDV7_RANDOM_BYTES],
				  bothy_uuid *out)
{
	uint64_t	ms;
	uint64_t	c;
	int			i;

	bothy_uuidv7_advance(st, now_ms & BOTHY_UUIDV7_MS_MASK, random);
	ms = st->last_ms;
	c = st->counter;

	for (i = 0; i < 6; i++)
		out->b[i] = (uint8_t) (ms >> (40 - 8 * i));
	out->b[6] = (uint8_t) (0x70 | ((c >> 38) & 0x0f));
	out->b[7] = (uint8_t) (c >> 30);
	out->b[8] = (uint8_t) (0x80 | ((c >> 24) & 0x3f));
	out->b[9] = (uint8_t) (c >> 16);
	out->b[10] = (uint8_t) (c >> 8);
	out->b[11] = (uint8_t) c;
	for (i = 0; i < 4; i++)
		out->b[12 + i] = random[6 + i];
}
