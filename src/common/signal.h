/*
 * signal.h
 *		The signals on the channel "ephemeral": kinds, their members, the
 *		strict decoder, the compact encoder and the reasons a payload is
 *		dropped.  docs/signals.md is the reference for the format.
 *
 * One codec for both halves: the extension validates what it stages and
 * the gateway decodes what it hears with the same code, so a payload the
 * database accepts is exactly a payload every node accepts.  Portable C99,
 * no allocation, no PostgreSQL headers.
 *
 * Include this file as "signal.h" from a quoted include path only
 * (-iquote src/common): with -Isrc/common it would shadow the system's
 * <signal.h>, which PostgreSQL's headers include.
 */
#ifndef BOTHY_COMMON_SIGNAL_H
#define BOTHY_COMMON_SIGNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uuid.h"

/*
 * The longest payload NOTIFY carries in a default PostgreSQL build
 * (D-M2-47-19).  async.c refuses a payload of NOTIFY_PAYLOAD_MAX_LENGTH
 * (BLCKSZ - NAMEDATALEN - 128 = 8000) bytes or more: "payload string too
 * long".  Every payload travels in its envelope (envelope.h), which adds
 * BOTHY_ENVELOPE_OVERHEAD (41) bytes; so 7999 - 41 = 7958: a signal the
 * codec accepts is one the channel carries, signed.
 */
#define BOTHY_CHANNEL_MAX_BYTES 7999
#define BOTHY_SIGNAL_MAX_BYTES 7958

typedef enum bothy_kind
{
	BOTHY_KIND_NONE = 0,		/* a kind outside gateway., terminal. and wal.: ignored */
	BOTHY_KIND_GATEWAY_TYPING,
	BOTHY_KIND_GATEWAY_RUN,
	BOTHY_KIND_GATEWAY_AGENT_PRESENCE,
	BOTHY_KIND_GATEWAY_DEVICE,
	BOTHY_KIND_GATEWAY_CONSUMER,
	BOTHY_KIND_GATEWAY_HINT,
	BOTHY_KIND_GATEWAY_AGENT_EVENT,
	BOTHY_KIND_TERMINAL_SESSION_OPEN,
	BOTHY_KIND_TERMINAL_HOST_CLOSE,
	BOTHY_KIND_TERMINAL_HOST_PRESENT,
	BOTHY_KIND_TERMINAL_HOST_GONE,
	BOTHY_KIND_TERMINAL_SESSION_PAIRED,
	BOTHY_KIND_TERMINAL_LOG,
	BOTHY_KIND_WAL_FENCE,		/* the fan-out worker's, never a producer's */
	BOTHY_KIND_COUNT
} bothy_kind;

/* Codes "online", "busy", "offline". */
typedef enum bothy_agent_state
{
	BOTHY_AGENT_ONLINE = 0,
	BOTHY_AGENT_BUSY,
	BOTHY_AGENT_OFFLINE,
	BOTHY_AGENT_STATE_COUNT
} bothy_agent_state;

/* Codes "free", "included", "metered". */
typedef enum bothy_billing_mode
{
	BOTHY_BILLING_FREE = 0,
	BOTHY_BILLING_INCLUDED,
	BOTHY_BILLING_METERED,
	BOTHY_BILLING_MODE_COUNT
} bothy_billing_mode;

/* Codes "mention", "reply", "direct", "run", "invite", "system". */
typedef enum bothy_hint_kind
{
	BOTHY_HINT_MENTION = 0,
	BOTHY_HINT_REPLY,
	BOTHY_HINT_DIRECT,
	BOTHY_HINT_RUN,
	BOTHY_HINT_INVITE,
	BOTHY_HINT_SYSTEM,
	BOTHY_HINT_KIND_COUNT
} bothy_hint_kind;

/* Optional members present (bit set in sig->optional). */
#define BOTHY_OPT_BILLING_MODE	0x1u	/* gateway.agent_presence */
#define BOTHY_OPT_ACTOR			0x2u	/* gateway.agent_presence */
#define BOTHY_OPT_THREAD		0x4u	/* gateway.hint only (required in typing and run) */
#define BOTHY_OPT_MESSAGE		0x8u	/* gateway.hint */
#define BOTHY_OPT_TARGET		0x10u	/* gateway.hint */
#define BOTHY_OPT_REACH			0x20u	/* gateway.typing and gateway.run (reach.h) */

/* The most nodes a reach names, 32 hex digits each (docs/signals.md, "Reach"). */
#define BOTHY_REACH_MAX 128

/* The largest values of the integer members (version, event and seq are 2^53 - 1). */
#define BOTHY_SIGNAL_VERSION_MAX INT64_C(9007199254740991)
#define BOTHY_SIGNAL_LSN_MAX INT64_MAX	/* a WAL position, as an unsigned 64-bit number */
#define BOTHY_SIGNAL_COUNT_MAX	INT64_C(2147483647)

/*
 * A decoded signal.  Only the members of its kind mean anything; the
 * decoder sets every other field to zero on BOTHY_DECODE_OK.
 */
typedef struct bothy_signal
{
	bothy_kind	kind;
	unsigned	optional;		/* BOTHY_OPT_* bits */
	bothy_uuid	node,
				thread,
				principal,
				run,
				agent,
				actor,
				device,
				gateway_session,
				bind_id,
				recipient,
				nid,
				message,
				target,
				host_id,
				session_id,
				conn_id;
	int64_t		version;		/* gateway.run: 0 .. 9007199254740991 */
	int64_t		event;			/* gateway.agent_event: 0 .. 9007199254740991 */
	int64_t		count;			/* gateway.hint: 0 .. 2147483647 */
	int64_t		seq;			/* terminal.log: 0 .. 9007199254740991 */
	int64_t		lsn;			/* wal.fence: 0 .. 2^63 - 1, a WAL position */
	bothy_agent_state state;
	bothy_billing_mode billing_mode;
	bothy_hint_kind hint_kind;
	bool		quiet;
	int			nreach;			/* typing, run: the nodes that hold members */
	bothy_uuid	reach[BOTHY_REACH_MAX];
} bothy_signal;

typedef enum bothy_decode_status
{
	BOTHY_DECODE_OK = 0,
	BOTHY_DECODE_IGNORED,		/* another producer's kind: not ours to judge */
	BOTHY_DECODE_MALFORMED
} bothy_decode_status;

typedef enum bothy_reason
{
	BOTHY_REASON_NONE = 0,
	BOTHY_REASON_TOO_LONG,
	BOTHY_REASON_NOT_JSON,
	BOTHY_REASON_NOT_OBJECT,
	BOTHY_REASON_NO_KIND,
	BOTHY_REASON_KIND_NOT_STRING,
	BOTHY_REASON_UNKNOWN_KIND,
	BOTHY_REASON_UNKNOWN_MEMBER,
	BOTHY_REASON_DUPLICATE_MEMBER,
	BOTHY_REASON_MISSING_MEMBER,
	BOTHY_REASON_NOT_UUID,
	BOTHY_REASON_NOT_UUIDV7,
	BOTHY_REASON_NOT_CODE,
	BOTHY_REASON_UNKNOWN_CODE,
	BOTHY_REASON_NOT_INTEGER,
	BOTHY_REASON_OUT_OF_RANGE,
	BOTHY_REASON_NOT_BOOLEAN,
	BOTHY_REASON_COUNT
} bothy_reason;

typedef struct bothy_decode_error
{
	bothy_reason reason;

	/*
	 * The member concerned (for unknown_kind: the kind), sanitised so that
	 * it is safe in a log line: only [a-z0-9_.] kept, at most 32 of them;
	 * "" if none.
	 */
	char		member[33];
} bothy_decode_error;

/*
 * Decode buf[0..len) (not necessarily NUL-terminated, never read past len).
 * On BOTHY_DECODE_OK *out holds the signal; on IGNORED and MALFORMED its
 * content is unspecified.  *err is always filled (reason NONE on OK and
 * IGNORED); err may be NULL.
 */
bothy_decode_status bothy_signal_decode(const char *buf, size_t len,
										bothy_signal *out,
										bothy_decode_error *err);

/*
 * Compact JSON: "kind" first, then the kind's members in table order,
 * optional ones only when their bit is set.  Returns the length written
 * (excluding the NUL it always writes when size > 0), or -1 when the
 * signal is invalid or buf is too small.  Invalid: kind NONE or out of
 * range, a code or an integer out of range, an optional bit the kind does
 * not have, or node, bind_id or conn_id not a UUIDv7.  So whatever this
 * writes, bothy_signal_decode accepts and decodes to the same signal.
 */
int			bothy_signal_encode(const bothy_signal *sig, char *buf, size_t size);

/* "gateway.typing", ...; NULL for NONE or out of range. */
const char *bothy_kind_name(bothy_kind kind);

/* Stable snake_case code for logs and metrics ("unknown_member"); NULL out of range. */
const char *bothy_reason_code(bothy_reason reason);

/*
 * A sentence naming the fault, in PostgreSQL's message style (lower case,
 * no trailing period), e.g. `unknown member "foo"`.  Always NUL-terminates
 * when size > 0, truncating if it must.
 */
void		bothy_decode_error_describe(const bothy_decode_error *err,
										char *buf, size_t size);

/* The code of each value; NULL out of range. */
const char *bothy_agent_state_code(bothy_agent_state s);
const char *bothy_billing_mode_code(bothy_billing_mode m);
const char *bothy_hint_kind_code(bothy_hint_kind k);

#endif							/* BOTHY_COMMON_SIGNAL_H */
