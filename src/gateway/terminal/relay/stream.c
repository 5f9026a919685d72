/*
 * terminal/relay/stream.c
 *		The stream endpoint /terminal/stream/<session>: both sides of every
 *		session (docs/protocol.md, "Terminal streams", "The path").  A path
 *		whose rest is not exactly a session ID is answered 404 before the
 *		upgrade; then identify within --identify-timeout, and once the side
 *		joined its slot only binary messages, which go to its counterpart
 *		(flow.c).  A side that names the subprotocol
 *		bothy-terminal-stream is read 4 KiB at a time instead of 512 bytes
 *		(core/server.c): the same stream, faster.
 */
#include "core/node.h"
#include "terminal/relay/relay.h"
#include "terminal/relay/conn.h"
#include "terminal/relay/wire.h"
#include "terminal/settings.h"

static bool
accepts(const char *rest)
{
	bothy_uuid	session;

	return gw_rwire_session_path(rest, &session);
}

static void
established(gw_conn *conn)
{
	gw_rconn   *c = gw_rconn_of(conn);
	char		uri[128];
	int			n = lws_hdr_copy(conn->wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI);

	/* the core took the path through accepts: it is the prefix and a session */
	if (n <= 0 || !gw_rwire_session_path(uri + sizeof("/terminal/stream/") - 1, &c->session))
	{
		gw_conn_close(conn, GW_CLOSE_INTERNAL, "internal error");
		return;
	}
	c->quiet_until = gw_mono_ms() + gw.opt.identify_timeout_ms;
	c->ping_at = gw_mono_ms() + gw_topt.stream_ping_ms;
	gw_conn_wake_at(conn, c->quiet_until);
	gw_conn_wake_at(conn, c->ping_at);
	gw_relay_wake();
}

static void
message(gw_conn *conn, const char *msg, size_t len, bool binary)
{
	gw_rconn   *c = gw_rconn_of(conn);

	switch ((gw_rconn_state) conn->state)
	{
		case GW_RCONN_NEW:
			if (binary)
				gw_conn_close(conn, GW_CLOSE_MALFORMED, "malformed identify");
			else
				gw_ridentify_message(c, msg, len);
			return;
		case GW_RCONN_IDENTIFYING:
		case GW_RCONN_JOINED:
			/* bytes before the counterpart came never leave the node */
			if (binary)
				gw_rflow_pass(c, msg, len);
			else
				gw_conn_close(conn, GW_CLOSE_MALFORMED, "text after identify");
			return;
	}
}

/*
 * The identify's deadline, and a ping every --stream-ping-interval on
 * every side: nginx cuts an upgraded connection once neither of its two
 * connections had an event for proxy_read_timeout (docs/operations.md,
 * "The edge for terminals"), so a side that waits (a host's data
 * connection of a detached session) or a pairing with nothing to say
 * is never silent at the edge, and only the node's own rules end a
 * stream.
 */
static void
tick(gw_conn *conn, int64_t now)
{
	gw_rconn   *c = gw_rconn_of(conn);

	if (c->quiet_until != 0 && now >= c->quiet_until)
	{
		c->quiet_until = 0;
		gw_conn_close(conn, GW_CLOSE_MALFORMED, "no identify in time");
		return;
	}
	if (now >= c->ping_at)
	{
		gw_conn_ping(conn);
		c->ping_at = now + gw_topt.stream_ping_ms;
	}
	gw_rack_tick(c, now);
	/* woken early, or the next of either */
	gw_conn_wake_at(conn, c->ping_at);
	if (c->quiet_until != 0)
		gw_conn_wake_at(conn, c->quiet_until);
}

static void
sent(gw_conn *conn, size_t len, bool binary)
{
	/* the marks count the stream's bytes only (docs/protocol.md, "Pings") */
	if (binary)
		gw_rack_sent(gw_rconn_of(conn), len);
	gw_rflow_sent(gw_rconn_of(conn));
}

static bool
held(gw_conn *conn)
{
	return gw_rack_held(gw_rconn_of(conn));
}

static void
pong(gw_conn *conn, const char *payload, size_t len)
{
	gw_rack_pong(gw_rconn_of(conn), payload, len);
}

static void
closed(gw_conn *conn)
{
	gw_rconn   *c = gw_rconn_of(conn);

	gw_ridentify_cancel(c);
	/* a host that closes its paired data connection with 1000: the shell ended */
	gw_rslots_leave(&c->side, c->side.kind == GW_RSIDE_HOST && conn->close_code == 1000,
					gw_mono_ms());
}

const gw_ws_endpoint gw_relay_stream = {
	.path = "/terminal/stream/",
	.prefix = true,
	.binary = true,
	.conn_size = sizeof(gw_rconn),
	.accepts = accepts,
	/* the edge hashes the raw path: a query would route the sides apart */
	.no_query = true,
	.subprotocol = GW_RELAY_SUBPROTOCOL,
	.established = established,
	.message = message,
	.tick = tick,
	.sent = sent,
	.held = held,
	.pong = pong,
	.closed = closed,
};
