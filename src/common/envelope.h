/*
 * envelope.h
 *		The signed form of a signal on the channel "ephemeral": the codec's
 *		payload with a member "mac" in front, a MAC under the cluster's
 *		channel key (docs/signals.md, "The envelope").
 *
 * Any database login can NOTIFY on any channel with pg_notify(), and no
 * hook can see its arguments at run time (PostgreSQL's fmgr calls built-in
 * functions directly), so the nodes do not trust the channel: they act only
 * on payloads signed with a key that exists in the server's shared memory
 * and that only bothy's processes and bothy_gateway's logins can read
 * (docs/security.md).  This file is only the framing, shared by both
 * halves; each computes the MAC with its own library (the extension with
 * PostgreSQL's pg_hmac, the gateway with libsodium), HMAC-SHA256 over the
 * unsigned payload, the first 16 bytes, as lower-case hex.
 *
 * Wire form: {"mac":"<32 hex>",<the payload after its opening brace>
 * The MAC covers the payload as the codec wrote it: "{" and that rest.
 * Portable C99, no allocation.
 */
#ifndef BOTHY_COMMON_ENVELOPE_H
#define BOTHY_COMMON_ENVELOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BOTHY_ENVELOPE_KEY_BYTES 32 /* the channel key */
#define BOTHY_ENVELOPE_MAC_BYTES 16 /* HMAC-SHA256, truncated (RFC 2104, 5) */
#define BOTHY_ENVELOPE_HEAD "{\"mac\":\""
#define BOTHY_ENVELOPE_HEAD_LEN 8
#define BOTHY_ENVELOPE_MAC_HEX (2 * BOTHY_ENVELOPE_MAC_BYTES)

/* Bytes the envelope adds to a payload: the head, the MAC, `",`, less "{". */
#define BOTHY_ENVELOPE_OVERHEAD (BOTHY_ENVELOPE_HEAD_LEN + BOTHY_ENVELOPE_MAC_HEX + 2 - 1)

/*
 * Writes the envelope of payload[0..len) (which starts with "{") with mac
 * into out, NUL-terminated; returns its length, or 0 when payload does not
 * start with "{" or out (of outsize bytes) cannot hold it.
 */
size_t		bothy_envelope_wrap(const uint8_t mac[BOTHY_ENVELOPE_MAC_BYTES],
								const char *payload, size_t len, char *out, size_t outsize);

/*
 * Splits an envelope: true when wire[0..len) has exactly the head, 32
 * lower-case hex digits and `",` followed by at least one more byte; then
 * mac holds the MAC and *rest, *restlen the payload after its "{" (the
 * payload itself is "{" followed by that rest).  Nothing else is checked:
 * the MAC first, then the codec.
 */
bool		bothy_envelope_split(const char *wire, size_t len,
								 uint8_t mac[BOTHY_ENVELOPE_MAC_BYTES],
								 const char **rest, size_t *restlen);

#endif							/* BOTHY_COMMON_ENVELOPE_H */
