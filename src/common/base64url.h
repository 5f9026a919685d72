/*
 * base64url.h
 *		Unpadded base64url (RFC 4648 section 5), strict: the one spelling of
 *		each byte string.  Shared by both daemons: the gateway's tokens, key
 *		files and the terminal's nonces and signatures, bothy-host's key file
 *		and signed contexts.
 *
 * Thin wrappers around libsodium's codec, which already refuses padding,
 * characters outside the alphabet and non-zero trailing bits; the wrappers
 * only fix the variant and turn "decoded some other length" into a refusal,
 * so no caller can forget either.  Because it needs libsodium, the top
 * Makefile keeps base64url.c out of the extension (COMMON_DAEMON_SRCS).
 */
#ifndef BOTHY_BASE64URL_H
#define BOTHY_BASE64URL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Characters of the encoding of n bytes, without a NUL. */
#define BOTHY_B64URL_LEN(n) (((n) * 4 + 2) / 3)

/*
 * Encodes bin[0..len) into out, NUL-terminated; false (and out empty when
 * outlen > 0) when out cannot hold BOTHY_B64URL_LEN(len) + 1 bytes.
 */
bool		bothy_b64url_encode(const uint8_t *bin, size_t len, char *out, size_t outlen);

/*
 * Decodes text[0..len) into out; true and *outlen_used set only when the
 * text is canonical unpadded base64url and decodes to at most cap bytes.
 */
bool		bothy_b64url_decode(const char *text, size_t len, uint8_t *out, size_t cap,
								size_t *outlen_used);

#endif							/* BOTHY_BASE64URL_H */
