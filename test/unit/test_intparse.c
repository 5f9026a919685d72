/*
 * test_intparse.c
 *		Unit tests of src/common/intparse.c: the strict decimal integer of
 *		both daemons' options and of the numbers they read back from the
 *		database and from HTTP headers.  Built with -std=c99 like the other
 *		src/common tests, because the file links into the extension too.
 */
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "intparse.h"
#include "unit.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* True when s parses within min..max to want. */
static bool
int_is(const char *s, long min, long max, long want)
{
	long		v = ~want;		/* anything but want */

	return bothy_parse_int(s, min, max, &v) && v == want;
}

/* True when s is refused and *out is left alone. */
static bool
int_refused(const char *s, long min, long max)
{
	long		v = 4242;

	return !bothy_parse_int(s, min, max, &v) && v == 4242;
}

static void
test_parse_int(void)
{
	static const char *const refused[] = {
		"", " 1", "1 ", "+1", "--1", "-", "1e3", "0x10", "12a", "1.0", "1,000",
		"\t1", "1\n", "\xd9\xa1",
	};
	size_t		i;
	bool		pass = true;

	UNIT_OK(int_is("0", 0, 10, 0) && int_is("10", 0, 10, 10) && int_is("7", 0, 10, 7),
			"parse_int: digits within the range");
	for (i = 0; i < N_ELEMS(refused); i++)
		pass = unit_case(int_refused(refused[i], -100, 100), refused[i]) && pass;
	UNIT_OK(pass, "parse_int: empty, blanks, signs, exponents, hex and non-digits refused, out untouched");
	UNIT_OK(int_refused(NULL, 0, 10), "parse_int: NULL refused");
	UNIT_OK(int_is("-0", -5, 5, 0), "parse_int: \"-0\" is 0 where negatives are allowed");
	UNIT_OK(int_refused("-0", 0, 5), "parse_int: \"-0\" refused where min is not negative");
	UNIT_OK(int_refused("-1", 0, 5), "parse_int: a negative refused where min is 0");
	UNIT_OK(int_is("-5", -5, 5, -5) && int_refused("-6", -5, 5),
			"parse_int: negative edge of the range");
	UNIT_OK(int_is("100", 1, 100, 100) && int_refused("101", 1, 100) &&
			int_is("1", 1, 100, 1) && int_refused("0", 1, 100),
			"parse_int: both ends inclusive, one past refused");
	UNIT_OK(int_is("007", 0, 10, 7) && int_is("0000000000000000000000000001", 0, 10, 1),
			"parse_int: leading zeros are digits (no octal, no overflow on zeros)");
	UNIT_OK(int_is("9223372036854775807", 0, LONG_MAX, LONG_MAX),
			"parse_int: LONG_MAX parses");
	UNIT_OK(int_refused("9223372036854775808", 0, LONG_MAX) &&
			int_refused("99999999999999999999999", 0, LONG_MAX),
			"parse_int: above LONG_MAX refused, not wrapped");
	UNIT_OK(int_is("-9223372036854775807", LONG_MIN, 0, -LONG_MAX),
			"parse_int: -LONG_MAX parses");
	UNIT_OK(int_refused("4294967296", 0, 65535), "parse_int: a value that wraps an int is refused");
}

int
main(void)
{
	unit_diag("bothy_parse_int");
	test_parse_int();
	return unit_done();
}
