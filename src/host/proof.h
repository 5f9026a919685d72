/*
 * host/proof.h
 *		What the host signs (docs/protocol.md, "The terminal: control
 *		connection", its signed contexts; docs/host.md, "Pairing"): Ed25519
 *		over ASCII lines joined by "\n" without a trailing newline, sent as
 *		unpadded base64url.
 *
 *		hello      "bothy-host-hello-v1\n<host>\n<nonce>"
 *		pair       "bothy-host-pair-v1\n<host>\n<nonce>"
 *		probe_ack  "bothy-host-probe-v1\n<host>\n<nonce>"
 *		identify   "bothy-host-data-v1\n<session>\n<grant>"
 *
 * UUIDs in canonical lower case; the nonce is its base64url text as the
 * server sent it, not its bytes.
 */
#ifndef BOTHY_HOST_PROOF_H
#define BOTHY_HOST_PROOF_H

#include <stdbool.h>
#include <stddef.h>

#include "host/hostkey.h"

typedef enum host_proof
{
	HOST_PROOF_HELLO,
	HOST_PROOF_PAIR,
	HOST_PROOF_PROBE,
	HOST_PROOF_DATA
} host_proof;

/* A nonce is canonical base64url of this many bytes (docs/host.md). */
#define HOST_NONCE_MIN_BYTES 16
#define HOST_NONCE_MAX_BYTES 128
#define HOST_NONCE_TEXT_MAX 171		/* BOTHY_B64URL_LEN(128) */

/* 64 bytes in unpadded base64url */
#define HOST_SIG_TEXT_LEN 86

/* The longest context: the data line and two UUIDs, or a line, a UUID and a nonce. */
#define HOST_PROOF_CONTEXT_MAX (20 + 1 + 36 + 1 + HOST_NONCE_TEXT_MAX)

/*
 * The context text of kind over a (host or session) and b (nonce or
 * grant) into out, NUL-terminated; its length, or 0 when it does not fit.
 */
size_t		host_proof_context(host_proof kind, const char *a, const char *b, char *out,
							   size_t cap);

/* Signs that context with k: HOST_SIG_TEXT_LEN characters and a NUL. */
bool		host_proof_sign(const host_key *k, host_proof kind, const char *a, const char *b,
							char out[HOST_SIG_TEXT_LEN + 1]);

/* True when text[0..len) is a nonce the host signs: canonical, within the bounds. */
bool		host_proof_nonce_ok(const char *text, size_t len);

#endif							/* BOTHY_HOST_PROOF_H */
