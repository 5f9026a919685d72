/*
 * terminal/route.c
 *		The terminal route's registration (see route.h): its endpoints
 *		(the control connections and the relay's streams), its REST calls,
 *		its part of the shared listener, and what the core calls at each
 *		step, handed to the control plane and to the relay (relay.h).
 *
 * The route acts only on the kinds of terminal.; the gateway route
 * ignores them, as this one ignores the gateway's (D-M7-17-2).  Terminal
 * signals carry no node: a control connection's own announcements are
 * recognised by their conn_id, a connection of this node.
 */
#include <sodium.h>

#include "core/node.h"
#include "logline.h"
#include "terminal/control/connection.h"
#include "terminal/control/endpoint.h"
#include "terminal/control/hostcheck.h"
#include "terminal/control/hosts.h"
#include "terminal/control/opens.h"
#include "terminal/control/presence.h"
#include "terminal/control/probe.h"
#include "terminal/relay/relay.h"
#include "terminal/rest/rest.h"
#include "terminal/route.h"
#include "terminal/send.h"
#include "terminal/control/stats.h"
#include "terminal/settings.h"
#include "terminal/tail.h"

/* How often the remote entries past their window are dropped. */
#define PRESENCE_EXPIRY_MS 1000

static const gw_ws_endpoint *const endpoints[] = {&gw_tcontrol_endpoint, &gw_relay_stream, NULL};
static const gw_http_route *const http_routes[] = {&gw_trest_route, NULL};

static lws_sorted_usec_list_t sul_presence;

/* every node expects it; a node of the host's connection sends it */
static void
session_open(const bothy_signal *sig)
{
	gw_relay_signal(sig);
	gw_topens_signal(&sig->host_id, &sig->session_id);
}

static void
host_close(const bothy_signal *sig)
{
	gw_thostcheck_close(&sig->host_id);
}

static void
host_present(const bothy_signal *sig)
{
	gw_tpresence_heard(&sig->host_id, &sig->conn_id, gw_mono_ms());
	gw_tprobe_heard(&sig->host_id, &sig->conn_id);
}

static void
host_gone(const bothy_signal *sig)
{
	gw_tpresence_gone(&sig->host_id, &sig->conn_id, gw_mono_ms());
}

static void
log_wake(const bothy_signal *sig)
{
	gw_ttail_wake(sig->seq);
}

/*
 * The kinds this route acts on, one row each (docs/development.md, "Adding
 * a signal kind").  by_conn: an announcement of a control connection, this
 * node's own when the connection is here (D-M2-47-7), which comes back and
 * is ignored.
 */
typedef struct kind_row
{
	bothy_kind	kind;
	void		(*handle) (const bothy_signal *sig);
	bool		by_conn;
} kind_row;

static const kind_row kinds[] = {
	{BOTHY_KIND_TERMINAL_SESSION_OPEN, session_open, false},
	{BOTHY_KIND_TERMINAL_SESSION_PAIRED, gw_relay_signal, false},
	{BOTHY_KIND_TERMINAL_HOST_CLOSE, host_close, false},
	{BOTHY_KIND_TERMINAL_HOST_PRESENT, host_present, true},
	{BOTHY_KIND_TERMINAL_HOST_GONE, host_gone, true},
	{BOTHY_KIND_TERMINAL_LOG, log_wake, false},
};

/* The row of kind, or NULL: another route's kind, ignored. */
static const kind_row *
row_of(bothy_kind kind)
{
	size_t		i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == kind)
			return &kinds[i];
	return NULL;
}

void
gw_terminal_dispatch(const bothy_signal *sig)
{
	const kind_row *k = row_of(sig->kind);

	if (k != NULL)
		k->handle(sig);
}

static bool
on_signal(const bothy_signal *sig)
{
	const kind_row *k = row_of(sig->kind);

	if (k == NULL)
		return false;
	/* this node's own announcements come back: ignored (D-M2-47-7) */
	if (k->by_conn && gw_thosts_find(&sig->host_id, &sig->conn_id) != NULL)
		return true;
	k->handle(sig);
	return false;
}

/*
 * D-M2-47-5: LISTEN holds again, or the tail found rows gone that it never
 * read; what was missed is read back from the states.
 */
void
gw_terminal_reconcile(void)
{
	gw_log(GW_LOG_INFO, "terminal route reconciling");
	gw_thostcheck_reconcile();
	gw_relay_reconcile();
	gw_ttail_wake(0);
}

/* The terminal's close codes counted by name (terminal/model.h). */
static const int close_codes[] = GW_TERMINAL_CLOSE_CODES;

/* /metrics in its order: the control plane, the log tail, the REST calls, the relay. */
static void
metrics(gw_metrics_out *out)
{
	gw_tstats_metrics(out);
	gw_ttail_metrics(out);
	gw_trest_metrics(out);
	gw_relay_metrics(out);
}

static bool
status(json_t *s)
{
	return json_object_set_new(s, "terminal_control_connections",
							   json_integer(gw_conn_count(&gw_tcontrol_endpoint))) == 0 &&
		gw_relay_status(s);
}

/* Each row of the log tail: the control plane first, then the relay. */
static void
log_row(const gw_tlog_row *row)
{
	gw_tcontrol_observe(row);
	gw_relay_observe(row);
}

static const gw_ttail_hooks tail_hooks = {.row = log_row, .gap = gw_terminal_reconcile};

static bool
init(void)
{
	/* before anything can send or the tail read (docs/development.md, "The gateway's rooms") */
	gw_terminal_send_hooks(gw_terminal_dispatch, gw_ttail_wake);
	gw_ttail_init(&tail_hooks);
	if (sodium_init() < 0)
	{
		gw_log(GW_LOG_ERROR, "libsodium could not be initialised");
		return false;
	}
	return gw_relay_init();
}

static void
presence_expiry(lws_sorted_usec_list_t *sul)
{
	gw_tpresence_expire(gw_mono_ms());
	lws_sul_schedule(gw.context, 0, sul, presence_expiry,
					 (lws_usec_t) PRESENCE_EXPIRY_MS * LWS_US_PER_MS);
}

static void
start(void)
{
	gw_ttail_start();
	presence_expiry(&sul_presence);
}

static void
stopping(void)
{
	gw_ttail_stop();
	gw_relay_stopping();
}

static bool
drained(void)
{
	return gw_tcontrol_pending() == 0 && gw_trest_pending() == 0 && gw_ttail_idle() &&
		gw_relay_drained();
}

static void
forget(void)
{
	gw_ttail_forget();
	lws_sul_cancel(&sul_presence);
	gw_trest_forget();
	gw_relay_forget();
	gw_tpresence_clear();
}

const gw_route gw_terminal_route = {
	.name = "terminal",
	.ws = endpoints,
	.http = http_routes,
	.signal = on_signal,
	.reconcile = gw_terminal_reconcile,
	.close_codes = close_codes,
	.nclose_codes = sizeof(close_codes) / sizeof(close_codes[0]),
	.metrics = metrics,
	.status = status,
	.config = &gw_terminal_config,
	.init = init,
	.start = start,
	.stopping = stopping,
	.drained = drained,
	.forget = forget,
};
