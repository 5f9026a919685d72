/*
 * terminal/relay/wire.h
 *		The stream's text messages (docs/protocol.md, "Terminal streams"):
 *		the session ID of a stream path, the two identify ops, parsed
 *		strictly, the line a host signs for its data connection, and what the
 *		node sends.
 *
 * Pure (jansson and the base64url codec), unit-tested in
 * test/unit/gateway/test_relay_wire.c.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_RELAY_WIRE_H
#define BOTHY_GATEWAY_TERMINAL_RELAY_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keys/token.h"
#include "terminal/hostsig.h"
#include "uuid.h"

/* The subprotocol a side names to be read in larger pieces (optional). */
#define GW_RELAY_SUBPROTOCOL "bothy-terminal-stream"

typedef struct gw_ridentify
{
	uint8_t		side;			/* gw_rside_kind */
	/* device: its terminal session token */
	char		token[BOTHY_TOKEN_MAX + 1];
	size_t		token_len;
	/* host: who it says it is, the session and grant, and its signature */
	bothy_uuid	host;
	bothy_uuid	session;
	bothy_uuid	grant;
	uint8_t		sig[GW_TSIG_BYTES];
} gw_ridentify;

/*
 * The session of a stream path's rest after "/terminal/stream/": exactly
 * one canonical lower-case UUID, nothing after it.
 */
bool		gw_rwire_session_path(const char *rest, bothy_uuid *session);

/*
 * {"op":"identify","side":"device","token":T} or {"op":"identify",
 * "side":"host","host":U,"session":U,"grant":U,"sig":B64}, strictly: one
 * JSON object with exactly these members, no duplicate, every value a
 * string of its form (a token of 1 to 1024 printable ASCII characters,
 * canonical lower-case UUIDs, the base64url of 64 bytes).  False: 4002.
 */
bool		gw_rwire_parse_identify(const char *msg, size_t len, gw_ridentify *out);

/*
 * The payload of a device's pong that echoes a mark of ack.c: the
 * decimal count of bytes, 1 to 20 digits, no sign, no leading zero, at
 * most UINT64_MAX.  False: not an acknowledgement (ignored).
 */
bool		gw_rwire_parse_ack(const char *payload, size_t len, uint64_t *out);

/* What the node sends before the bytes flow. */
extern const char gw_rwire_waiting[];
extern const char gw_rwire_paired[];

#endif							/* BOTHY_GATEWAY_TERMINAL_RELAY_WIRE_H */
