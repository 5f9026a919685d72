/*
 * test_uuid.c
 *		Unit tests of src/common/uuid.c and uuidv7.c: the strict text form,
 *		the version 7 checks and the generator's strict order under a fake
 *		clock.
 */
#include <stdio.h>
#include <string.h>

#include "uuid.h"
#include "uuidv7.h"
#include "unit.h"

#define COUNTER_MAX ((UINT64_C(1) << 42) - 1)

/* xorshift64: reproducible "random" bytes for the generator. */
static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

static void
fake_random(uint8_t out[BOTHY_UUIDV7_RANDOM_BYTES])
{
	int			i;

	for (i = 0; i < BOTHY_UUIDV7_RANDOM_BYTES; i++)
	{
		rng_state ^= rng_state << 13;
		rng_state ^= rng_state >> 7;
		rng_state ^= rng_state << 17;
		out[i] = (uint8_t) rng_state;
	}
}

static void
next_at(bothy_uuidv7_state *st, uint64_t now_ms, bothy_uuid *out)
{
	uint8_t		random[BOTHY_UUIDV7_RANDOM_BYTES];

	fake_random(random);
	bothy_uuidv7_next(st, now_ms, random, out);
}

static bool
parses(const char *s)
{
	bothy_uuid	u;

	return bothy_uuid_parse(s, strlen(s), &u);
}

static void
test_parse_format(void)
{
	const char *canon = "01890a5d-ac96-774b-bcce-b302099a8057";
	char		text[BOTHY_UUID_STRLEN + 1];
	char		padded[64];
	bothy_uuid	u;

	UNIT_OK(bothy_uuid_parse(canon, strlen(canon), &u), "parse: canonical lower-case");
	bothy_uuid_format(&u, text);
	UNIT_OK(strcmp(text, canon) == 0, "format: round trip to the same text");
	UNIT_OK(u.b[0] == 0x01 && u.b[15] == 0x57, "parse: byte order is network order");

	/* The buffer need not end after the UUID: only len bytes count. */
	snprintf(padded, sizeof(padded), "%sXYZ", canon);
	UNIT_OK(bothy_uuid_parse(padded, 36, &u), "parse: reads only len bytes");
	UNIT_OK(!bothy_uuid_parse(padded, 37, &u), "parse: len 37 refused");
	UNIT_OK(!bothy_uuid_parse(canon, 35, &u), "parse: len 35 refused");
	UNIT_OK(!bothy_uuid_parse(NULL, 36, &u), "parse: NULL refused");

	UNIT_OK(parses("00000000-0000-0000-0000-000000000000"), "parse: nil UUID is canonical");
	UNIT_OK(parses("ffffffff-ffff-ffff-ffff-ffffffffffff"), "parse: max UUID is canonical");
	UNIT_OK(!parses("01890A5D-AC96-774B-BCCE-B302099A8057"), "parse: upper case refused");
	UNIT_OK(!parses("01890a5d-ac96-774b-bcce-b302099a805F"), "parse: one upper-case digit refused");
	UNIT_OK(!parses("{01890a5d-ac96-774b-bcce-b302099a8057}"), "parse: braces refused");
	UNIT_OK(!parses("01890a5dac96774bbcceb302099a8057"), "parse: no hyphens refused");
	UNIT_OK(!parses("01890a5d-ac96-774b-bcceb-302099a8057"), "parse: misplaced hyphen refused");
	UNIT_OK(!parses("01890a5d-ac96-774b-bcce-b302099a805g"), "parse: non-hex digit refused");
	UNIT_OK(!parses(" 1890a5d-ac96-774b-bcce-b302099a8057"), "parse: space refused");
	UNIT_OK(!parses("01890a5d+ac96-774b-bcce-b302099a8057"), "parse: other separator refused");
	UNIT_OK(!bothy_uuid_parse("01890a5d-ac96-774b-bcce-b302099a80\0" "7", 36, &u),
			"parse: NUL inside refused");

	memset(&u, 0xab, sizeof(u));
	(void) bothy_uuid_parse("nope", 4, &u);
	UNIT_OK(u.b[0] == 0xab && u.b[15] == 0xab, "parse: output untouched on failure");
}

static bothy_uuid
uuid_of(const char *s)
{
	bothy_uuid	u;

	memset(&u, 0, sizeof(u));
	(void) bothy_uuid_parse(s, strlen(s), &u);
	return u;
}

static void
test_v7_checks(void)
{
	bothy_uuid	a = uuid_of("01890a5d-ac96-774b-bcce-b302099a8057");
	bothy_uuid	b = uuid_of("01890a5d-ac96-774b-8cce-b302099a8057");
	bothy_uuid	v4 = uuid_of("3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b");
	bothy_uuid	ncs = uuid_of("01890a5d-ac96-774b-7cce-b302099a8057");
	bothy_uuid	ms = uuid_of("01890a5d-ac96-774b-ccce-b302099a8057");

	UNIT_OK(bothy_uuid_is_v7(&a), "is_v7: version 7, variant 10 (b)");
	UNIT_OK(bothy_uuid_is_v7(&b), "is_v7: version 7, variant 10 (8)");
	UNIT_OK(!bothy_uuid_is_v7(&v4), "is_v7: version 4 refused");
	UNIT_OK(!bothy_uuid_is_v7(&ncs), "is_v7: variant 0xxx refused");
	UNIT_OK(!bothy_uuid_is_v7(&ms), "is_v7: variant 110x refused");
	UNIT_OK(bothy_uuidv7_ms(&a) == UINT64_C(1688096058518), "uuidv7_ms: the first 48 bits");

	UNIT_OK(bothy_uuid_compare(&a, &a) == 0, "compare: equal");
	UNIT_OK(bothy_uuid_compare(&b, &a) < 0, "compare: less");
	UNIT_OK(bothy_uuid_compare(&a, &b) > 0, "compare: greater");
	UNIT_OK(bothy_uuid_compare(&a, &v4) < 0, "compare: first byte decides");
}

/* Strictly increasing and well-formed over n calls at one millisecond. */
static void
test_generator_one_ms(void)
{
	const uint64_t now = UINT64_C(1700000000000);
	bothy_uuidv7_state st = {0, 0};
	bothy_uuid	prev;
	bothy_uuid	cur;
	long		i;
	long		out_of_order = 0;
	long		malformed = 0;

	next_at(&st, now, &prev);
	for (i = 1; i < 1000000; i++)
	{
		next_at(&st, now, &cur);
		if (bothy_uuid_compare(&prev, &cur) >= 0)
			out_of_order++;
		if (!bothy_uuid_is_v7(&cur) || bothy_uuidv7_ms(&cur) != now)
			malformed++;
		prev = cur;
	}
	UNIT_OK(out_of_order == 0, "uuidv7: strictly increasing over 1,000,000 calls in one ms");
	UNIT_OK(malformed == 0, "uuidv7: every value has version 7, variant 10 and the ms");
	UNIT_OK(st.last_ms == now, "uuidv7: one ms never borrowed a later one");
}

static void
test_generator_clock(void)
{
	bothy_uuidv7_state st = {0, 0};
	bothy_uuid	a;
	bothy_uuid	b;
	bothy_uuid	c;
	bothy_uuid	d;
	char		text[BOTHY_UUID_STRLEN + 1];
	bothy_uuid	back;

	next_at(&st, 1000, &a);
	UNIT_OK(bothy_uuidv7_ms(&a) == 1000, "uuidv7: fresh state takes the clock");
	next_at(&st, 400, &b);
	UNIT_OK(bothy_uuid_compare(&a, &b) < 0, "uuidv7: increasing when the clock steps back");
	UNIT_OK(bothy_uuidv7_ms(&b) == 1000, "uuidv7: a backwards clock keeps the last ms");
	next_at(&st, 999, &c);
	UNIT_OK(bothy_uuid_compare(&b, &c) < 0, "uuidv7: still increasing before the clock catches up");
	next_at(&st, 1001, &d);
	UNIT_OK(bothy_uuid_compare(&c, &d) < 0 && bothy_uuidv7_ms(&d) == 1001,
			"uuidv7: a later clock is taken again");

	bothy_uuid_format(&d, text);
	UNIT_OK(bothy_uuid_parse(text, strlen(text), &back) && bothy_uuid_compare(&back, &d) == 0,
			"uuidv7: the text form parses back");

	st.last_ms = 0;
	st.counter = 0;
	next_at(&st, (UINT64_C(1) << 48) + 5, &a);
	UNIT_OK(bothy_uuidv7_ms(&a) == 5, "uuidv7: the clock is taken modulo 2^48");
}

static void
test_generator_overflow(void)
{
	const uint64_t now = 5000;
	bothy_uuidv7_state st;
	bothy_uuid	a;
	bothy_uuid	b;
	bothy_uuid	c;

	st.last_ms = now;
	st.counter = COUNTER_MAX - 1;
	next_at(&st, now, &a);
	UNIT_OK(st.counter == COUNTER_MAX && bothy_uuidv7_ms(&a) == now,
			"uuidv7 overflow: the last counter value stays in its ms");
	UNIT_OK(a.b[6] == 0x7f && a.b[7] == 0xff && a.b[8] == 0xbf && a.b[9] == 0xff &&
			a.b[10] == 0xff && a.b[11] == 0xff, "uuidv7 overflow: all 42 counter bits set");
	next_at(&st, now, &b);
	UNIT_OK(bothy_uuid_compare(&a, &b) < 0, "uuidv7 overflow: increasing across the overflow");
	UNIT_OK(bothy_uuidv7_ms(&b) == now + 1 && st.last_ms == now + 1,
			"uuidv7 overflow: borrows the next ms");
	UNIT_OK(st.counter <= (COUNTER_MAX >> 1), "uuidv7 overflow: reseeded with the top bit clear");
	next_at(&st, now, &c);
	UNIT_OK(bothy_uuid_compare(&b, &c) < 0 && bothy_uuidv7_ms(&c) == now + 1,
			"uuidv7 overflow: the clock behind the borrowed ms keeps it");
}

static void
test_generator_layout(void)
{
	uint8_t		ones[BOTHY_UUIDV7_RANDOM_BYTES];
	uint8_t		zeros[BOTHY_UUIDV7_RANDOM_BYTES];
	bothy_uuidv7_state st = {0, 0};
	bothy_uuid	u;

	memset(ones, 0xff, sizeof(ones));
	memset(zeros, 0, sizeof(zeros));
	ones[6] = 0x12;
	ones[7] = 0x34;
	ones[8] = 0x56;
	ones[9] = 0x78;
	bothy_uuidv7_next(&st, UINT64_C(0x0123456789ab), ones, &u);
	UNIT_OK(u.b[0] == 0x01 && u.b[1] == 0x23 && u.b[2] == 0x45 && u.b[3] == 0x67 &&
			u.b[4] == 0x89 && u.b[5] == 0xab, "uuidv7 layout: 48-bit big-endian ms");
	UNIT_OK(st.counter == (COUNTER_MAX >> 1), "uuidv7 layout: seed has its top bit cleared");
	UNIT_OK(u.b[6] == 0x77 && u.b[7] == 0xff && u.b[8] == 0xbf,
			"uuidv7 layout: version 7, counter in rand_a, variant 10");
	UNIT_OK(u.b[12] == 0x12 && u.b[13] == 0x34 && u.b[14] == 0x56 && u.b[15] == 0x78,
			"uuidv7 layout: low 32 bits of rand_b are the fresh random bytes");

	bothy_uuidv7_next(&st, UINT64_C(0x0123456789ab), zeros, &u);
	UNIT_OK(st.counter == (COUNTER_MAX >> 1) + 1 && u.b[12] == 0 && u.b[15] == 0,
			"uuidv7 layout: same ms increments the counter, random bytes still fresh");
	UNIT_OK(bothy_uuid_is_v7(&u), "uuidv7 layout: all-zero random is still a UUIDv7");
}

int
main(void)
{
	unit_diag("uuid: parse, format, v7 checks");
	test_parse_format();
	test_v7_checks();
	unit_diag("uuidv7: generator under a fake clock");
	test_generator_one_ms();
	test_generator_clock();
	test_generator_overflow();
	test_generator_layout();
	return unit_done();
}
