/*
 * hex.h
 *		Lower-case hex, strictly: the one spelling of each byte string, for
 *		the UUID text form, the channel's MACs and the channel key.
 *
 * Inline, so that every program that links uuid.c alone (the unit tests,
 * the benches, bothy-host) needs no other object.  Portable C99, no
 * allocation.
 */
#ifndef BOTHY_HEX_H
#define BOTHY_HEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of a lower-case hex digit, or -1: upper case is not canonical. */
static inline int
bothy_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decodes the 2 * n digits at text into out[0..n); false (out untouched) on any other character. */
static inline bool
bothy_hex_decode(const char *text, size_t n, uint8_t *out)
{
	size_t		i;

	for (i = 0; i < 2 * n; i++)
		if (bothy_hex_value(text[i]) < 0)
			return false;
	for (i = 0; i < n; i++)
		out[i] = (uint8_t) (bothy_hex_value(text[2 * i]) << 4 | bothy_hex_value(text[2 * i + 1]));
	return true;
}

/* Writes 2 * n lower-case digits of bin[0..n) at out (no NUL). */
static inline void
bothy_hex_encode(const uint8_t *bin, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t		i;

	for (i = 0; i < n; i++)
	{
		out[2 * i] = digits[bin[i] >> 4];
		out[2 * i + 1] = digits[bin[i] & 0x0f];
	}
}

#endif							/* BOTHY_HEX_H */
