/*
 * terminal/hostsig.c
 *		Verifying a host service's signatures (see hostsig.h).
 */
#include <stdio.h>

#include <sodium.h>

#include "base64url.h"
#include "terminal/hostsig.h"

static const char *const contexts[] = {
	[GW_HSIG_HELLO] = "bothy-host-hello-v1",
	[GW_HSIG_PAIR] = "bothy-host-pair-v1",
	[GW_HSIG_PROBE] = "bothy-host-probe-v1",
	[GW_HSIG_DATA] = "bothy-host-data-v1",
};

/* The longest second line: a nonce's text or a UUID. */
#define SECOND_MAX (GW_TNONCE_TEXT > BOTHY_UUID_STRLEN ? GW_TNONCE_TEXT : BOTHY_UUID_STRLEN)

void
gw_tnonce_text(const uint8_t nonce[GW_TNONCE_BYTES], char out[GW_TNONCE_TEXT + 1])
{
	(void) bothy_b64url_encode(nonce, GW_TNONCE_BYTES, out, GW_TNONCE_TEXT + 1);
}

bool
gw_hsig_verify(gw_hsig kind, const uint8_t key[GW_TKEY_BYTES], const bothy_uuid *first,
			   const char *second, const uint8_t sig[GW_TSIG_BYTES])
{
	char		msg[32 + BOTHY_UUID_STRLEN + SECOND_MAX + 3];
	char		f[BOTHY_UUID_STRLEN + 1];
	int			n;

	if ((unsigned) kind >= sizeof(contexts) / sizeof(contexts[0]))
		return false;
	bothy_uuid_format(first, f);
	n = snprintf(msg, sizeof(msg), "%s\n%s\n%s", contexts[kind], f, second);
	if (n < 0 || (size_t) n >= sizeof(msg))
		return false;
	return crypto_sign_verify_detached(sig, (const unsigned char *) msg, (unsigned long long) n,
									   key) == 0;
}

bool
gw_hsig_verify_nonce(gw_hsig kind, const uint8_t key[GW_TKEY_BYTES], const bothy_uuid *host,
					 const uint8_t nonce[GW_TNONCE_BYTES], const uint8_t sig[GW_TSIG_BYTES])
{
	char		text[GW_TNONCE_TEXT + 1];

	gw_tnonce_text(nonce, text);
	return gw_hsig_verify(kind, key, host, text, sig);
}

bool
gw_hsig_verify_data(const uint8_t key[GW_TKEY_BYTES], const bothy_uuid *session,
					const bothy_uuid *grant, const uint8_t sig[GW_TSIG_BYTES])
{
	char		g[BOTHY_UUID_STRLEN + 1];

	bothy_uuid_format(grant, g);
	return gw_hsig_verify(GW_HSIG_DATA, key, session, g, sig);
}
