/*
 * uuid.c
 *		Parse, format and inspect bothy_uuid values (see uuid.h).
 */
#include "uuid.h"

#include "hex.h"

#include <string.h>

/* Where each byte's two hex digits start in 8-4-4-4-12. */
static const uint8_t bothy_uuid_digit_at[16] = {
	0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34
};

bool
bothy_uuid_parse(const char *s, size_t len, bothy_uuid *out)
{
	bothy_uuid	u;
	size_t		i;

	if (s == NULL || len != BOTHY_UUID_STRLEN ||
		s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-')
		return false;
	for (i = 0; i < 16; i++)
	{
		int			hi = bothy_hex_value(s[bothy_uuid_digit_at[i]]);
		int			lo = bothy_hex_value(s[bothy_uuid_digit_at[i] + 1]);

		if (hi < 0 || lo < 0)
			return false;
		u.b[i] = (uint8_t) (hi << 4 | lo);
	}
	*out = u;
	return true;
}

void
bothy_uuid_format(const bothy_uuid *u, char out[BOTHY_UUID_STRLEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	size_t		i;

	for (i = 0; i < 16; i++)
	{
		out[bothy_uuid_digit_at[i]] = digits[u->b[i] >> 4];
		out[bothy_uuid_digit_at[i] + 1] = digits[u->b[i] & 0x0f];
	}
	out[8] = out[13] = out[18] = out[23] = '-';
	out[BOTHY_UUID_STRLEN] = '\0';
}

bool
bothy_uuid_is_v7(const bothy_uuid *u)
{
	return (u->b[6] >> 4) == 7 && (u->b[8] & 0xc0) == 0x80;
}

uint64_t
bothy_uuidv7_ms(const bothy_uuid *u)
{
	uint64_t	ms = 0;
	int			i;

	for (i = 0; i < 6; i++)
		ms = (ms << 8) | u->b[i];
	return ms;
}

int
bothy_uuid_compare(const bothy_uuid *a, const bothy_uuid *b)
{
	int			c = memcmp(a->b, b->b, sizeof(a->b));

	return (c > 0) - (c < 0);
}
