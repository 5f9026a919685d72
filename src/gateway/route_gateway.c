/*
 * route_gateway.c
 *		The gateway route (see route_gateway.h).
 *
 * Device replacement and consumer fencing go to fence.c; delivery of the
 * ephemeral events (typing, run updates, agent presence, hints) to local
 * connections is the next part of issue 5 and goes in deliver() too.
 * The terminal kinds decode here too (one codec) but belong to the
 * terminal route, which registers on the listener beside this one.
 */
#include "fence.h"
#include "log.h"
#include "metrics.h"
#include "node.h"
#include "route_gateway.h"
#include "signal.h"

static bool
is_gateway_kind(bothy_kind kind)
{
	return kind >= BOTHY_KIND_GATEWAY_TYPING && kind <= BOTHY_KIND_GATEWAY_HINT;
}

static void
deliver(const bothy_signal *sig)
{
	switch (sig->kind)
	{
		case BOTHY_KIND_GATEWAY_DEVICE:
			gw_fence_device(&sig->device, &sig->gateway_session, &sig->bind_id, NULL);
			break;
		case BOTHY_KIND_GATEWAY_CONSUMER:
			gw_fence_consumer(&sig->agent, &sig->gateway_session, NULL);
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
		return;
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
 * streams (fence.c asks).  The ephemeral events stay lost (D-M7-17-5).
 */
static void
reconcile(void *ctx)
{
	(void) ctx;
	gw_log(GW_LOG_INFO, "gateway route reconciling");
	gw_fence_reconcile();
}

const gw_route gw_route_gateway = {"gateway", on_payload, reconcile, NULL};
