/*
 * core/conn.h
 *		One connection of the listen port as the core sees it: the
 *		transport's part of lws's per-session data (pss).  A WebSocket
 *		connection has its state from upgrade to close and its bounded
 *		send queue; an HTTP request has the answer being written.
 *
 * A route's per-connection struct starts with this one (route.h,
 * conn_size), so lws allocates both at once and a route reaches its own
 * state with lws_container_of.  Kept small on purpose: the goal is 50,000
 * idle identified connections at 4 KiB each, libwebsockets' own buffers
 * included.  The reassembly buffer exists only while a fragmented message
 * is being received.
 */
#ifndef BOTHY_GATEWAY_CONN_H
#define BOTHY_GATEWAY_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <libwebsockets.h>

#include "core/route.h"
#include "core/sendq.h"

/*
 * The state byte: values below GW_CONN_CLOSING are the route's own (0 at
 * upgrade); the core sets GW_CONN_CLOSING once a close is decided, by
 * either side, and nothing sets another state after it.
 */
#define GW_CONN_CLOSING 255

typedef struct gw_conn
{
	struct lws *wsi;
	uint8_t		state;			/* the route's states, then GW_CONN_CLOSING */
	uint8_t		endpoint;		/* its gw_ws_endpoint's index (route.c) */
	uint16_t	close_code;		/* the code of the close frame, ours or the peer's (1005: none) */
	bool		body_owed;		/* HTTP: headers sent, the body not all sent yet (http.c) */
	bool		body_last;		/* HTTP: its last piece is handed to lws */
	bool		body_in;		/* HTTP: a request body is being read into rx */
	bool		close_after;	/* HTTP: the connection closes after this answer */
	bool		rx_paused;		/* gw_conn_rx_pause: lws reads it no more */
	bool		writing;		/* inside write_front: one lws_write per callback */
	int64_t		stall_until;	/* queued output not taken by then: 4008; 0: none */
	int64_t		wake_at;		/* its tick is due then (gw_mono_ms); 0: none */
	lws_dll2_t	in_wheel;		/* the sweep's slot of wake_at */
	lws_dll2_t	in_endpoint;	/* the connections of its endpoint */
	gw_sendq	sendq;
	char	   *rx;				/* reassembly (HTTP: the request body, then the response) */
	size_t		rx_len;
	size_t		body_done;		/* HTTP: bytes of the response handed to lws */
	const gw_http_route *http;	/* HTTP: the route answering, or NULL (the core) */
	void	   *http_call;		/* HTTP: the route's call waiting for its answer */
} gw_conn;

/* The listen port's callback (protocols[0] in server.c): HTTP and every WebSocket path. */
int			gw_conn_callback(struct lws *wsi, enum lws_callback_reasons reason,
							 void *user, void *in, size_t len);

/* Queues one text message; a full queue closes the connection (4008). */
void		gw_conn_send(gw_conn *c, const char *msg, size_t len);

/*
 * The same outside the queue's bound (sendq.h, gw_sendq_push_aside): a
 * short control text to a client whose queue a route keeps full on
 * purpose; a client that does not read it is closed by --send-timeout.
 */
void		gw_conn_send_aside(gw_conn *c, const char *msg, size_t len);

/* The same for one binary message (an endpoint with binary set). */
void		gw_conn_send_binary(gw_conn *c, const void *data, size_t len);

/*
 * A WebSocket ping (no payload), only when no output waits (nothing
 * queued, nothing held by lws): the client's pong, like the ping, is
 * traffic an edge sees on a quiet connection, and waiting output is
 * traffic already or ends in 4008 (--send-timeout).
 */
void		gw_conn_ping(gw_conn *c);

/*
 * A WebSocket ping with payload[0..len) (at most 125 bytes) that goes
 * before everything queued, whatever waits: a mark in the order of the
 * output, which the client's pong (its payload echoed) answers once it
 * read everything written before it (terminal/relay/ack.c).  Arms no
 * timer.
 */
void		gw_conn_ping_first(gw_conn *c, const char *payload, size_t len);

/*
 * The client proved it reads (the route's acknowledgement came): the
 * stall timer starts again if output waits, and a held front is asked
 * again (the endpoint's held).
 */
void		gw_conn_progress(gw_conn *c);

/* Payload bytes queued and not yet handed to lws. */
size_t		gw_conn_queued(const gw_conn *c);

/*
 * Stops (pause) or resumes reading the connection: lws_rx_flow_control.
 * A route pauses the connection whose messages it cannot pass on while the
 * queue they go to is over its bound, and resumes it once that queue
 * drained (its endpoint's sent callback), so nothing grows without a bound
 * between a fast sender and a slow reader.
 */
void		gw_conn_rx_pause(gw_conn *c, bool pause);

/* Decides the close: the frame with code goes out on the next writable. */
void		gw_conn_close(gw_conn *c, int code, const char *reason);

/*
 * Calls visit for each open connection of the endpoint, or of every
 * endpoint when ep is NULL (visit may close the connection it is given,
 * but must not free others).  The count of them, and of every WebSocket
 * connection of the node.
 */
typedef void (*gw_conn_visit) (gw_conn *c, void *arg);
void		gw_conn_each(const gw_ws_endpoint *ep, gw_conn_visit visit, void *arg);
uint32_t	gw_conn_count(const gw_ws_endpoint *ep);
uint32_t	gw_conn_total(void);

/*
 * The deadlines of every connection are met by one sweep every GW_SWEEP_MS
 * instead of a timer each: an lws_sul insertion walks the sorted list, so a
 * timer re-armed per message would cost O(connections).  The sweep visits
 * only the connections that asked for it: gw_conn_wake_at(c, when) asks for
 * the endpoint's tick at when (gw_mono_ms()), met within GW_SWEEP_MS after.
 * Of two wishes the earlier counts; a tick may so come before a deadline
 * that was pushed back, and asks again for what it still waits for.  After
 * its tick a connection has no wake-up until it asks again.
 */
#define GW_SWEEP_MS 200
void		gw_conn_wake_at(gw_conn *c, int64_t when);
void		gw_conn_sweep_start(void);
void		gw_conn_sweep_stop(void);

/* Milliseconds of a monotonic clock (lws_now_usecs). */
int64_t		gw_mono_ms(void);

/*
 * The close codes of the transport, whatever the route (docs/protocol.md;
 * a route declares its own in its own room: clients/client.h,
 * terminal/model.h).  1000, 1006 and 1007 are never sent by the node: they
 * are named to be counted (a peer's normal close, a connection lost, a
 * frame that is not UTF-8).
 */
#define GW_CLOSE_NORMAL 1000
#define GW_CLOSE_GOING_AWAY 1001
#define GW_CLOSE_ABNORMAL 1006
#define GW_CLOSE_BAD_DATA 1007
#define GW_CLOSE_TOO_BIG 1009
#define GW_CLOSE_INTERNAL 1011
#define GW_CLOSE_MALFORMED 4002
#define GW_CLOSE_SLOW 4008

/*
 * The transport's codes bothy_gateway_closes_total counts by name; each
 * route adds its own (core/route.h), and every other code counts as
 * "other".
 */
#define GW_CLOSE_CODES {GW_CLOSE_NORMAL, GW_CLOSE_GOING_AWAY, GW_CLOSE_ABNORMAL, \
		GW_CLOSE_BAD_DATA, GW_CLOSE_TOO_BIG, GW_CLOSE_INTERNAL, GW_CLOSE_MALFORMED, GW_CLOSE_SLOW}

#endif							/* BOTHY_GATEWAY_CONN_H */
