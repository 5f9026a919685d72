/*
 * terminal/relay.c
 *		The relay (see relay.h).  A placeholder while the relay is built
 *		(issue 15): a stream connection is closed at once with 1011, and
 *		every signal, log row and hook is a no-op.
 */
#include "core/conn.h"
#include "terminal/relay.h"

static void
established(gw_conn *c)
{
	gw_conn_close(c, 1011, "relay not built");
}

static void
message(gw_conn *c, const char *msg, size_t len, bool binary)
{
	(void) c;
	(void) msg;
	(void) len;
	(void) binary;
}

const gw_ws_endpoint gw_relay_stream = {
	.path = "/terminal/stream/",
	.prefix = true,
	.binary = true,
	.conn_size = sizeof(gw_conn),
	.established = established,
	.message = message,
};

void
gw_relay_signal(const bothy_signal *sig)
{
	(void) sig;
}

void
gw_relay_observe(const gw_tlog_row *row)
{
	(void) row;
}

void
gw_relay_started(const bothy_uuid *session, const bothy_uuid *grant)
{
	(void) session;
	(void) grant;
}

void
gw_relay_reconcile(void)
{
}

bool
gw_relay_init(void)
{
	return true;
}

void
gw_relay_stopping(void)
{
}

bool
gw_relay_drained(void)
{
	return true;
}

void
gw_relay_forget(void)
{
}

void
gw_relay_metrics(struct gw_metrics_out *out)
{
	(void) out;
}

bool
gw_relay_status(json_t *status)
{
	(void) status;
	return true;
}
