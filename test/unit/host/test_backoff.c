/*
 * test_backoff.c
 *		Unit tests of src/host/backoff.c: the table, its cap, and the jitter's
 *		bounds with the random number pinned.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "host/backoff.h"
#include "unit.h"

int
main(void)
{
	static const uint32_t expected[] = {250, 500, 1000, 2000, 4000, 8000, 16000, 30000};
	unsigned	i;
	bool		ok = true;

	unit_diag("the reconnect table (src/host/backoff.c)");

	for (i = 0; i < 8; i++)
		ok = ok && unit_case(host_backoff_base_ms(i) == expected[i], "table entry");
	UNIT_OK(ok, "the table doubles from 250 ms and ends at 30 s");
	UNIT_OK(host_backoff_base_ms(8) == 30000 && host_backoff_base_ms(1000) == 30000 &&
			host_backoff_base_ms(~0U) == 30000, "after the table the last entry repeats");

	ok = true;
	for (i = 0; i < 12; i++)
	{
		uint32_t	base = host_backoff_base_ms(i);

		ok = ok && unit_case(host_backoff_delay_ms(i, 0) == base, "no jitter at random 0");
		ok = ok && unit_case(host_backoff_delay_ms(i, base / 5) == base + base / 5,
							 "the most jitter is a fifth");
		ok = ok && unit_case(host_backoff_delay_ms(i, base / 5 + 1) == base,
							 "random wraps at the jitter plus one");
		ok = ok && unit_case(host_backoff_delay_ms(i, UINT32_MAX) <= base + base / 5,
							 "any random stays within the jitter");
	}
	UNIT_OK(ok, "each delay is its base plus up to 20 % jitter");
	UNIT_OK(host_backoff_delay_ms(0, 17) == 267, "attempt 0 with random 17: 267 ms");
	UNIT_OK(HOST_BACKOFF_STABLE_MS >= host_backoff_base_ms(~0U),
			"a connection counts as stable only after the longest delay");
	return unit_done();
}
