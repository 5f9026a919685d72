/*
 * conn.c
 *		The gateway protocol's transport: upgrade filter, reassembly of
 *		fragmented messages, the bounded send queue written only in
 *		SERVER_WRITEABLE, and closing with a code.  What a message means
 *		is session.c's; HTTP requests on the same vhost go to http.c.
 *
 * Writes happen only in LWS_CALLBACK_SERVER_WRITEABLE, one message per
 * callback, so libwebsockets never buffers more than one partial message
 * of ours and the queue's bound is the connection's bound.
 */
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "http.h"
#include "log.h"
#include "node.h"
#include "server.h"
#include "session.h"

/* How long a decided close may wait for the client to take the frame. */
#define CLOSE_GRACE_S 2

void
gw_conn_close(gw_conn *c, int code, const char *reason)
{
	if (c->state == GW_CS_CLOSING)
		return;
	c->state = GW_CS_CLOSING;
	c->close_code = (uint16_t) code;
	gw_metrics_close(code);
	/* nothing queued goes out after the decision to close */
	gw_sendq_clear(&c->sendq);
	lws_close_reason(c->wsi, (enum lws_close_status) code,
					 (unsigned char *) reason, strlen(reason));
	lws_set_timeout(c->wsi, PENDING_TIMEOUT_CLOSE_SEND, CLOSE_GRACE_S);
	lws_callback_on_writable(c->wsi);
}

static void
too_slow(gw_conn *c)
{
	gw_stats.send_queue_overflows++;
	gw_log(GW_LOG_WARN, "client closed: send queue full");
	gw_conn_close(c, GW_CLOSE_SLOW, "send queue full");
}

/*
 * A client that stops reading can also stall before its queue fills:
 * while libwebsockets holds the rest of a partly written message it
 * neither calls WRITEABLE nor reads the socket.  So output that waits
 * longer than --send-timeout closes the connection like a full queue
 * (checked by the sweep).  The part libwebsockets holds counts as waiting
 * output: when it is all that is left, our queue is empty, yet the client
 * still does not read and the node no longer reads its heartbeats.
 */
static void
arm_stall(gw_conn *c)
{
	c->stall_until = gw_mono_ms() + gw.opt.send_timeout_ms;
}

int64_t
gw_mono_ms(void)
{
	return (int64_t) (lws_now_usecs() / LWS_US_PER_MS);
}

static bool
output_waits(gw_conn *c)
{
	return gw_sendq_front(&c->sendq) != NULL || lws_partial_buffered(c->wsi);
}

static lws_sorted_usec_list_t sul_sweep;

static void
sweep_conn(gw_conn *c, void *arg)
{
	int64_t		now = *(const int64_t *) arg;

	if (c->state == GW_CS_CLOSING)
		return;
	if (c->stall_until != 0 && now >= c->stall_until && output_waits(c))
	{
		too_slow(c);
		return;
	}
	gw_session_tick(c, now);
}

static void
sweep_cb(lws_sorted_usec_list_t *sul)
{
	int64_t		now = gw_mono_ms();

	gw_hub_each_conn(&gw.hub, sweep_conn, &now);
	lws_sul_schedule(gw.context, 0, sul, sweep_cb, (lws_usec_t) GW_SWEEP_MS * LWS_US_PER_MS);
}

void
gw_conn_sweep_start(void)
{
	lws_sul_schedule(gw.context, 0, &sul_sweep, sweep_cb, (lws_usec_t) GW_SWEEP_MS * LWS_US_PER_MS);
}

void
gw_conn_sweep_stop(void)
{
	lws_sul_cancel(&sul_sweep);
}

void
gw_conn_send(gw_conn *c, const char *msg, size_t len)
{
	bool		was_empty = gw_sendq_front(&c->sendq) == NULL;

	if (c->state == GW_CS_CLOSING)
		return;
	switch (gw_sendq_push(&c->sendq, LWS_PRE, msg, len, (size_t) gw.opt.send_queue))
	{
		case GW_SENDQ_OK:
			if (was_empty)
				arm_stall(c);
			lws_callback_on_writable(c->wsi);
			return;
		case GW_SENDQ_FULL:
			too_slow(c);
			return;
		case GW_SENDQ_NOMEM:
			gw_log(GW_LOG_ERROR, "client closed: out of memory");
			gw_conn_close(c, GW_CLOSE_INTERNAL, "out of memory");
			return;
	}
}

static int
writeable(gw_conn *c)
{
	gw_sendq_msg *m;

	if (c->state == GW_CS_CLOSING)
		return -1;				/* lws sends the close frame set by lws_close_reason */
	m = gw_sendq_front(&c->sendq);
	if (m == NULL)
		return 0;
	if (lws_write(c->wsi, m->data + LWS_PRE, m->len, LWS_WRITE_TEXT) < (int) m->len)
		return -1;
	gw_stats.frames_out++;
	gw_sendq_pop(&c->sendq);
	if (gw_sendq_front(&c->sendq) != NULL)
	{
		arm_stall(c);			/* progress: the client reads */
		lws_callback_on_writable(c->wsi);
	}
	else if (lws_partial_buffered(c->wsi))
		arm_stall(c);			/* the rest of this message still waits */
	else
		c->stall_until = 0;
	return 0;
}

static void
drop_rx(gw_conn *c)
{
	free(c->rx);
	c->rx = NULL;
	c->rx_len = 0;
}

/*
 * One piece of a message.  A message in one piece is parsed in place; a
 * fragmented one is gathered in a buffer allocated for it alone.
 */
static void
receive(gw_conn *c, const char *in, size_t len)
{
	bool		final = lws_is_final_fragment(c->wsi);
	size_t		max = (size_t) gw.opt.max_message;

	if (c->state == GW_CS_CLOSING)
		return;
	if (lws_frame_is_binary(c->wsi))
	{
		drop_rx(c);
		gw_conn_close(c, GW_CLOSE_MALFORMED, "binary frame");
		return;
	}
	if (c->rx == NULL && final)
	{
		if (len > max)
		{
			gw_conn_close(c, GW_CLOSE_TOO_BIG, "message too big");
			return;
		}
		gw_stats.frames_in++;
		gw_session_message(c, in, len);
		return;
	}
	if (c->rx_len + len > max)
	{
		drop_rx(c);
		gw_conn_close(c, GW_CLOSE_TOO_BIG, "message too big");
		return;
	}
	if (c->rx == NULL)
	{
		/* the whole limit at once: one allocation per fragmented message */
		c->rx = malloc(max);
		if (c->rx == NULL)
		{
			gw_conn_close(c, GW_CLOSE_INTERNAL, "out of memory");
			return;
		}
	}
	memcpy(c->rx + c->rx_len, in, len);
	c->rx_len += len;
	if (!final)
		return;
	gw_stats.frames_in++;
	{
		char	   *msg = c->rx;
		size_t		n = c->rx_len;

		c->rx = NULL;
		c->rx_len = 0;
		gw_session_message(c, msg, n);
		free(msg);
	}
}

/* Only /gateway upgrades, only on a started node that is not stopping. */
static int
filter(struct lws *wsi)
{
	char		uri[64];
	int			n = lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI);

	if (n <= 0 || strcmp(uri, "/gateway") != 0)
		return 1;
	if (!gw.started || gw.stopping)
		return 1;
	if (gw.hub.all.count >= (uint32_t) gw.opt.max_connections)
		return 1;
	return 0;
}

int
gw_conn_callback(struct lws *wsi, enum lws_callback_reasons reason,
				 void *user, void *in, size_t len)
{
	gw_conn    *c = user;

	switch (reason)
	{
		case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
			return filter(wsi);
		case LWS_CALLBACK_ESTABLISHED:
			memset(c, 0, sizeof(*c));
			c->wsi = wsi;
			c->kind = c->counted = GW_CONN_UNIDENTIFIED;
			gw_stats.connections[c->counted]++;
			gw_hub_join(&gw.hub, c);
			gw_session_opened(c);
			return 0;
		case LWS_CALLBACK_RECEIVE:
			receive(c, in, len);
			return 0;
		case LWS_CALLBACK_SERVER_WRITEABLE:
			return writeable(c);
		case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
			if (c->state != GW_CS_CLOSING)
			{
				const unsigned char *p = in;

				c->state = GW_CS_CLOSING;
				gw_metrics_close(len >= 2 ? (p[0] << 8 | p[1]) : 1005);
			}
			return 0;
		case LWS_CALLBACK_CLOSED:
			if (c->state != GW_CS_CLOSING)
				gw_metrics_close(1006);
			gw_session_closed(c);
			gw_stats.connections[c->counted]--;
			gw_hub_leave(&gw.hub, c);
			gw_sendq_clear(&c->sendq);
			drop_rx(c);
			c->wsi = NULL;
			return 0;

		case LWS_CALLBACK_HTTP:
			return gw_http_request(wsi, c, in);
		case LWS_CALLBACK_HTTP_WRITEABLE:
			return gw_http_writeable(wsi, c);
		case LWS_CALLBACK_CLOSED_HTTP:
			gw_http_closed(c);
			return 0;

		case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
			gw_server_wakeup();
			return 0;
		default:
			return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}
