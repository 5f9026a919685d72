/*
 * uuidv7_sql.c
 *		bothy.uuidv7(): the common UUIDv7 generator with this backend's state,
 *		the server clock and pg_strong_random.
 *
 * The state lives for the backend, so values are strictly increasing within
 * one backend even inside one millisecond or when the clock steps back.
 * bothy.debug_uuidv7_frozen_ms lets a race test pin two backends to one
 * millisecond; the counter's random seed still orders them.
 */
#include "postgres.h"

#include <time.h>

#include "fmgr.h"
#include "port.h"
#include "utils/uuid.h"

#include "settings.h"
#include "uuid.h"
#include "uuidv7.h"
#include "bothy_ext.h"

static bothy_uuidv7_state backend_uuidv7_state;

static uint64_t
uuidv7_clock_ms(void)
{
	struct timespec ts;

	if (bothy_debug_uuidv7_frozen_ms >= 0)
		return (uint64_t) bothy_debug_uuidv7_frozen_ms;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		elog(ERROR, "clock_gettime failed: %m");
	return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

void
bothy_uuidv7_generate(bothy_uuid *out)
{
	uint8_t		random[BOTHY_UUIDV7_RANDOM_BYTES];

	if (!pg_strong_random(random, sizeof(random)))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not generate random bytes for a UUIDv7")));
	bothy_uuidv7_next(&backend_uuidv7_state, uuidv7_clock_ms(), random, out);
}

PG_FUNCTION_INFO_V1(bothy_uuidv7);

Datum
bothy_uuidv7(PG_FUNCTION_ARGS)
{
	pg_uuid_t  *result = palloc(sizeof(pg_uuid_t));
	bothy_uuid	u;

	StaticAssertStmt(sizeof(u.b) == UUID_LEN, "bothy_uuid must be 16 bytes");
	bothy_uuidv7_generate(&u);
	memcpy(result->data, u.b, UUID_LEN);
	PG_RETURN_UUID_P(result);
}
