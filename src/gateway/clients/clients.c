/*
 * clients/clients.c
 *		The gateway route's registration (see clients.h): what the core
 *		calls at each step, handed to the modules of this room.
 *
 * A connection's messages go to session.c; device replacement and
 * consumer fencing to fence.c; each ephemeral event kind to the module
 * that rebuilds it for this node's connections (D-M7-17-5); appended
 * agent events to the stream of the consumer and to REST polls waiting
 * here.
 */
#include "clients/agents.h"
#include "clients/autocomplete.h"
#include "clients/binds.h"
#include "clients/client.h"
#include "clients/clients.h"
#include "clients/fence.h"
#include "clients/hints.h"
#include "clients/hub.h"
#include "clients/presence.h"
#include "clients/rest.h"
#include "clients/runs.h"
#include "clients/session.h"
#include "clients/settings.h"
#include "clients/stats.h"
#include "clients/stream.h"
#include "clients/typing.h"
#include "core/node.h"
#include "core/restcall.h"
#include "logline.h"
#include "signal.h"

/* --- /gateway ------------------------------------------------------------- */

static void
ws_established(gw_conn *conn)
{
	gw_client  *c = gw_client_of(conn);

	c->kind = c->counted = GW_CONN_UNIDENTIFIED;
	gw_clients_stats.connections[c->counted]++;
	gw_session_opened(c);
}

static void
ws_message(gw_conn *conn, const char *msg, size_t len, bool binary)
{
	(void) binary;				/* text only: the core refuses binary frames */
	gw_session_message(gw_client_of(conn), msg, len);
}

static void
ws_tick(gw_conn *conn, int64_t now)
{
	gw_session_tick(gw_client_of(conn), now);
}

static void
ws_closed(gw_conn *conn)
{
	gw_client  *c = gw_client_of(conn);

	gw_session_closed(c);
	gw_clients_stats.connections[c->counted]--;
	gw_hub_unindex_conn(&gw_clients_hub, c);
}

const gw_ws_endpoint gw_clients_ws = {
	.path = "/gateway",
	.conn_size = sizeof(gw_client),
	.established = ws_established,
	.message = ws_message,
	.tick = ws_tick,
	.closed = ws_closed,
};

static const gw_ws_endpoint *const endpoints[] = {&gw_clients_ws, NULL};

/* --- /v1/ ------------------------------------------------------------------ */

static const gw_http_route rest = {
	.prefix = "/v1/",
	.request = gw_rest_request,
	/* core/restcall.c: a poll's wait is cancelled through gw_rest_calls.ended */
	.writeable = gw_restcall_writeable,
	.closed = gw_restcall_closed,
};

static const gw_http_route *const http_routes[] = {&rest, NULL};

/* --- the listener ----------------------------------------------------------- */

static void
fence_device(const bothy_signal *sig)
{
	gw_fence_device_heard(&sig->device, &sig->bind_id);
}

static void
fence_consumer(const bothy_signal *sig)
{
	gw_fence_consumer(&sig->agent, &sig->gateway_session, NULL);
}

static void
agent_event(const bothy_signal *sig)
{
	gw_stream_signal(sig);
	gw_rest_agent_event(&sig->agent);
}

/*
 * The kinds this route acts on, one row each, and who handles a signal of
 * another node (docs/development.md, "Adding a signal kind").  Every other
 * kind is another route's: not ours to act on.
 */
static const struct
{
	bothy_kind	kind;
	void		(*handle) (const bothy_signal *sig);
}			kinds[] = {
	{BOTHY_KIND_GATEWAY_TYPING, gw_typing_signal},
	{BOTHY_KIND_GATEWAY_RUN, gw_runs_signal},
	{BOTHY_KIND_GATEWAY_AGENT_PRESENCE, gw_agents_signal},
	{BOTHY_KIND_GATEWAY_DEVICE, fence_device},
	{BOTHY_KIND_GATEWAY_CONSUMER, fence_consumer},
	{BOTHY_KIND_GATEWAY_HINT, gw_hints_signal},
	{BOTHY_KIND_GATEWAY_AGENT_EVENT, agent_event},
};

static bool
on_signal(const bothy_signal *sig)
{
	size_t		i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == sig->kind)
		{
			if (bothy_uuid_compare(&sig->node, &gw.id) == 0)
				return true;	/* delivered locally before it was sent (D-M7-17-1) */
			kinds[i].handle(sig);
			return false;
		}
	return false;				/* the terminal route's: not ours to act on */
}

/*
 * After a lost listener, what the signals would have told is in the
 * database: the bindings of the devices and the holders of the agents'
 * streams (fence.c asks), and the agent events appended meanwhile (each
 * consumer and each waiting poll reads again).  The ephemeral events stay
 * lost (D-M7-17-5).
 */
static void
reconcile(void)
{
	gw_log(GW_LOG_INFO, "gateway route reconciling");
	gw_fence_reconcile();
	gw_stream_reconcile();
	gw_rest_reconcile();
}

/* --- start and stop ---------------------------------------------------------- */

/*
 * No client connection is left: the presence writer stops (its last
 * flush done) and every REST call has its headers out.
 */
static bool
drained(void)
{
	return gw_presence_stop() && gw_rest_pending() == 0;
}

/* The pool is about to go with its calls: no connection may cancel one later. */
static void
forget_call(gw_client *c, void *arg)
{
	(void) arg;
	c->call = NULL;
	c->persist = NULL;
	c->fetch = NULL;
}

static void
forget(void)
{
	gw_runs_stop();
	gw_autocomplete_stop();
	gw_binds_stop();
	gw_hub_each_conn(&gw_clients_hub, forget_call, NULL);
	gw_rest_forget_calls();
}

static const int close_codes[] = GW_CLIENT_CLOSE_CODES;

const gw_route gw_clients_route = {
	.name = "gateway",
	.ws = endpoints,
	.http = http_routes,
	.signal = on_signal,
	.reconcile = reconcile,
	.close_codes = close_codes,
	.nclose_codes = sizeof(close_codes) / sizeof(close_codes[0]),
	.metrics = gw_clients_metrics_write,
	.status = gw_clients_status,
	.config = &gw_clients_config,
	.start = gw_presence_start,
	.stopping = gw_rest_stop,
	.drained = drained,
	.forget = forget,
};
