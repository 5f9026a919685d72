/*
 * core/loop.c
 *		The event loop the node runs on (see loop.h).
 *
 * lws's own loop waits with poll(); the others are lws's event-library
 * plugins on a loop this file creates and runs (lws's "foreign loop"), so
 * that the node runs it one iteration at a time, as it does lws_service,
 * and checks for its exit between them.  Chosen by BOTHY_EVENT_LOOP (poll,
 * libev, libuv; default poll) for measuring them side by side
 * (docs/performance.md); glib was measured with a build that had it too.
 */
#include <stdlib.h>
#include <string.h>

#include <ev.h>
#include <uv.h>

#include "core/loop.h"

static gw_loop_kind kind;
static void *foreign[1];
static struct ev_loop *ev;
static uv_loop_t uv;

static const char *const names[] = {"poll", "libev", "libuv"};

bool
gw_loop_parse(const char *s, gw_loop_kind *out)
{
	int			i;

	for (i = 0; i < (int) (sizeof(names) / sizeof(names[0])); i++)
		if (strcmp(s, names[i]) == 0)
		{
			*out = (gw_loop_kind) i;
			return true;
		}
	return false;
}

bool
gw_loop_prepare(gw_loop_kind k, struct lws_context_creation_info *info)
{
	kind = k;
	switch (k)
	{
		case GW_LOOP_POLL:
			return true;
		case GW_LOOP_LIBEV:
			ev = ev_loop_new(EVBACKEND_EPOLL);
			if (ev == NULL)
				return false;
			foreign[0] = ev;
			info->options |= LWS_SERVER_OPTION_LIBEV;
			break;
		case GW_LOOP_LIBUV:
			if (uv_loop_init(&uv) != 0)
				return false;
			foreign[0] = &uv;
			info->options |= LWS_SERVER_OPTION_LIBUV;
			break;
	}
	info->foreign_loops = foreign;
	return true;
}

bool
gw_loop_run_once(struct lws_context *context)
{
	switch (kind)
	{
		case GW_LOOP_POLL:
			return lws_service(context, 0) >= 0;
		case GW_LOOP_LIBEV:
			ev_run(ev, EVRUN_ONCE);
			return true;
		case GW_LOOP_LIBUV:
			uv_run(&uv, UV_RUN_ONCE);
			return true;
	}
	return false;
}

void
gw_loop_finish(void)
{
	switch (kind)
	{
		case GW_LOOP_POLL:
			return;
		case GW_LOOP_LIBEV:
			if (ev != NULL)
			{
				/* what lws closed at its context's destroy */
				ev_run(ev, EVRUN_NOWAIT);
				ev_loop_destroy(ev);
				ev = NULL;
			}
			return;
		case GW_LOOP_LIBUV:
			/* lws's handles close asynchronously: run until they have */
			uv_run(&uv, UV_RUN_DEFAULT);
			uv_loop_close(&uv);
			return;
	}
}
