/*
 * intparse.c
 *		The strict decimal integer (see intparse.h).
 */
#include "intparse.h"

#include <limits.h>
#include <stddef.h>

bool
bothy_parse_int(const char *s, long min, long max, long *out)
{
	const char *p = s;
	long		v = 0;
	bool		neg = false;

	if (s == NULL || *s == '\0')
		return false;
	if (*p == '-' && min < 0)
	{
		neg = true;
		p++;
	}
	if (*p == '\0')
		return false;
	for (; *p != '\0'; p++)
	{
		if (*p < '0' || *p > '9')
			return false;
		/* refuse before the multiplication overflows, never wrap */
		if (v > (LONG_MAX - (*p - '0')) / 10)
			return false;
		v = v * 10 + (*p - '0');
	}
	if (neg)
		v = -v;
	if (v < min || v > max)
		return false;
	*out = v;
	return true;
}
