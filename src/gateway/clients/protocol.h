/*
 * clients/protocol.h
 *		Client protocol v1 (docs/protocol.md): the strict parser
 *		of what a client sends and the encoders of what the node sends.
 *
 * Pure code over jansson, unit-tested in test/unit/gateway/test_protocol.c.
 * Strict: an unknown member, a missing one, a member of the wrong type or
 * form, a duplicate member or anything that is not one JSON object is
 * refused, and the connection then closes with 4002.
 */
#ifndef BOTHY_GATEWAY_PROTOCOL_H
#define BOTHY_GATEWAY_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/parse.h"
#include "keys/token.h"
#include "uuid.h"

/* Limits of the fields (docs/protocol.md, "Limits"). */
#define GW_REF_MAX 128			/* autocomplete ref: 1 .. 128 bytes */
#define GW_QUERY_MAX 1024		/* autocomplete query: 0 .. 1024 bytes */
#define GW_EVENT_MAX INT64_C(9007199254740991)	/* ack event: 0 .. 2^53 - 1 */
#define GW_ITEMS_MAX 50			/* autocomplete_answer items: 0 .. 50 objects */

typedef enum gw_op
{
	GW_OP_NONE = 0,
	GW_OP_IDENTIFY,
	GW_OP_RESUME,
	GW_OP_HEARTBEAT,
	GW_OP_FOCUS,
	GW_OP_IDLE,
	GW_OP_TYPING,
	GW_OP_ACK,
	GW_OP_AUTOCOMPLETE,
	GW_OP_AUTOCOMPLETE_ANSWER
} gw_op;

/* An agent's state in its heartbeat (the codes of signal.h's agent state). */
typedef enum gw_agent_state
{
	GW_AGENT_ONLINE = 0,
	GW_AGENT_BUSY
} gw_agent_state;

typedef struct gw_msg
{
	gw_op		op;
	char		token[BOTHY_TOKEN_MAX + 1];	/* identify, resume */
	size_t		token_len;
	bool		has_thread;		/* focus (false: null), typing (always true) */
	bothy_uuid	thread;
	bool		idle;			/* idle */
	bool		has_state;		/* heartbeat: state given (agents only) */
	gw_agent_state state;		/* heartbeat */
	int64_t		event;			/* ack */
	bothy_uuid	agent;			/* autocomplete */
	char		ref[GW_REF_MAX + 1];	/* autocomplete, NUL-terminated */
	char		query[GW_QUERY_MAX + 1];	/* autocomplete, NUL-terminated */
	bothy_uuid	request;		/* autocomplete_answer */
	char	   *items;			/* autocomplete_answer: the array, compact JSON,
								 * malloc'd; gw_msg_clear frees it */
} gw_msg;

/*
 * Parses one message buf[0..len) (not NUL-terminated).  On GW_PARSE_OK the
 * caller owes gw_msg_clear(out); on any other status nothing is held.
 */
gw_parse_status gw_protocol_parse(const char *buf, size_t len, gw_msg *out);

/* Frees what a parsed message holds (items). */
void		gw_msg_clear(gw_msg *m);

/* The name of an op as clients write it. */
const char *gw_op_name(gw_op op);

/*
 * Encoders: write one message into out (size bytes) and return its length,
 * or -1 when it does not fit.
 */
int			gw_encode_ready(char *out, size_t size, const bothy_uuid *session,
							const bothy_uuid *bind, const char *resume,
							const bothy_uuid *node, int heartbeat_ms,
							bool agent, int64_t acked);
int			gw_encode_heartbeat_ack(char *out, size_t size);

/*
 * {"op":"error","request":OP,"code":CODE}: a call the node could not
 * complete (code "timeout" or "unavailable") or refused ("rejected");
 * the connection stays open.
 */
int			gw_encode_error(char *out, size_t size, gw_op request, const char *code);

#endif							/* BOTHY_GATEWAY_PROTOCOL_H */
