/*
 * test_channel.c
 *		Unit tests of the envelope (src/common/envelope.c) and its check
 *		with the channel key (src/gateway/core/channel.c): a payload signed
 *		as the extension signs it opens to itself; no envelope, a MAC of
 *		another key or payload, upper-case hex, a truncated head and an
 *		envelope with nothing after it are refused; the key's text form is
 *		exactly PostgreSQL's bytea hex.  The expected MAC is Python's
 *		hmac.new(bytes(range(32)), payload, sha256), first 16 bytes.
 */
#include <stdio.h>
#include <string.h>

#include "core/channel.h"
#include "signal.h"
#include "unit.h"

#define PAYLOAD "{\"kind\":\"terminal.log\",\"seq\":7}"
#define SEALED "{\"mac\":\"1f2b70df9bfee31c26e21b9fb98db9a2\",\"kind\":\"terminal.log\",\"seq\":7}"

static gw_channel_verdict
check(const gw_channel_key *key, const char *wire, char *out, size_t *outlen)
{
	return gw_channel_open(key, wire, strlen(wire), out, BOTHY_CHANNEL_MAX_BYTES + 1, outlen);
}

int
main(void)
{
	uint8_t		raw[BOTHY_ENVELOPE_KEY_BYTES],
				mac[BOTHY_ENVELOPE_MAC_BYTES];
	gw_channel_key key,
				other;
	char		text[2 + 2 * BOTHY_ENVELOPE_KEY_BYTES + 1] = "\\x";
	char		out[BOTHY_CHANNEL_MAX_BYTES + 1],
				wrapped[sizeof(SEALED)];
	size_t		outlen = 0;
	int			i;

	unit_diag("src/common/envelope.c, src/gateway/core/channel.c");
	for (i = 0; i < BOTHY_ENVELOPE_KEY_BYTES; i++)
	{
		raw[i] = (uint8_t) i;
		snprintf(text + 2 + 2 * i, 3, "%02x", i);
	}
	UNIT_OK(gw_channel_parse_key(text, strlen(text), &key), "the key in bytea hex is read");
	UNIT_OK(!gw_channel_parse_key(text, strlen(text) - 1, &other), "a key one digit short is refused");
	UNIT_OK(!gw_channel_parse_key(text + 2, strlen(text) - 2, &other), "a key without \\x is refused");
	text[10] = 'A';
	UNIT_OK(!gw_channel_parse_key(text, strlen(text), &other), "a key in upper case is refused");

	UNIT_OK(check(&key, SEALED, out, &outlen) == GW_CHANNEL_SIGNED, "a signed payload opens");
	UNIT_OK(outlen == strlen(PAYLOAD) && strcmp(out, PAYLOAD) == 0, "... to the payload it signed");

	UNIT_OK(check(&key, PAYLOAD, out, &outlen) == GW_CHANNEL_UNSIGNED, "no envelope: unsigned");
	UNIT_OK(check(&key, "{\"mac\":\"1f2b70df9bfee31c26e21b9fb98db9a2\",", out, &outlen) ==
			GW_CHANNEL_UNSIGNED, "an envelope with nothing after it: unsigned");
	UNIT_OK(check(&key, "{\"mac\":\"1F2B70DF9BFEE31C26E21B9FB98DB9A2\",\"kind\":\"terminal.log\",\"seq\":7}",
				  out, &outlen) == GW_CHANNEL_UNSIGNED, "a MAC in upper case: unsigned");
	UNIT_OK(check(&key, "{\"mac\":\"1f2b70df9bfee31c26e21b9fb98db9a\",\"kind\":\"terminal.log\",\"seq\":7}",
				  out, &outlen) == GW_CHANNEL_UNSIGNED, "a MAC a digit short: unsigned");
	UNIT_OK(check(&key, "{\"mac\":\"1f2b70df9bfee31c26e21b9fb98db9a2\",\"kind\":\"terminal.log\",\"seq\":8}",
				  out, &outlen) == GW_CHANNEL_FORGED, "another payload under the MAC: forged");
	UNIT_OK(check(&key, "{\"mac\":\"00000000000000000000000000000000\",\"kind\":\"terminal.log\",\"seq\":7}",
				  out, &outlen) == GW_CHANNEL_FORGED, "another MAC: forged");
	raw[0] ^= 1;
	gw_channel_prepare(raw, &other);
	UNIT_OK(check(&other, SEALED, out, &outlen) == GW_CHANNEL_FORGED, "another key: forged");

	UNIT_OK(bothy_envelope_split(SEALED, strlen(SEALED), mac, &(const char *){NULL}, &outlen),
			"the envelope splits");
	UNIT_OK(bothy_envelope_wrap(mac, PAYLOAD, strlen(PAYLOAD), wrapped, sizeof(wrapped)) ==
			strlen(SEALED) && strcmp(wrapped, SEALED) == 0, "wrapping its MAC gives it back");
	UNIT_OK(bothy_envelope_wrap(mac, PAYLOAD, strlen(PAYLOAD), wrapped, sizeof(wrapped) - 1) == 0,
			"no room for the NUL: nothing written");
	UNIT_OK(bothy_envelope_wrap(mac, "[1]", 3, wrapped, sizeof(wrapped)) == 0,
			"a payload that is not an object: nothing written");
	UNIT_OK(strlen(SEALED) == strlen(PAYLOAD) + BOTHY_ENVELOPE_OVERHEAD, "the envelope adds its overhead");
	return unit_done();
}
