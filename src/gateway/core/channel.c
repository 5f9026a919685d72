/*
 * core/channel.c
 *		The channel key and the envelope check (see channel.h).
 *
 * libsodium's HMAC-SHA256 (crypto_auth_hmacsha256, a 32-byte key) is the
 * same function as PostgreSQL's pg_hmac with PG_SHA256 that signs in the
 * extension; the MAC is compared with sodium_memcmp, in time that does not
 * depend on where the bytes differ.
 */
#include <string.h>

#include <sodium.h>

#include "core/channel.h"
#include "hex.h"

static const char *const verdict_codes[GW_CHANNEL_VERDICT_COUNT] = {
	[GW_CHANNEL_SIGNED] = "signed",
	[GW_CHANNEL_UNSIGNED] = "unsigned",
	[GW_CHANNEL_FORGED] = "forged",
};

const char *
gw_channel_verdict_code(gw_channel_verdict v)
{
	return v < GW_CHANNEL_VERDICT_COUNT ? verdict_codes[v] : "unknown";
}

void
gw_channel_prepare(const uint8_t raw[BOTHY_ENVELOPE_KEY_BYTES], gw_channel_key *key)
{
	crypto_auth_hmacsha256_init(&key->prepared, raw, BOTHY_ENVELOPE_KEY_BYTES);
}

bool
gw_channel_parse_key(const char *text, size_t len, gw_channel_key *key)
{
	uint8_t		raw[BOTHY_ENVELOPE_KEY_BYTES];

	if (len != 2 + 2 * BOTHY_ENVELOPE_KEY_BYTES || text[0] != '\\' || text[1] != 'x' ||
		!bothy_hex_decode(text + 2, BOTHY_ENVELOPE_KEY_BYTES, raw))
		return false;
	gw_channel_prepare(raw, key);
	sodium_memzero(raw, sizeof(raw));
	return true;
}

gw_channel_verdict
gw_channel_open(const gw_channel_key *key, const char *wire, size_t len,
				char *out, size_t cap, size_t *outlen)
{
	uint8_t		mac[BOTHY_ENVELOPE_MAC_BYTES];
	uint8_t		full[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_state st = key->prepared;
	const char *rest;
	size_t		restlen;

	if (!bothy_envelope_split(wire, len, mac, &rest, &restlen) || cap < restlen + 2)
		return GW_CHANNEL_UNSIGNED;
	out[0] = '{';
	memcpy(out + 1, rest, restlen);
	out[restlen + 1] = '\0';
	crypto_auth_hmacsha256_update(&st, (const unsigned char *) out, restlen + 1);
	crypto_auth_hmacsha256_final(&st, full);
	if (sodium_memcmp(full, mac, BOTHY_ENVELOPE_MAC_BYTES) != 0)
		return GW_CHANNEL_FORGED;
	*outlen = restlen + 1;
	return GW_CHANNEL_SIGNED;
}
