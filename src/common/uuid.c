/*
 * uuid.c
 *		Parse, format and inspect bothy_uuid values (see uuid.h).
 */
#include "uuid.h"

#include <string.h>

/* Offsets of the four hyphens of 8-4-4-4-12. */
static bool
bothy_uuid_is_hyphen_at(size_t i)
{
	return i == 8 || i == 13 || i == 18 || i == 23;
}

/* The value of a lower-case hex digit, or -1: upper case is not canonical. */
static int
bothy_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

bool
bothy_uuid_parse(const char *s, size_t len, bothy_uuid *out)
{
	bothy_uuid	u = {{0}};
	size_t		i;
	size_t		nibble = 0;

	if (s == NULL || len != BOTHY_UUID_STRLEN)
		return false;
	for (i = 0; i < len; i++)
	{
		int			v;

		if (bothy_uuid_is_hyphen_at(i))
		{
			if (s[i] != '-')
				return false;
			continue;
		}
		v = bothy_hex_value(s[i]);
		if (v < 0)
			return false;
		if (nibble % 2 == 0)
			u.b[nibble / 2] = (uint8_t) (v << 4);
		else
			u.b[nibble / 2] |= (uint8_t) v;
		nibble++;
	}
	*out = u;
	return true;
}

void
bothy_uuid_format(const bothy_uuid *u, char out[BOTHY_UUID_STRLEN + 1])
{
	static const char digits[] = "0123456789abcdef";
	size_t		i;
	size_t		nibble = 0;

	for (i = 0; i < BOTHY_UUID_STRLEN; i++)
	{
		uint8_t		byte;

		if (bothy_uuid_is_hyphen_at(i))
		{
			out[i] = '-';
			continue;
		}
		byte = u->b[nibble / 2];
		out[i] = digits[nibble % 2 == 0 ? byte >> 4 : byte & 0x0f];
		nibble++;
	}
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
