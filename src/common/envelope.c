/*
 * envelope.c
 *		The signed form of a signal (see envelope.h).
 *
 * Hex, not base64url: the extension cannot link libsodium's codec
 * (base64url.c is daemon-only), and hex.c's strict lower case gives one
 * spelling per MAC, which strict comparison needs.
 */
#include <string.h>

#include "envelope.h"
#include "hex.h"

size_t
bothy_envelope_wrap(const uint8_t mac[BOTHY_ENVELOPE_MAC_BYTES],
					const char *payload, size_t len, char *out, size_t outsize)
{
	size_t		total = len + BOTHY_ENVELOPE_OVERHEAD;
	char	   *p = out;

	if (len < 1 || payload[0] != '{' || outsize < total + 1)
		return 0;
	memcpy(p, BOTHY_ENVELOPE_HEAD, BOTHY_ENVELOPE_HEAD_LEN);
	p += BOTHY_ENVELOPE_HEAD_LEN;
	bothy_hex_encode(mac, BOTHY_ENVELOPE_MAC_BYTES, p);
	p += BOTHY_ENVELOPE_MAC_HEX;
	*p++ = '"';
	*p++ = ',';
	memcpy(p, payload + 1, len - 1);
	p += len - 1;
	*p = '\0';
	return total;
}

bool
bothy_envelope_split(const char *wire, size_t len, uint8_t mac[BOTHY_ENVELOPE_MAC_BYTES],
					 const char **rest, size_t *restlen)
{
	const char *hex = wire + BOTHY_ENVELOPE_HEAD_LEN;
	size_t		head = BOTHY_ENVELOPE_HEAD_LEN + BOTHY_ENVELOPE_MAC_HEX + 2;

	if (len <= head || memcmp(wire, BOTHY_ENVELOPE_HEAD, BOTHY_ENVELOPE_HEAD_LEN) != 0 ||
		hex[BOTHY_ENVELOPE_MAC_HEX] != '"' || hex[BOTHY_ENVELOPE_MAC_HEX + 1] != ',' ||
		!bothy_hex_decode(hex, BOTHY_ENVELOPE_MAC_BYTES, mac))
		return false;
	*rest = wire + head;
	*restlen = len - head;
	return true;
}

/* What the codec accepts, signed, is what NOTIFY carries (signal.h). */
#include "signal.h"
typedef char bothy_envelope_fits[BOTHY_SIGNAL_MAX_BYTES + BOTHY_ENVELOPE_OVERHEAD ==
								 BOTHY_CHANNEL_MAX_BYTES ? 1 : -1];
