/*
 * uuidv7.h
 *		The pure UUIDv7 generator (RFC 9562 section 6.2, method 1: a
 *		fixed-length dedicated counter).
 *
 * The caller supplies the clock and the randomness (the backend uses
 * pg_strong_random, the gateway getrandom), so the generator has no I/O,
 * no global state and can be tested with a fake clock.  Values from one
 * state are strictly increasing, even inside one millisecond and when the
 * clock steps back: bind IDs and conn IDs order events by that alone.
 */
#ifndef BOTHY_UUIDV7_H
#define BOTHY_UUIDV7_H

#include <stdint.h>

#include "uuid.h"

/* Zero-initialised is a fresh state. */
typedef struct bothy_uuidv7_state
{
	uint64_t	last_ms;		/* the millisecond of the last value */
	uint64_t	counter;		/* its 42-bit counter */
} bothy_uuidv7_state;

#define BOTHY_UUIDV7_RANDOM_BYTES 10

/*
 * The next value of st at wall-clock time now_ms (Unix milliseconds, taken
 * modulo 2^48), with fresh random bytes from the caller.
 */
void		bothy_uuidv7_next(bothy_uuidv7_state *st, uint64_t now_ms,
							  const uint8_t random[BOTHY_UUIDV7_RANDOM_BYTES],
							  bothy_uuid *out);

#endif							/* BOTHY_UUIDV7_H */
