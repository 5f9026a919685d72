/*
 * core/sendq.h
 *		A connection's bounded output queue: whole messages, text or binary,
 *		each allocated with the headroom libwebsockets needs in front
 *		(LWS_PRE), written one per WRITEABLE callback.
 *
 * Bounded in bytes: a client that does not read makes push refuse, and
 * the caller closes it instead of letting the node's memory grow.  An
 * empty queue holds no allocation, so an idle connection costs only the
 * struct (the 50,000-connection budget).  Pure: no libwebsockets here.
 */
#ifndef BOTHY_GATEWAY_SENDQ_H
#define BOTHY_GATEWAY_SENDQ_H

#include <stdbool.h>
#include <stddef.h>

typedef struct gw_sendq_msg
{
	struct gw_sendq_msg *next;
	size_t		len;			/* payload bytes after the headroom */
	bool		binary;			/* a binary message; else text */
	bool		ping;			/* a WebSocket ping, in order with the rest */
	bool		aside;			/* over no limit, not in bytes (a ping, a route's control text) */
	unsigned char data[];		/* headroom, then the payload */
} gw_sendq_msg;

typedef struct gw_sendq
{
	gw_sendq_msg *head;
	gw_sendq_msg *tail;
	size_t		bytes;			/* payload bytes queued, the messages aside left out */
} gw_sendq;

typedef enum gw_sendq_status
{
	GW_SENDQ_OK = 0,
	GW_SENDQ_FULL,				/* would pass the limit: nothing queued */
	GW_SENDQ_NOMEM
} gw_sendq_status;

/*
 * Appends a copy of data[0..len) after headroom bytes, as a text message,
 * unless the queued payload would then pass limit bytes.
 */
gw_sendq_status gw_sendq_push(gw_sendq *q, size_t headroom, const void *data,
							  size_t len, size_t limit);

/* The same, as a binary message (the terminal's bytes). */
gw_sendq_status gw_sendq_push_binary(gw_sendq *q, size_t headroom, const void *data,
									 size_t len, size_t limit);

/*
 * A text message after what is queued, over no limit and not in bytes: a
 * route's control text that must reach a client whose queue the route
 * keeps full on purpose (the relay's waiting/paired, docs/terminal.md).
 */
gw_sendq_status gw_sendq_push_aside(gw_sendq *q, size_t headroom, const void *data, size_t len);

/* A ping with payload data[0..len), after what is queued; over no limit, not in bytes. */
gw_sendq_status gw_sendq_push_ping(gw_sendq *q, size_t headroom, const void *data, size_t len);

/* The same, before everything queued: it goes next. */
gw_sendq_status gw_sendq_push_ping_first(gw_sendq *q, size_t headroom, const void *data, size_t len);

/* The oldest message, or NULL. */
static inline gw_sendq_msg *
gw_sendq_front(const gw_sendq *q)
{
	return q->head;
}

/* Frees the oldest message. */
void		gw_sendq_pop(gw_sendq *q);

/* Frees everything. */
void		gw_sendq_clear(gw_sendq *q);

#endif							/* BOTHY_GATEWAY_SENDQ_H */
