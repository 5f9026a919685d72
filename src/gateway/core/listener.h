/*
 * core/listener.h
 *		The one listening connection of the process (D-M7-17-2): application
 *		name bothy-ephemeral, LISTEN ephemeral, every payload decoded once
 *		with the common codec and handed in order to every route (route.h,
 *		signal).  On loss: one log record, a retry at once, then one every
 *		bothy.listen_reconnect_backoff_cap; once LISTEN succeeded again,
 *		each route reconciles once (route.h, reconcile).
 *
 * The listener counts what it heard: signals by kind (received, or the
 * node's own when a route says so), payloads of another producer's kind
 * (ignored) and malformed ones (dropped, by reason, with one log record).
 */
#ifndef BOTHY_GATEWAY_LISTENER_H
#define BOTHY_GATEWAY_LISTENER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libwebsockets.h>

#define GW_LISTENER_APPNAME "bothy-ephemeral"
typedef struct gw_listener gw_listener;

gw_listener *gw_listener_create(struct lws_context *context, struct lws_vhost *vhost,
								const char *conninfo, const int *backoff_ms,
								int connect_timeout_ms);

/* Connects and LISTENs (then keeps doing so until stopped). */
void		gw_listener_start(gw_listener *l);

/* LISTEN ephemeral holds now. */
bool		gw_listener_up(const gw_listener *l);

/*
 * While a route's signal hook runs: the WAL fence of that signal (the
 * fan-out worker's wal.fence before it), or 0 when none is known (a
 * producer's fallback NOTIFY).  A read of its delivery may be answered by
 * a standby that replayed it (gw_db_submit_read).
 */
uint64_t	gw_listener_fence(void);

/* Closes the connection for good and frees l. */
void		gw_listener_destroy(gw_listener *l);

#endif							/* BOTHY_GATEWAY_LISTENER_H */
