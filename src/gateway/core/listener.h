/*
 * listener.h
 *		The one listening connection of the process (D-M7-17-2): application
 *		name bothy-ephemeral, LISTEN ephemeral, every payload handed in order
 *		to every route.  On loss: one log record, a retry at once, then one
 *		every bothy.listen_reconnect_backoff_cap; once LISTEN succeeded again,
 *		each route reconciles once.
 *
 * The routes are a table filled at start: the gateway route now
 * (route_gateway.c); the terminal route registers the same way.
 */
#ifndef BOTHY_GATEWAY_LISTENER_H
#define BOTHY_GATEWAY_LISTENER_H

#include <stdbool.h>
#include <stddef.h>

#include <libwebsockets.h>

#define GW_LISTENER_APPNAME "bothy-ephemeral"
#define GW_LISTENER_MAX_ROUTES 4

typedef struct gw_route
{
	const char *name;			/* constant, for logs */
	/* one payload, in the order NOTIFY delivered it (not NUL-terminated) */
	void		(*payload) (void *ctx, const char *payload, size_t len);
	/* LISTEN succeeded again after a loss: signals may have been missed */
	void		(*reconcile) (void *ctx);
	void	   *ctx;
} gw_route;

typedef struct gw_listener gw_listener;

gw_listener *gw_listener_create(struct lws_context *context, struct lws_vhost *vhost,
								const char *conninfo, const int *backoff_ms,
								int connect_timeout_ms);

/* Before gw_listener_start; false when the table is full. */
bool		gw_listener_add_route(gw_listener *l, const gw_route *route);

/* Connects and LISTENs (then keeps doing so until stopped). */
void		gw_listener_start(gw_listener *l);

/* LISTEN ephemeral holds now. */
bool		gw_listener_up(const gw_listener *l);

/* Closes the connection for good and frees l. */
void		gw_listener_destroy(gw_listener *l);

#endif							/* BOTHY_GATEWAY_LISTENER_H */
