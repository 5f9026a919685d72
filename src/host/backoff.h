/*
 * host/backoff.h
 *		The control connection's reconnect delays: a table like the lws
 *		minimal ws client's (a base delay per attempt, the last one
 *		repeated) with random jitter added on top, so that many host
 *		services cut off by one node's death do not all come back in the
 *		same millisecond.
 *
 * Pure: the caller draws the random number (libsodium's randombytes), so
 * the unit tests can pin it.
 */
#ifndef BOTHY_HOST_BACKOFF_H
#define BOTHY_HOST_BACKOFF_H

#include <stdint.h>

/* Jitter: up to this percentage of the base delay is added. */
#define HOST_BACKOFF_JITTER_PERCENT 20

/*
 * A connection that stayed logged in this long resets the attempts, so a
 * server that accepts and drops at once (a 4002 loop, a node starting)
 * still meets a growing delay.
 */
#define HOST_BACKOFF_STABLE_MS 30000

/* The base delay of attempt n (0: the first reconnect), milliseconds. */
uint32_t	host_backoff_base_ms(unsigned attempt);

/*
 * The delay before attempt n: its base plus (random % (jitter + 1)) where
 * jitter is HOST_BACKOFF_JITTER_PERCENT of the base.
 */
uint32_t	host_backoff_delay_ms(unsigned attempt, uint32_t random);

#endif							/* BOTHY_HOST_BACKOFF_H */
