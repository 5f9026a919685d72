/*
 * core/parse.h
 *		The status of a strict parse of one WebSocket message: one enum and
 *		one log code for both routes' parsers (clients/protocol.c and the
 *		terminal's control wire, terminal/wire.c).
 *
 * Both parsers refuse the same things in the same words (docs/protocol.md:
 * a message that is not one JSON object, a missing or unknown op or
 * member, a member of the wrong form), and a refusal closes the
 * connection with 4002; the code only names the reason in the log.
 * Pure C, no lws: the unit tests of both parsers link core/parse.c.
 */
#ifndef BOTHY_GATEWAY_PARSE_H
#define BOTHY_GATEWAY_PARSE_H

typedef enum gw_parse_status
{
	GW_PARSE_OK = 0,
	GW_PARSE_NOT_JSON,			/* not one JSON value, or a duplicate member */
	GW_PARSE_NOT_OBJECT,
	GW_PARSE_NO_OP,				/* no "op", or not a string */
	GW_PARSE_UNKNOWN_OP,
	GW_PARSE_UNKNOWN_FIELD,
	GW_PARSE_MISSING_FIELD,
	GW_PARSE_BAD_FIELD			/* wrong type, form or length */
} gw_parse_status;

/* A constant code for logs ("unknown_op"); "unknown" out of range. */
const char *gw_parse_status_code(gw_parse_status s);

#endif
