/*
 * conn.h
 *		One client WebSocket connection: the per-session data (pss) of the
 *		gateway protocol, its state from upgrade to close, and its bounded
 *		send queue.
 *
 * Kept small on purpose: the goal is 50,000 idle identified connections
 * at 4 KiB each, libwebsockets' own buffers included.  The reassembly
 * buffer exists only while a fragmented message is being received.
 */
#ifndef BOTHY_GATEWAY_CONN_H
#define BOTHY_GATEWAY_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <libwebsockets.h>

#include "db.h"
#include "metrics.h"
#include "protocol.h"
#include "sendq.h"
#include "uuid.h"

/*
 * Threads whose last typing op a connection remembers for --typing-interval:
 * at most this many threads per interval pass, each at most once.
 */
#define GW_TYPING_SLOTS 4

typedef enum gw_conn_state
{
	GW_CS_NEW = 0,				/* upgraded, waiting for identify or resume */
	GW_CS_IDENTIFYING,			/* token verified, database call running */
	GW_CS_READY,				/* ready sent */
	GW_CS_CLOSING				/* close decided; the close frame is next */
} gw_conn_state;

typedef struct gw_conn
{
	struct lws *wsi;
	uint8_t		state;			/* gw_conn_state */
	uint8_t		kind;			/* gw_conn_kind of the token */
	uint8_t		counted;		/* gw_conn_kind counted in metrics now */
	bool		idle;			/* idle op */
	bool		has_focus;		/* focus op: a thread, or none */
	bool		resumed;		/* the session came from a resume token */
	bool		ack_pending;	/* a newer ack waits for the running save */
	bool		ack_pending_client;	/* ... and one of those was the client's */
	bool		save_at_ready;	/* agent: taken elsewhere while identify ran */
	uint16_t	close_code;		/* the code of the close frame */
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
	lws_dll2_t	in_all;			/* hub->all */
	lws_dll2_t	in_index[3];	/* hub: session, principal, device */
	int64_t		quiet_until;	/* no identify, or no message, by then: session.c */
	int64_t		renew_at;		/* agent: the next save that renews the lease */
	int64_t		stall_until;	/* queued output not taken by then: 4008; 0: none */
	gw_db_call *call;			/* the running database call, or NULL */
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
	gw_sendq	sendq;
	char	   *rx;				/* reassembly (HTTP: the response) */
	size_t		rx_len;
	size_t		body_done;		/* HTTP: bytes of the response handed to lws */
	struct gw_rest *rest;		/* HTTP: a REST call waiting for its answer (rest.c) */
	bool		body_owed;		/* HTTP: headers sent, the body not all sent yet (http.c) */
	bool		body_last;		/* HTTP: its last piece is handed to lws */
} gw_conn;

/* The gateway protocol's callback (protocols[0] in server.c, also HTTP). */
int			gw_conn_callback(struct lws *wsi, enum lws_callback_reasons reason,
							 void *user, void *in, size_t len);

/* Queues one text message; a full queue closes the connection (4008). */
void		gw_conn_send(gw_conn *c, const char *msg, size_t len);

/* Decides the close: the frame with code goes out on the next writable. */
void		gw_conn_close(gw_conn *c, int code, const char *reason);

/*
 * The deadlines of every connection are checked by one sweep every
 * GW_SWEEP_MS instead of a timer each: an lws_sul insertion walks the
 * sorted list, so a timer re-armed per message would cost O(connections).
 * The deadlines are in gw_mono_ms() and are met within GW_SWEEP_MS.
 */
#define GW_SWEEP_MS 200
void		gw_conn_sweep_start(void);
void		gw_conn_sweep_stop(void);

/* Milliseconds of a monotonic clock (lws_now_usecs). */
int64_t		gw_mono_ms(void);

/* The close codes (docs/protocol.md). */
#define GW_CLOSE_GOING_AWAY 1001
#define GW_CLOSE_TOO_BIG 1009
#define GW_CLOSE_INTERNAL 1011
#define GW_CLOSE_TOKEN 4001
#define GW_CLOSE_MALFORMED 4002
#define GW_CLOSE_SLOW 4008
#define GW_CLOSE_SILENT 4009
#define GW_CLOSE_FENCED 4015
#define GW_CLOSE_TAKEN 4017

#endif							/* BOTHY_GATEWAY_CONN_H */
