/*
 * core/channel.h
 *		The channel key of the database the listener LISTENs on, and the
 *		check of every payload's envelope before the codec sees it
 *		(docs/signals.md, "The envelope"; docs/security.md).
 *
 * Any login of the database can pg_notify() on ephemeral; only bothy's
 * processes hold the key that signs (src/extension/channel.c).  So a
 * payload is acted on only when its MAC is the key's: HMAC-SHA256 over the
 * payload without its envelope, the first 16 bytes, compared in constant
 * time.  Pure functions: the listener holds the key it read.
 */
#ifndef BOTHY_GATEWAY_CHANNEL_H
#define BOTHY_GATEWAY_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#include "envelope.h"

/*
 * A channel key ready to check with: HMAC's inner and outer states after
 * the key's blocks, computed once per key, so a payload costs only its own
 * blocks (two SHA-256 compressions fewer each, bench/signal_decode).
 */
typedef struct gw_channel_key
{
	crypto_auth_hmacsha256_state prepared;
} gw_channel_key;

typedef enum gw_channel_verdict
{
	GW_CHANNEL_SIGNED = 0,		/* the key's MAC: hand the payload to the codec */
	GW_CHANNEL_UNSIGNED,		/* no envelope at all */
	GW_CHANNEL_FORGED,			/* an envelope whose MAC is not the key's */
	GW_CHANNEL_VERDICT_COUNT
} gw_channel_verdict;

/* The reason label of a refusal (metrics and log): "unsigned", "forged". */
const char *gw_channel_verdict_code(gw_channel_verdict v);

/*
 * The key from bothy.channel_key()'s text result: PostgreSQL's hex output
 * of a bytea, "\x" and 64 lower-case hex digits, exactly.
 */
bool		gw_channel_parse_key(const char *text, size_t len, gw_channel_key *key);

/* The key from its 32 raw bytes. */
void		gw_channel_prepare(const uint8_t raw[BOTHY_ENVELOPE_KEY_BYTES], gw_channel_key *key);

/*
 * Checks wire[0..len) under key; when signed, the payload ("{" and the
 * rest, NUL-terminated) is written to out (cap bytes, at least len) and its
 * length to *outlen.
 */
gw_channel_verdict gw_channel_open(const gw_channel_key *key, const char *wire, size_t len,
								   char *out, size_t cap, size_t *outlen);

#endif							/* BOTHY_GATEWAY_CHANNEL_H */
