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
 *
 * Why gw_timer beside lws_sul: lws 4.1's libev plugin keeps one ev_timer
 * for every sul, armed for the earliest one when it last fired.  A sul
 * scheduled from an I/O callback earlier than that is re-armed with
 * ev_timer_set and ev_timer_start on the watcher still active, which
 * libev ignores, so the sul runs only when the one armed before it falls
 * due: a 1 ms sul ran 15 to 190 ms late behind the 200 ms sweeps
 * (docs/standbys.md, "Why a wait may pass the bound").  A gw_timer is an
 * ev_timer of its own, stopped before it is set again.
 */
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

static void
timer_fired(struct ev_loop *l, ev_timer *w, int revents)
{
	gw_timer   *t = lws_container_of(w, gw_timer, w);

	(void) l;
	(void) revents;
	t->cb(t);
}

void
gw_timer_init(gw_timer *t, gw_timer_cb cb)
{
	ev_timer_init(&t->w, timer_fired, 0., 0.);
	t->cb = cb;
}

void
gw_timer_schedule(gw_timer *t, lws_usec_t us)
{
	if (loop == NULL)
		return;
	ev_timer_stop(loop, &t->w);
	/* from now, not from the loop's time cached at this turn's start */
	ev_now_update(loop);
	ev_timer_set(&t->w, (ev_tstamp) (us > 0 ? us : 1) / 1e6, 0.);
	ev_timer_start(loop, &t->w);
}

void
gw_timer_cancel(gw_timer *t)
{
	if (loop != NULL)
		ev_timer_stop(loop, &t->w);
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
