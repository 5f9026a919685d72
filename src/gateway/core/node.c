/*
 * core/node.c
 *		The node's global state and its small helpers (see node.h).
 */
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#include "core/node.h"
#include "logline.h"

gw_node		gw;

int64_t
gw_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
gw_new_uuid(bothy_uuid *out)
{
	uint8_t		rnd[BOTHY_UUIDV7_RANDOM_BYTES];

	/* getrandom of 10 bytes never returns short once the pool is ready */
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
	{
		gw_log(GW_LOG_ERROR, "getrandom failed");
		abort();
	}
	bothy_uuidv7_next(&gw.uuids, (uint64_t) gw_now_ms(), rnd, out);
}

bool
gw_ready(void)
{
	return gw.started && !gw.stopping && gw.db != NULL && gw_db_up(gw.db);
}
