/*
 * core/conn.c
 *		The WebSocket transport of every route: the upgrade filter that
 *		picks the route's endpoint by path, reassembly of fragmented
 *		messages, the bounded send queue written only in SERVER_WRITEABLE,
 *		and closing with a code.  What a message means is the route's
 *		(its gw_ws_endpoint); HTTP requests on the same vhost go to http.c.
 *
 * Writes happen only in LWS_CALLBACK_SERVER_WRITEABLE, one message per
 * callback, so libwebsockets never buffers more than one partial message
 * of ours and the queue's bound is the connection's bound.
 */
#include <stdlib.h>
#include <string.h>

#include "core/conn.h"
#include "core/http.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/node.h"
#include "core/server.h"

/* How long a decided close may wait for the client to take the frame. */
#define CLOSE_GRACE_S 2

void
gw_conn_close(gw_conn *c, int code, const char *reason)
{
	if (c->state == GW_CONN_CLOSING)
		return;
	c->state = GW_CONN_CLOSING;
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

/* The open connections of each endpoint, by the endpoint's index. */
static lws_dll2_owner_t conns[GW_MAX_WS_ENDPOINTS];

static const gw_ws_endpoint *
endpoint_of(const gw_conn *c)
{
	return gw_route_ws_at(c->endpoint);
}

static void
each_of(int index, gw_conn_visit visit, void *arg)
{
	lws_dll2_t *d,
			   *next;

	for (d = conns[index].head; d != NULL; d = next)
	{
		next = d->next;
		visit(lws_container_of(d, gw_conn, in_endpoint), arg);
	}
}

void
gw_conn_each(const gw_ws_endpoint *ep, gw_conn_visit visit, void *arg)
{
	int			i;

	for (i = 0; i < gw_route_ws_count(); i++)
		if (ep == NULL || gw_route_ws_at(i) == ep)
			each_of(i, visit, arg);
}

uint32_t
gw_conn_count(const gw_ws_endpoint *ep)
{
	uint32_t	n = 0;
	int			i;

	for (i = 0; i < gw_route_ws_count(); i++)
		if (ep == NULL || gw_route_ws_at(i) == ep)
			n += conns[i].count;
	return n;
}

uint32_t
gw_conn_total(void)
{
	return gw_conn_count(NULL);
}

static lws_sorted_usec_list_t sul_sweep;

static void
sweep_conn(gw_conn *c, void *arg)
{
	int64_t		now = *(const int64_t *) arg;

	if (c->state == GW_CONN_CLOSING)
		return;
	if (c->stall_until != 0 && now >= c->stall_until && output_waits(c))
	{
		too_slow(c);
		return;
	}
	if (endpoint_of(c)->tick != NULL)
		endpoint_of(c)->tick(c, now);
}

static void
sweep_cb(lws_sorted_usec_list_t *sul)
{
	int64_t		now = gw_mono_ms();

	gw_conn_each(NULL, sweep_conn, &now);
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

	if (c->state == GW_CONN_CLOSING)
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

	if (c->state == GW_CONN_CLOSING)
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
	const gw_ws_endpoint *ep = endpoint_of(c);
	bool		final = lws_is_final_fragment(c->wsi);
	bool		binary = lws_frame_is_binary(c->wsi);
	size_t		max = (size_t) gw.opt.max_message;

	if (c->state == GW_CONN_CLOSING)
		return;
	if (binary && !ep->binary)
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
		ep->message(c, in, len, binary);
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
		ep->message(c, msg, n, binary);
		free(msg);
	}
}

/*
 * Only a registered route's path upgrades, only on a started node that is
 * not stopping.  The per-session data is fresh here (lws zeroes it, but a
 * keep-alive connection brings its HTTP state): zeroed again, it keeps
 * only the endpoint's index until ESTABLISHED.
 */
static int
filter(struct lws *wsi, gw_conn *c)
{
	char		uri[128];
	int			n = lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI);
	int			index;

	if (n <= 0 || gw_route_ws_find(uri, &index) == NULL)
		return 1;
	if (!gw.started || gw.stopping)
		return 1;
	if (gw_conn_total() >= (uint32_t) gw.opt.max_connections)
		return 1;
	memset(c, 0, gw_route_conn_size());
	c->endpoint = (uint8_t) index;
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
			return filter(wsi, c);
		case LWS_CALLBACK_ESTABLISHED:
			c->wsi = wsi;
			lws_dll2_add_tail(&c->in_endpoint, &conns[c->endpoint]);
			if (endpoint_of(c)->established != NULL)
				endpoint_of(c)->established(c);
			return 0;
		case LWS_CALLBACK_RECEIVE:
			receive(c, in, len);
			return 0;
		case LWS_CALLBACK_SERVER_WRITEABLE:
			return writeable(c);
		case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
			if (c->state != GW_CONN_CLOSING)
			{
				const unsigned char *p = in;

				c->state = GW_CONN_CLOSING;
				gw_metrics_close(len >= 2 ? (p[0] << 8 | p[1]) : 1005);
			}
			return 0;
		case LWS_CALLBACK_CLOSED:
			if (c->state != GW_CONN_CLOSING)
				gw_metrics_close(1006);
			if (endpoint_of(c)->closed != NULL)
				endpoint_of(c)->closed(c);
			lws_dll2_remove(&c->in_endpoint);
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
