/*
 * terminal/control/wire.h
 *		The control connection's messages (docs/protocol.md, "The terminal:
 *		control connection"): the strict parser of what a host service sends
 *		and the encoders of what the node sends.
 *
 * Pure code over jansson and libsodium's base64, unit-tested in
 * test/unit/gateway/test_twire.c.  Strict like the client protocol: one
 * JSON object, a known op, exactly its members (no unknown, none missing,
 * none twice), each of its form; anything else is refused and the
 * connection closes with 4002.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_WIRE_H
#define BOTHY_GATEWAY_TERMINAL_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/parse.h"
#include "terminal/hostsig.h"
#include "terminal/model.h"
#include "uuid.h"

/* Key, signature and nonce sizes and the nonce's text: terminal/hostsig.h. */
#define GW_TCODE_LEN 16			/* a pairing code: the Crockford alphabet, lower case */
#define GW_TVERSION_MAX 64		/* hello's version: 1 .. 64 printable ASCII */
#define GW_TREPORT_MAX 32		/* report's sessions: 0 .. 32 UUIDs */

/* What a host service sends. */
typedef enum gw_top
{
	GW_TOP_NONE = 0,
	GW_TOP_HELLO,
	GW_TOP_PAIR,
	GW_TOP_REPORT,
	GW_TOP_HEARTBEAT,
	GW_TOP_SESSION_STARTED,
	GW_TOP_PROBE_ACK
} gw_top;

typedef struct gw_tmsg
{
	gw_top		op;
	bothy_uuid	host;			/* hello, pair */
	uint8_t		sig[GW_TSIG_BYTES];	/* hello, pair, probe_ack */
	uint8_t		key[GW_TKEY_BYTES];	/* pair: public_key */
	char		code[GW_TCODE_LEN + 1];	/* pair, NUL-terminated */
	bothy_uuid	session;		/* session.started */
	bothy_uuid	grant;			/* session.started */
	bothy_uuid	sessions[GW_TREPORT_MAX];	/* report: the sessions the host runs */
	size_t		nsessions;
} gw_tmsg;

/* Parses buf[0..len) (not NUL-terminated); *out is set only on GW_PARSE_OK. */
gw_parse_status	gw_tmsg_parse(const char *buf, size_t len, gw_tmsg *out);

/*
 * Encoders: one message into out (size bytes), its length, or -1 when it
 * does not fit.
 */
int			gw_tenc_challenge(char *out, size_t size, const uint8_t nonce[GW_TNONCE_BYTES]);
int			gw_tenc_probe(char *out, size_t size, const uint8_t nonce[GW_TNONCE_BYTES]);
int			gw_tenc_ready(char *out, size_t size, const bothy_uuid *conn, gw_thost state,
						  int64_t heartbeat_ms);
int			gw_tenc_heartbeat_ack(char *out, size_t size);
int			gw_tenc_session_open(char *out, size_t size, const bothy_uuid *session,
								 const bothy_uuid *grant, const bothy_uuid *device);
int			gw_tenc_session_close(char *out, size_t size, const bothy_uuid *session);

#endif							/* BOTHY_GATEWAY_TERMINAL_WIRE_H */
