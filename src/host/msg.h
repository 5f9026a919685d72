/*
 * host/msg.h
 *		The JSON ops of the control connection and of a data connection's
 *		start (docs/host.md, "The control connection" and "Data
 *		connections"): strict parsing of what the server sends, and the
 *		host's own messages.
 *
 * Parsing is strict as the gateway's is: one JSON object within
 * HOST_MSG_MAX bytes, no duplicate member, "op" one of the server's ops,
 * exactly that op's members, each of its type and form (canonical
 * lower-case UUIDs, a canonical base64url nonce, the states a host can
 * be in, heartbeat_ms within the server's range).  An op the host does
 * not know is told apart from a malformed message only for the log:
 * both close the connection with 4002.  Which op may come when is the
 * connection's check (control.c, stream.c).  Pure code (jansson only).
 */
#ifndef BOTHY_HOST_MSG_H
#define BOTHY_HOST_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/proof.h"
#include "uuid.h"

/* The longest text message the host accepts or sends. */
#define HOST_MSG_MAX 4096

/* heartbeat_ms: bothy.terminal_host_heartbeat_interval's range (1 s to 10 min) */
#define HOST_HEARTBEAT_MIN_MS 1000
#define HOST_HEARTBEAT_MAX_MS 600000

/* What `version` says in hello (docs/host.md). */
#define HOST_VERSION_PREFIX "bothy-host/"

typedef enum host_op
{
	HOST_OP_CHALLENGE,			/* control: nonce */
	HOST_OP_READY,				/* control: conn, state, heartbeat_ms */
	HOST_OP_HEARTBEAT_ACK,		/* control */
	HOST_OP_SESSION_OPEN,		/* control: session, grant, device */
	HOST_OP_SESSION_CLOSE,		/* control: session */
	HOST_OP_PROBE,				/* control: nonce */
	HOST_OP_WAITING,			/* data */
	HOST_OP_PAIRED				/* data */
} host_op;

typedef enum host_state
{
	HOST_STATE_CONFIRMING,		/* paired, the owner has not confirmed the fingerprint */
	HOST_STATE_ACTIVE			/* sessions may open */
} host_state;

typedef enum host_msg_result
{
	HOST_MSG_OK,
	HOST_MSG_MALFORMED,			/* not one well-formed op */
	HOST_MSG_UNKNOWN_OP			/* well-formed JSON with an op the host does not know */
} host_msg_result;

typedef struct host_msg
{
	host_op		op;
	char		nonce[HOST_NONCE_TEXT_MAX + 1];	/* challenge, probe */
	bothy_uuid	conn;			/* ready */
	host_state	state;			/* ready */
	uint32_t	heartbeat_ms;	/* ready */
	bothy_uuid	session;		/* session.open, session.close */
	bothy_uuid	grant;			/* session.open */
	bothy_uuid	device;			/* session.open */
} host_msg;

/* Parses one text message from the server. */
host_msg_result host_msg_parse(const char *buf, size_t len, host_msg *m);

/*
 * The host's messages, compact JSON into out (cap bytes, NUL-terminated);
 * each returns the length, or 0 when it does not fit.
 */
size_t		host_msg_hello(char *out, size_t cap, const char *host, const char *sig,
						   const char *version);
size_t		host_msg_pair(char *out, size_t cap, const char *host, const char *code,
						  const char *public_key, const char *sig);
size_t		host_msg_report(char *out, size_t cap, const bothy_uuid *sessions, size_t n);
size_t		host_msg_heartbeat(char *out, size_t cap);
size_t		host_msg_started(char *out, size_t cap, const bothy_uuid *session,
							 const bothy_uuid *grant);
size_t		host_msg_probe_ack(char *out, size_t cap, const char *sig);
size_t		host_msg_identify(char *out, size_t cap, const char *host, const bothy_uuid *session,
							  const bothy_uuid *grant, const char *sig);

#endif							/* BOTHY_HOST_MSG_H */
