/*
 * base64url.c
 *		Strict unpadded base64url on top of libsodium (see base64url.h).
 */
#include "base64url.h"

#include <sodium.h>

bool
bothy_b64url_encode(const uint8_t *bin, size_t len, char *out, size_t outlen)
{
	/* sodium_bin2base64 aborts the process on a short buffer: check first */
	if (outlen < BOTHY_B64URL_LEN(len) + 1)
	{
		if (outlen > 0)
			out[0] = '\0';
		return false;
	}
	sodium_bin2base64(out, outlen, bin, len, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	return true;
}

bool
bothy_b64url_decode(const char *text, size_t len, uint8_t *out, size_t cap,
					size_t *outlen_used)
{
	size_t		used = 0;

	/*
	 * b64_end NULL makes libsodium refuse any character it stops at, so the
	 * whole of text must be the encoding; ignore NULL allows no whitespace.
	 */
	if (sodium_base642bin(out, cap, text, len, NULL, &used, NULL,
						  sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0)
		return false;
	*outlen_used = used;
	return true;
}
