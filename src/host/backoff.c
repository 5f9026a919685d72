/*
 * host/backoff.c
 *		The reconnect table (see backoff.h).
 */
#include "host/backoff.h"

/*
 * Doubling from a quarter of a second up to 30 s, the cap: a restarted
 * node or edge is back within seconds, and while the host is away its
 * owner's openings are answered 409 host_unavailable, so a host must not
 * wait much longer than a couple of heartbeat intervals (15 s by default)
 * once the server is back.
 */
static const uint32_t table_ms[] = {250, 500, 1000, 2000, 4000, 8000, 16000, 30000};

#define TABLE_LEN (sizeof(table_ms) / sizeof(table_ms[0]))

uint32_t
host_backoff_base_ms(unsigned attempt)
{
	return table_ms[attempt < TABLE_LEN ? attempt : TABLE_LEN - 1];
}

uint32_t
host_backoff_delay_ms(unsigned attempt, uint32_t random)
{
	uint32_t	base = host_backoff_base_ms(attempt);
	uint32_t	jitter = base * HOST_BACKOFF_JITTER_PERCENT / 100;

	return base + random % (jitter + 1);
}
