/*
 * core/loop.c
 *		The node's event loop (see loop.h): libev waiting with epoll, this
 *		file's own, with libwebsockets on it through lws's libev plugin
 *		(lws's "foreign loop": lws adds its watchers to a loop it did not
 *		make).
 *
 * Why not lws's own loop: lws 4.1 waits with poll(), which scans every
 * descriptor at every turn; with 10,000 connections a turn cost about
 * 1.4 ms, an idle node 36 to 47 ms of CPU a second and one heartbeating
 * as its clients do about 800 (docs/performance.md, "Idle connections on
 * one node").  Of lws's event-library plugins, libev was measured the
 * cheapest beside libuv and glib (glib polls every descriptor too), and
 * libuv's plugin closes a connection a second time when a callback asks
 * for its close (lws issue 3569: the close frame is lost), which libev's
 * does not.
 *
 * The loop runs one iteration at a time, as lws_service did, so that the
 * node checks for its exit between them (server.c).
 */
#include <ev.h>

#include "core/loop.h"

static struct ev_loop *loop;
static void *foreign[1];

bool
gw_loop_prepare(struct lws_context_creation_info *info)
{
	/* EVFLAG_NOENV: no LIBEV_FLAGS from the environment picks another backend */
	loop = ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOENV);
	if (loop == NULL)
		return false;
	foreign[0] = loop;
	info->foreign_loops = foreign;
	info->options |= LWS_SERVER_OPTION_LIBEV;
	return true;
}

void
gw_loop_run_once(void)
{
	ev_run(loop, EVRUN_ONCE);
}

void
gw_loop_finish(void)
{
	if (loop == NULL)
		return;
	/* what lws stopped at its context's destroy */
	ev_run(loop, EVRUN_NOWAIT);
	ev_loop_destroy(loop);
	loop = NULL;
}
