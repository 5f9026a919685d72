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

#include <libwebsockets.h>

/* Before lws_create_context: the loop, and the options that put lws on it. */
bool		gw_loop_prepare(struct lws_context_creation_info *info);

/* One turn: waits for something to do and does it. */
void		gw_loop_run_once(void);

/* After lws_context_destroy: what lws left, then the loop. */
void		gw_loop_finish(void);

#endif							/* BOTHY_GATEWAY_LOOP_H */
