/*
 * core/loop.h
 *		The event loop under libwebsockets: lws's own poll() loop, or one of
 *		its event-library plugins (libev, libuv) on a loop of ours.
 */
#ifndef BOTHY_GATEWAY_LOOP_H
#define BOTHY_GATEWAY_LOOP_H

#include <stdbool.h>

#include <libwebsockets.h>

typedef enum gw_loop_kind
{
	GW_LOOP_POLL = 0,
	GW_LOOP_LIBEV,
	GW_LOOP_LIBUV
} gw_loop_kind;

/* "poll", "libev" or "libuv". */
bool		gw_loop_parse(const char *s, gw_loop_kind *out);

/* Before lws_create_context: the loop, and the options that put lws on it. */
bool		gw_loop_prepare(gw_loop_kind k, struct lws_context_creation_info *info);

/* One turn: waits for something to do and does it; false when lws failed. */
bool		gw_loop_run_once(struct lws_context *context);

/* After lws_context_destroy: what lws left to close, then the loop. */
void		gw_loop_finish(void);

#endif							/* BOTHY_GATEWAY_LOOP_H */
