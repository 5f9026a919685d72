/*
 * route_gateway.c
 *		The gateway route (see route_gateway.h).
 *
 * Device replacement and consumer fencing go to fence.c; each ephemeral
 * event kind to the module that rebuilds it for this node's connections
 * (D-M7-17-5); appended agent events to the stream of the consumer and to
 * REST polls waiting here.  The terminal kinds decode here too (one codec)
 * but belong to the terminal route, which registers on the listener
 * beside this one.
 */
#include "agents.h"
#include "fence.h"
#include "hints.h"
#include "log.h"
#include "metrics.h"
#include "node.h"
#include "rest.h"
#include "clients.h"
#include "runs.h"
#include "signal.h"
#include "stream.h"
#include "typing.h"

static bool
is_gateway_kind(bothy_kind kind)
{
	return kind >= BOTHY_KIND_GATEWAY_TYPING && kind <= BOTHY_KIND_GATEWAY_AGENT_EVENT;
}

static void
deliver(const bothy_signal *sig)
{
	switch (sig->kind)
	{
		case BOTHY_KIND_GATEWAY_TYPING:
			gw_typing_signal(sig);
			break;
		case BOTHY_KIND_GATEWAY_RUN:
			gw_runs_signal(sig);
			break;
		case BOTHY_KIND_GATEWAY_AGENT_PRESENCE:
			gw_agents_signal(sig);
			break;
		case BOTHY_KIND_GATEWAY_DEVICE:
			gw_fence_device(&sig->device, &sig->gateway_session, &sig->bind_id, NULL);
			break;
		case BOTHY_KIND_GATEWAY_CONSUMER:
			gw_fence_consumer(&sig->agent, &sig->gateway_session, NULL);
			break;
		case BOTHY_KIND_GATEWAY_HINT:
			gw_hints_signal(sig);
			break;
		case BOTHY_KIND_GATEWAY_AGENT_EVENT:
			gw_stream_signal(sig);
			gw_rest_agent_event(&sig->agent);
			break;
		default:
			break;
	}
}

static void
on_payload(void *ctx, const char *payload, size_t len)
{
	bothy_signal sig;
	bothy_decode_error err;

	(void) ctx;
	switch (bothy_signal_decode(payload, len, &sig, &err))
	{
		case BOTHY_DECODE_MALFORMED:
			gw_stats.signals_dropped[err.reason]++;
			gw_logf(GW_LOG_WARN, "signal dropped as malformed", "reason=%s",
					bothy_reason_code(err.reason));
			return;
		case BOTHY_DECODE_IGNORED:
			gw_stats.signals_ignored++;
			return;
		case BOTHY_DECODE_OK:
			break;
	}
	if (!is_gateway_kind(sig.kind))
	{
		/* the terminal route's: counted, decoded already, not ours to act on */
		gw_stats.signals_received[sig.kind]++;
		return;
	}
	if (bothy_uuid_compare(&sig.node, &gw.id) == 0)
	{
		/* delivered locally before it was sent (D-M7-17-1) */
		gw_stats.signals_own++;
		return;
	}
	gw_stats.signals_received[sig.kind]++;
	deliver(&sig);
}

/*
 * After a lost listener, what the signals would have told is in the
 * database: the bindings of the devices and the holders of the agents'
 * streams (fence.c asks), and the agent events appended meanwhile (each
 * consumer and each waiting poll reads again).  The ephemeral events stay
 * lost (D-M7-17-5).
 */
static void
reconcile(void *ctx)
{
	(void) ctx;
	gw_log(GW_LOG_INFO, "gateway route reconciling");
	gw_fence_reconcile();
	gw_stream_reconcile();
	gw_rest_reconcile();
}

const gw_route gw_route_gateway = {"gateway", on_payload, reconcile, NULL};
