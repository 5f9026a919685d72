/*
 * core/loop.h
 *		The event loop under libwebsockets: a libev loop waiting with epoll,
 *		lws on it through its libev plugin (libwebsockets-evlib_ev.so).
 *		Every wsi is on it: client connections, the listening socket, and
 *		the libpq sockets adopted as raw descriptors (core/pgconn.c).
 */
#ifndef BOTHY_GATEWAY_LOOP_H
#define BOTHY_GATEWAY_LOOP_H

#include <stdbool.h>

#include <ev.h>
#include <libwebsockets.h>

/* Before lws_create_context: the loop, and the options that put lws on it. */
bool		gw_loop_prepare(struct lws_context_creation_info *info);

/* One turn: waits for something to do and does it. */
void		gw_loop_run_once(void);

/* After lws_context_destroy: what lws left, then the loop. */
void		gw_loop_finish(void);

/*
 * A timer of the loop itself, for a deadline that must hold to the
 * millisecond (loop.c says why an lws_sul does not).  Embedded in the
 * struct that owns it, as an lws_sul is; its callback runs from the loop,
 * outside any lws callback.
 */
typedef struct gw_timer gw_timer;
typedef void (*gw_timer_cb) (gw_timer *t);

struct gw_timer
{
	ev_timer	w;				/* on the node's loop */
	gw_timer_cb cb;
};

/* Once, before the first gw_timer_schedule. */
void		gw_timer_init(gw_timer *t, gw_timer_cb cb);

/* Runs cb once, us from now (at least 1 us); a pending run is replaced. */
void		gw_timer_schedule(gw_timer *t, lws_usec_t us);

/* No run pending (none was is fine). */
void		gw_timer_cancel(gw_timer *t);

#endif							/* BOTHY_GATEWAY_LOOP_H */
