/*
 * terminal/route.c
 *		The terminal route's registration (see route.h): what the core calls
 *		at each step, handed to the control plane and to the relay
 *		(relay.h).
 *
 * The route acts only on the kinds of terminal.; the gateway route
 * ignores them, as this one ignores the gateway's (D-M7-17-2).  Terminal
 * signals carry no node: a control connection's own announcements are
 * recognised by their conn_id, not here.
 */
#include "terminal/relay.h"
#include "terminal/route.h"

static const gw_ws_endpoint *const endpoints[] = {&gw_relay_stream, NULL};

void
gw_terminal_dispatch(const bothy_signal *sig)
{
	switch (sig->kind)
	{
		case BOTHY_KIND_TERMINAL_SESSION_OPEN:
		case BOTHY_KIND_TERMINAL_SESSION_PAIRED:
			gw_relay_signal(sig);
			break;
		default:
			break;
	}
}

static bool
on_signal(const bothy_signal *sig)
{
	gw_terminal_dispatch(sig);
	return false;
}

/*
 * The terminal's close codes counted by name (TERMINAL.md): refused,
 * malformed, no answer in time, a lone side, the host's state, the
 * duplicate verdict.
 */
static const int close_codes[] = {4001, 4002, 4009, 4102, 4110, 4111, 4112};

static bool
init(void)
{
	return gw_relay_init();
}

static bool
drained(void)
{
	return gw_relay_drained();
}

const gw_route gw_terminal_route = {
	.name = "terminal",
	.ws = endpoints,
	.signal = on_signal,
	.reconcile = gw_relay_reconcile,
	.close_codes = close_codes,
	.nclose_codes = sizeof(close_codes) / sizeof(close_codes[0]),
	.metrics = gw_relay_metrics,
	.status = gw_relay_status,
	.init = init,
	.stopping = gw_relay_stopping,
	.drained = drained,
	.forget = gw_relay_forget,
};
