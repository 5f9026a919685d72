/*
 * channel.c
 *		The channel key and the signed NOTIFY (see channel.h and
 *		src/common/envelope.h for the wire form).
 *
 * The key is 32 random bytes drawn when the postmaster sets up shared
 * memory, so it lives exactly as long as the server's notification queue
 * and every listening connection: a restart or a failover ends both, and a
 * node reads the new key on the connection it LISTENs on again
 * (docs/signals.md, "The envelope").  It is never written to disk, a log or
 * a table; bothy.channel_key() hands it to bothy_gateway's logins only
 * (90_privileges.sql).
 */
#include "postgres.h"

#include "commands/async.h"
#include "common/cryptohash.h"
#include "common/hmac.h"
#include "common/sha2.h"
#include "fmgr.h"
#include "utils/builtins.h"

#include "bothy_ext.h"
#include "channel.h"
#include "envelope.h"
#include "shmem.h"

void
bothy_channel_key_init(unsigned char *key)
{
	if (!pg_strong_random(key, BOTHY_ENVELOPE_KEY_BYTES))
		ereport(FATAL,
				(errmsg("could not generate the bothy channel key"),
				 errdetail("pg_strong_random() failed.")));
}

/* HMAC-SHA256 of "{" and rest under the key, truncated (envelope.h). */
static void
channel_mac(const char *payload, size_t len, uint8 mac[BOTHY_ENVELOPE_MAC_BYTES])
{
	pg_hmac_ctx *ctx = pg_hmac_create(PG_SHA256);
	uint8		full[PG_SHA256_DIGEST_LENGTH];

	if (ctx == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	if (pg_hmac_init(ctx, (const uint8 *) bothy_shared->channel_key, BOTHY_ENVELOPE_KEY_BYTES) < 0 ||
		pg_hmac_update(ctx, (const uint8 *) payload, len) < 0 ||
		pg_hmac_final(ctx, full, sizeof(full)) < 0)
	{
		const char *why = pg_hmac_error(ctx);

		pg_hmac_free(ctx);
		elog(ERROR, "could not sign a bothy signal: %s", why);
	}
	pg_hmac_free(ctx);
	memcpy(mac, full, BOTHY_ENVELOPE_MAC_BYTES);
}

void
bothy_channel_notify(const char *payload)
{
	size_t		len = strlen(payload);
	uint8		mac[BOTHY_ENVELOPE_MAC_BYTES];
	char		wire[BOTHY_CHANNEL_MAX_BYTES + 1];

	channel_mac(payload, len, mac);
	if (bothy_envelope_wrap(mac, payload, len, wire, sizeof(wire)) == 0)
		elog(ERROR, "a bothy signal does not fit its envelope");
	Async_Notify(BOTHY_SIGNAL_CHANNEL, wire);
}

PG_FUNCTION_INFO_V1(bothy_channel_key);

/* bothy.channel_key(): the key, for a node that LISTENs (bothy_gateway only). */
Datum
bothy_channel_key(PG_FUNCTION_ARGS)
{
	bytea	   *key = palloc(VARHDRSZ + BOTHY_ENVELOPE_KEY_BYTES);

	SET_VARSIZE(key, VARHDRSZ + BOTHY_ENVELOPE_KEY_BYTES);
	memcpy(VARDATA(key), bothy_shared->channel_key, BOTHY_ENVELOPE_KEY_BYTES);
	PG_RETURN_BYTEA_P(key);
}

StaticAssertDecl(sizeof(((BothyShared *) NULL)->channel_key) == BOTHY_ENVELOPE_KEY_BYTES,
				 "the shared channel key has the envelope's key size");
