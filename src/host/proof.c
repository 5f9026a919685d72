/*
 * host/proof.c
 *		The signed contexts (see proof.h).
 */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "host/proof.h"
#include "base64url.h"

static const char *const lines[] = {
	[HOST_PROOF_HELLO] = "bothy-host-hello-v1",
	[HOST_PROOF_PAIR] = "bothy-host-pair-v1",
	[HOST_PROOF_PROBE] = "bothy-host-probe-v1",
	[HOST_PROOF_DATA] = "bothy-host-data-v1",
};

size_t
host_proof_context(host_proof kind, const char *a, const char *b, char *out, size_t cap)
{
	int			n = snprintf(out, cap, "%s\n%s\n%s", lines[kind], a, b);

	if (n < 0 || (size_t) n >= cap)
	{
		if (cap > 0)
			out[0] = '\0';
		return 0;
	}
	return (size_t) n;
}

bool
host_proof_sign(const host_key *k, host_proof kind, const char *a, const char *b,
				char out[HOST_SIG_TEXT_LEN + 1])
{
	char		context[HOST_PROOF_CONTEXT_MAX + 1];
	uint8_t		sig[crypto_sign_BYTES];
	size_t		len = host_proof_context(kind, a, b, context, sizeof(context));

	out[0] = '\0';
	if (len == 0 ||
		crypto_sign_detached(sig, NULL, (const uint8_t *) context, len, k->sk) != 0)
		return false;
	return bothy_b64url_encode(sig, sizeof(sig), out, HOST_SIG_TEXT_LEN + 1);
}

bool
host_proof_nonce_ok(const char *text, size_t len)
{
	uint8_t		bytes[HOST_NONCE_MAX_BYTES];
	size_t		used = 0;

	return len >= BOTHY_B64URL_LEN(HOST_NONCE_MIN_BYTES) && len <= HOST_NONCE_TEXT_MAX &&
		bothy_b64url_decode(text, len, bytes, sizeof(bytes), &used) &&
		used >= HOST_NONCE_MIN_BYTES;
}
