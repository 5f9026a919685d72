/*
 * clients/client.h
 *		One client connection of the gateway route (/gateway, client
 *		protocol v1): a person's device or an agent consumer.  Its struct
 *		starts with the core's gw_conn (core/conn.h), so lws allocates both
 *		as one per-session data; the route's state follows.
 *
 * Kept small on purpose: the goal is 50,000 idle identified connections
 * at 4 KiB each, libwebsockets' own buffers included.
 */
#ifndef BOTHY_GATEWAY_CLIENT_H
#define BOTHY_GATEWAY_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include <libwebsockets.h>

#include "clients/protocol.h"
#include "clients/stats.h"
#include "core/conn.h"
#include "core/db.h"
#include "core/uuidmap.h"
#include "uuid.h"

/*
 * Threads whose last typing op a connection remembers for --typing-interval:
 * at most this many threads per interval pass, each at most once.
 */
#define GW_TYPING_SLOTS 4

/* The route's states of conn.state; the core's GW_CONN_CLOSING ends them. */
typedef enum gw_client_state
{
	GW_CS_NEW = 0,				/* upgraded, waiting for identify or resume */
	GW_CS_IDENTIFYING,			/* token verified, database call running */
	GW_CS_READY,				/* ready sent */
	GW_CS_CLOSING = GW_CONN_CLOSING	/* close decided; the close frame is next */
} gw_client_state;

typedef struct gw_client
{
	gw_conn		conn;			/* the transport's part: first */
	uint8_t		kind;			/* gw_conn_kind of the token */
	uint8_t		counted;		/* gw_conn_kind counted in metrics now */
	bool		idle;			/* idle op */
	bool		has_focus;		/* focus op: a thread, or none */
	bool		resumed;		/* the session came from a resume token */
	bool		ack_pending;	/* a newer ack waits for the running save */
	bool		ack_pending_client;	/* ... and one of those was the client's */
	bool		save_at_ready;	/* agent: taken elsewhere while identify ran */
	uint8_t		presence;		/* presence.c: counted in the node's rows */
	gw_op		call_op;		/* the op whose database call runs */
	bothy_uuid	session;		/* gateway session */
	bothy_uuid	bind;			/* this binding of the session; while a person's
								 * identify runs, the newest bind ID of another
								 * session of the device seen (fence.c) */
	bothy_uuid	principal;		/* person or agent */
	bothy_uuid	device;			/* person connections */
	bothy_uuid	focus;			/* has_focus */
	int64_t		acked;			/* agent: the highest acknowledgement (saved or saving) */
	int64_t		saved_acked;	/* agent: the highest the database confirmed */
	int64_t		saving_acked;	/* agent: the one the running save carries */
	int64_t		ack_next;		/* agent: the ack waiting (ack_pending) */
	gw_uuidmap_link in_index[3];	/* hub: session, principal, device */
	int64_t		quiet_until;	/* no identify, or no message, by then: session.c */
	int64_t		renew_at;		/* agent: the next save that renews the lease */
	gw_db_call *call;			/* the running database call, or NULL */
	lws_dll2_t	in_binds;		/* person: its device bind waits (binds.c) */
	struct gw_bind_batch *batch;	/* person: the bind call carrying it, or NULL */
	uint32_t	batch_at;		/* its position in that call */
	uint8_t		autocompleting;	/* person: its autocomplete requests waiting */
	/* person: typing.c's rate limit, the threads typed in last */
	struct
	{
		bothy_uuid	thread;
		int64_t		at;			/* gw_mono_ms of the typing op passed on */
	}			typing[GW_TYPING_SLOTS];
	/* agent: its presence (agents.c) and its event stream (stream.c) */
	uint8_t		agent_state;	/* gw_agent_state of its last heartbeat */
	bool		announced;		/* its presence was announced since ready or offline */
	bool		refetch;		/* a newer event was signalled while a read ran */
	int64_t		seen_ms;		/* gw_now_ms of its last message */
	int64_t		persisted_ms;	/* gw_now_ms of the heartbeat stored last */
	gw_db_call *persist;		/* the heartbeat being stored, or NULL */
	int64_t		sent;			/* highest event ID delivered to it */
	int64_t		latest;			/* highest event ID known to exist (INT64_MAX: unknown) */
	gw_db_call *fetch;			/* the events being read, or NULL */
} gw_client;

/* The client of a connection of the route's endpoint (clients.c). */
static inline gw_client *
gw_client_of(gw_conn *c)
{
	return lws_container_of(c, gw_client, conn);
}

/* The route's close codes (docs/protocol.md), beside the transport's (core/conn.h). */
#define GW_CLOSE_TOKEN 4001
#define GW_CLOSE_SILENT 4009
#define GW_CLOSE_FENCED 4015
#define GW_CLOSE_TAKEN 4017

/* The route's codes counted by name in bothy_gateway_closes_total. */
#define GW_CLIENT_CLOSE_CODES {GW_CLOSE_TOKEN, GW_CLOSE_SILENT, GW_CLOSE_FENCED, GW_CLOSE_TAKEN}

#endif							/* BOTHY_GATEWAY_CLIENT_H */
