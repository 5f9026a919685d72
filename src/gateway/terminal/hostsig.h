/*
 * terminal/hostsig.h
 *		The host service's Ed25519 signatures (docs/protocol.md, "The
 *		terminal: control connection", its table of signed contexts;
 *		docs/host.md, "The control connection"): each over ASCII lines
 *		joined by "\n", without a trailing newline, a fixed context first.
 *
 *		hello      bothy-host-hello-v1, host, nonce
 *		pair       bothy-host-pair-v1, host, nonce   (proves the key presented)
 *		probe_ack  bothy-host-probe-v1, host, nonce
 *		identify   bothy-host-data-v1, session, grant (the data connection's)
 *
 * UUIDs in canonical lower case; a nonce as its base64url text as sent
 * (gw_tnonce_text).  Shared ground of the terminal: the sizes here are
 * what both the control connection's messages and the relay's identify
 * use.  Verified with libsodium (crypto_sign_verify_detached); unit-tested in
 * test/unit/gateway/test_twire.c.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_HOSTSIG_H
#define BOTHY_GATEWAY_TERMINAL_HOSTSIG_H

#include <stdbool.h>
#include <stdint.h>

#include "uuid.h"

/*
 * The sizes of what a host signs with and answers: shared ground, so that
 * the control wing's messages and the relay's identify name the same
 * sizes without either including the other.
 */
#define GW_TKEY_BYTES 32		/* a raw Ed25519 public key */
#define GW_TSIG_BYTES 64		/* an Ed25519 signature */
#define GW_TNONCE_BYTES 32		/* a challenge's or a probe's nonce */
#define GW_TNONCE_TEXT 43		/* its base64url, unpadded */

/* The base64url text of a nonce, as sent and signed: out holds GW_TNONCE_TEXT + 1 bytes. */
void		gw_tnonce_text(const uint8_t nonce[GW_TNONCE_BYTES], char out[GW_TNONCE_TEXT + 1]);

typedef enum gw_hsig
{
	GW_HSIG_HELLO = 0,
	GW_HSIG_PAIR,
	GW_HSIG_PROBE,
	GW_HSIG_DATA
} gw_hsig;

/*
 * Whether sig is key's signature of kind's context, first and then
 * second: hello, pair and probe sign the host and the nonce's text
 * (gw_hsig_verify_nonce), identify the session and the grant.
 */
bool		gw_hsig_verify(gw_hsig kind, const uint8_t key[GW_TKEY_BYTES],
						   const bothy_uuid *first, const char *second,
						   const uint8_t sig[GW_TSIG_BYTES]);

/* hello, pair or probe_ack over host and the nonce as sent (its base64url). */
bool		gw_hsig_verify_nonce(gw_hsig kind, const uint8_t key[GW_TKEY_BYTES],
								 const bothy_uuid *host, const uint8_t nonce[GW_TNONCE_BYTES],
								 const uint8_t sig[GW_TSIG_BYTES]);

/* identify of a data connection over session and grant. */
bool		gw_hsig_verify_data(const uint8_t key[GW_TKEY_BYTES], const bothy_uuid *session,
								const bothy_uuid *grant, const uint8_t sig[GW_TSIG_BYTES]);

#endif							/* BOTHY_GATEWAY_TERMINAL_HOSTSIG_H */
