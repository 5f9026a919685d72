/*
 * terminal/relay/conn.h
 *		One stream connection at /terminal/stream/<session>: the core's
 *		gw_conn, then the relay's side of it, shared by the files of the
 *		relay (the endpoint, the identify, the flow of bytes).
 *
 * Small: lws allocates the largest conn_size of every route for every
 * connection of the node, the gateway route's clients included.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_RELAY_CONN_H
#define BOTHY_GATEWAY_TERMINAL_RELAY_CONN_H

#include <stdint.h>

#include "core/conn.h"
#include "terminal/relay/slot.h"
#include "terminal/relay/window.h"
#include "uuid.h"

/* The relay's states of conn.state; the core's GW_CONN_CLOSING ends them. */
typedef enum gw_rconn_state
{
	GW_RCONN_NEW = 0,			/* upgraded, waiting for identify */
	GW_RCONN_IDENTIFYING,		/* identify checked so far, its database call running */
	GW_RCONN_JOINED				/* in its slot: waiting or paired */
} gw_rconn_state;

struct gw_ridentify_call;

typedef struct gw_rconn
{
	gw_conn		conn;			/* the transport's part: first */
	gw_rside	side;			/* its side in the relay's machine */
	bothy_uuid	session;		/* the session of its path */
	int64_t		quiet_until;	/* identify by then (--identify-timeout); 0: none */
	int64_t		ping_at;		/* the next keepalive ping (--stream-ping-interval) */
	struct gw_ridentify_call *call;	/* the identify's database call, or NULL */
	/* a device's acknowledgement of its output (ack.c) */
	gw_rwindow	win;			/* bytes written, marked, acknowledged (window.h) */
	int64_t		ack_ping_ms;	/* when the last mark went */
	int64_t		ack_due;		/* the drain's mark waits till then; 0: none */
} gw_rconn;

static inline gw_rconn *
gw_rconn_of(gw_conn *c)
{
	return lws_container_of(c, gw_rconn, conn);
}

static inline gw_rconn *
gw_rconn_of_side(gw_rside *side)
{
	return lws_container_of(side, gw_rconn, side);
}

/* relay.c: the relay's sweep runs (armed on first use: the loop exists then). */
void		gw_relay_wake(void);

/* identify.c: an identify message of a NEW connection. */
void		gw_ridentify_message(gw_rconn *c, const char *msg, size_t len);

/* identify.c: the connection closes while its identify call runs. */
void		gw_ridentify_cancel(gw_rconn *c);

/* identify.c: identify calls running (for the stop's drain). */
int			gw_ridentify_pending(void);

/* flow.c: a binary message of a joined side, to its counterpart. */
void		gw_rflow_pass(gw_rconn *from, const void *data, size_t len);

/* flow.c: the connection's queue shrank: resume its counterpart if paused. */
void		gw_rflow_sent(gw_rconn *to);

/* flow.c: c was told paired: a full queue of c holds its new counterpart back. */
void		gw_rflow_paired(gw_rconn *c);

/* flow.c: read the side again (its pairing ended). */
void		gw_rflow_resume(gw_rconn *c);

/* ack.c: the device has --stream-window bytes unacknowledged: write it no more. */
bool		gw_rack_held(gw_rconn *c);

/* ack.c: a binary message of len bytes went toward the side: mark them when due. */
void		gw_rack_sent(gw_rconn *c, size_t len);

/* ack.c: the side's wake-up: a drain's mark that waited. */
void		gw_rack_tick(gw_rconn *c, int64_t now);

/* ack.c: the node stops reading the side (flow.c): its pongs wait behind its input. */
void		gw_rack_paused(gw_rconn *c);

/* ack.c: a pong of the side: an acknowledgement if it echoes a mark. */
void		gw_rack_pong(gw_rconn *c, const char *payload, size_t len);

#endif							/* BOTHY_GATEWAY_TERMINAL_RELAY_CONN_H */
