/*
 * core/conn.c
 *		The WebSocket transport of every route: the upgrade filter that
 *		picks the route's endpoint by path, reassembly of fragmented
 *		messages, the bounded send queue (text and binary messages), the
 *		sweep of deadlines, pausing a connection's reading while a route
 *		holds back its bytes, and closing with a code.  What a message
 *		means is the route's (its gw_ws_endpoint); HTTP requests on the
 *		same vhost go to http.c.
 *
 * One message at a time goes to libwebsockets, and only when it holds
 * nothing of ours, so it never buffers more than one partial message and
 * the queue's bound is the connection's bound.  A message for a
 * connection with nothing queued and nothing held is written at once;
 * the rest of the queue in LWS_CALLBACK_SERVER_WRITEABLE, one message per
 * callback.  Unlike ttyd, which writes only in WRITEABLE: on an epoll loop
 * each wait for WRITEABLE costs two epoll_ctl (write interest on, then off)
 * and a turn of the loop, per message (a heartbeat_ack, one delivery of a
 * fan-out), and measured a third of a node's CPU per fan-out update
 * (docs/performance.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/conn.h"
#include "core/http.h"
#include "core/metrics.h"
#include "core/node.h"
#include "core/server.h"
#include "logline.h"

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
	gw_conn_wake_at(c, c->stall_until);
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

/*
 * The wheel of wake-ups: slot k holds the connections whose tick is due in
 * [k, k + 1) * GW_SWEEP_MS (modulo WHEEL_SLOTS), so a sweep visits only the
 * connections due, not every connection.  A wish later than the one a
 * connection waits for changes nothing (the earlier tick asks again), so
 * the heartbeats that push a deadline back cost no move in the wheel; one
 * further than a turn of the wheel stays in its slot and is passed over
 * until its turn.
 */
#define WHEEL_SLOTS 1024

static lws_dll2_owner_t wheel[WHEEL_SLOTS];
static int64_t swept;			/* the last slot number swept */
static lws_sorted_usec_list_t sul_sweep;

static int64_t
slot_of(int64_t ms)
{
	return ms / GW_SWEEP_MS;
}

void
gw_conn_wake_at(gw_conn *c, int64_t when)
{
	int64_t		slot = slot_of(when);

	if (c->wake_at != 0 && c->wake_at <= when)
		return;
	lws_dll2_remove(&c->in_wheel);
	/* never into a slot swept already: the next sweep sees it */
	if (slot <= swept)
		slot = swept + 1;
	c->wake_at = when;
	lws_dll2_add_tail(&c->in_wheel, &wheel[slot % WHEEL_SLOTS]);
}

static void
wake(gw_conn *c, int64_t now)
{
	c->wake_at = 0;
	if (c->state == GW_CONN_CLOSING)
		return;
	if (c->stall_until != 0 && output_waits(c))
	{
		if (now >= c->stall_until)
		{
			too_slow(c);
			return;
		}
		gw_conn_wake_at(c, c->stall_until);
	}
	if (endpoint_of(c)->tick != NULL)
		endpoint_of(c)->tick(c, now);
}

static void
sweep_slot(int64_t slot, int64_t now)
{
	lws_dll2_t *d,
			   *next;

	for (d = wheel[slot % WHEEL_SLOTS].head; d != NULL; d = next)
	{
		gw_conn    *c = lws_container_of(d, gw_conn, in_wheel);

		next = d->next;
		if (slot_of(c->wake_at) > slot)
			continue;			/* a later turn of the wheel */
		lws_dll2_remove(d);
		if (c->wake_at > now)
		{
			/* later in the slot still running: the next sweep, never early */
			lws_dll2_add_tail(d, &wheel[(slot + 1) % WHEEL_SLOTS]);
			continue;
		}
		wake(c, now);
	}
}

static void
sweep_cb(lws_sorted_usec_list_t *sul)
{
	int64_t		now = gw_mono_ms();
	int64_t		last = slot_of(now);

	/* a late sweep catches up, at most one turn of the wheel */
	if (last - swept > WHEEL_SLOTS)
		swept = last - WHEEL_SLOTS;
	while (swept < last)
		sweep_slot(++swept, now);
	lws_sul_schedule(gw.context, 0, sul, sweep_cb, (lws_usec_t) GW_SWEEP_MS * LWS_US_PER_MS);
}

void
gw_conn_sweep_start(void)
{
	swept = slot_of(gw_mono_ms());
	lws_sul_schedule(gw.context, 0, &sul_sweep, sweep_cb, (lws_usec_t) GW_SWEEP_MS * LWS_US_PER_MS);
}

void
gw_conn_sweep_stop(void)
{
	lws_sul_cancel(&sul_sweep);
}

/*
 * The front message waits for the client's acknowledgement (the route's
 * held, e.g. the terminal's window of output a device has not
 * acknowledged): nothing is written until gw_conn_progress.  A ping is
 * never held, so the ping the acknowledgement answers always goes.
 */
static bool
held(gw_conn *c)
{
	gw_sendq_msg *m = gw_sendq_front(&c->sendq);

	return m != NULL && !m->ping && endpoint_of(c)->held != NULL && endpoint_of(c)->held(c);
}

/*
 * Writes the front of the queue; false when the socket failed.  What the
 * socket did not take, lws keeps and sends before anything else; the rest
 * of the queue waits for WRITEABLE.  A held front waits with the stall
 * timer running from the last progress.
 */
static bool
write_front(gw_conn *c)
{
	gw_sendq_msg *m = gw_sendq_front(&c->sendq);
	size_t		len;
	bool		ping;
	bool		binary;

	if (m == NULL || held(c))
		return true;
	if (lws_write(c->wsi, m->data + LWS_PRE, m->len,
				  m->ping ? LWS_WRITE_PING : m->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT) < (int) m->len)
		return false;
	gw_stats.frames_out++;
	len = m->len;
	ping = m->ping;
	binary = m->binary && !ping;
	gw_sendq_pop(&c->sendq);
	c->writing = true;			/* a ping the hook queues waits for WRITEABLE */
	if (endpoint_of(c)->sent != NULL)
		endpoint_of(c)->sent(c, len, binary);
	c->writing = false;
	if (gw_sendq_front(&c->sendq) != NULL)
	{
		/*
		 * progress: the client reads; a ping written is only a mark, so it
		 * starts no new period when one runs (terminal/relay/ack.c)
		 */
		if (!ping || c->stall_until == 0)
			arm_stall(c);
		lws_callback_on_writable(c->wsi);
	}
	else if (lws_partial_buffered(c->wsi))
		arm_stall(c);			/* the rest of this message still waits */
	else
		c->stall_until = 0;
	return true;
}

/* Writes the front outside WRITEABLE (nothing waited before it). */
static void
write_now(gw_conn *c)
{
	if (write_front(c))
		return;
	/*
	 * The socket failed: no close frame can go either, as when a write in
	 * WRITEABLE fails and lws closes it
	 */
	c->state = GW_CONN_CLOSING;
	gw_metrics_close(1006);
	gw_sendq_clear(&c->sendq);
	lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

typedef enum gw_conn_kind
{
	GW_CONN_TEXT,
	GW_CONN_TEXT_ASIDE,
	GW_CONN_BINARY,
	GW_CONN_PING
} gw_conn_kind;

static void
queue(gw_conn *c, const void *msg, size_t len, gw_conn_kind kind)
{
	bool		was_empty = gw_sendq_front(&c->sendq) == NULL;
	gw_sendq_status st;

	if (c->state == GW_CONN_CLOSING)
		return;
	switch (kind)
	{
		case GW_CONN_TEXT:
			st = gw_sendq_push(&c->sendq, LWS_PRE, msg, len, (size_t) gw.opt.send_queue);
			break;
		case GW_CONN_TEXT_ASIDE:
			st = gw_sendq_push_aside(&c->sendq, LWS_PRE, msg, len);
			break;
		case GW_CONN_BINARY:
			st = gw_sendq_push_binary(&c->sendq, LWS_PRE, msg, len, (size_t) gw.opt.send_queue);
			break;
		case GW_CONN_PING:
		default:
			st = gw_sendq_push_ping(&c->sendq, LWS_PRE, msg, len);
			break;
	}
	switch (st)
	{
		case GW_SENDQ_OK:
			if (was_empty && !lws_partial_buffered(c->wsi) && !held(c))
			{
				write_now(c);
				return;
			}
			if (was_empty)
				arm_stall(c);	/* output begins to wait (held: for the acknowledgement) */
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

void
gw_conn_send(gw_conn *c, const char *msg, size_t len)
{
	queue(c, msg, len, GW_CONN_TEXT);
}

void
gw_conn_send_aside(gw_conn *c, const char *msg, size_t len)
{
	queue(c, msg, len, GW_CONN_TEXT_ASIDE);
}

void
gw_conn_send_binary(gw_conn *c, const void *data, size_t len)
{
	queue(c, data, len, GW_CONN_BINARY);
}

/*
 * Only on a connection with no output waiting: output that waits is
 * traffic the edge sees while the client reads, and a client that does not
 * read it is closed after --send-timeout.  A ping queued behind a message
 * lws holds in part would arm that timer again (queue) and keep a client
 * that reads nothing open longer than --send-timeout.
 */
void
gw_conn_ping(gw_conn *c)
{
	if (output_waits(c))
		return;
	queue(c, "", 0, GW_CONN_PING);
}

/*
 * Goes next, whatever waits (after the part of a message lws holds), and
 * arms no timer: the ping is only a mark in the output's order, and a
 * client that reads nothing is closed --send-timeout after its output
 * began to wait all the same.
 */
void
gw_conn_ping_first(gw_conn *c, const char *payload, size_t len)
{
	bool		nothing_waits = !output_waits(c);

	if (c->state == GW_CONN_CLOSING)
		return;
	switch (gw_sendq_push_ping_first(&c->sendq, LWS_PRE, payload, len))
	{
		case GW_SENDQ_OK:
			/* inside write_front: one lws_write per WRITEABLE (lws's rule) */
			if (!nothing_waits || c->writing)
				lws_callback_on_writable(c->wsi);
			else
				write_now(c);
			return;
		case GW_SENDQ_FULL:
			/* cannot happen: a ping is over no limit (sendq.h); NOMEM's answer */
		case GW_SENDQ_NOMEM:
			gw_log(GW_LOG_ERROR, "client closed: out of memory");
			gw_conn_close(c, GW_CLOSE_INTERNAL, "out of memory");
			return;
	}
}

void
gw_conn_progress(gw_conn *c)
{
	if (c->state == GW_CONN_CLOSING || !output_waits(c))
		return;
	arm_stall(c);
	lws_callback_on_writable(c->wsi);
}

size_t
gw_conn_queued(const gw_conn *c)
{
	return c->sendq.bytes;
}

/*
 * lws reads a paused connection no more: what it had read already waits
 * in its own buffer (at most one read), and the client's further bytes
 * wait in the socket, then in the client's TCP window, so a fast sender
 * is held back end to end without any buffer of ours growing.
 */
void
gw_conn_rx_pause(gw_conn *c, bool pause)
{
	if (c->rx_paused == pause || c->wsi == NULL)
		return;
	c->rx_paused = pause;
	lws_rx_flow_control(c->wsi, pause ? 0 : 1);
	/*
	 * whether a route holds output may follow its reading of the client
	 * (the terminal's window, terminal/relay/ack.c): ask again.  No timer
	 * is armed: being read or not is not the client's progress.
	 */
	if (c->state != GW_CONN_CLOSING && output_waits(c))
		lws_callback_on_writable(c->wsi);
}

static int
writeable(gw_conn *c)
{
	if (c->state == GW_CONN_CLOSING)
		return -1;				/* lws sends the close frame set by lws_close_reason */
	return write_front(c) ? 0 : -1;
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
 * The endpoint of the upgrade request's path, or NULL: a registered path,
 * for a prefix endpoint a rest that its accepts check takes, and no query
 * string where the endpoint takes none.
 */
static const gw_ws_endpoint *
upgrade_endpoint(struct lws *wsi, int *index)
{
	char		uri[128];
	int			n = lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI);
	const gw_ws_endpoint *ep;

	if (n <= 0 || (ep = gw_route_ws_find(uri, index)) == NULL)
		return NULL;
	if (ep->prefix && ep->accepts != NULL && !ep->accepts(uri + strlen(ep->path)))
		return NULL;
	/* lws keeps the query apart from the path */
	if (ep->no_query && lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS) > 0)
		return NULL;
	return ep;
}

/*
 * The protocol lws 4.1 binds the upgrade to: the first name of
 * Sec-WebSocket-Protocol that the vhost knows, or the first protocol
 * ("bothy-gateway") when the header is absent.  A path with its
 * own subprotocol takes that name or none, a path without one the name
 * bothy-gateway or none (protocol.md, "Connecting" and "Terminal
 * streams"); anything else (an unknown name only, the database's
 * protocol, another path's subprotocol, a list longer than any the node
 * takes) is refused.
 */
static bool
subprotocol_taken(struct lws *wsi, const gw_ws_endpoint *ep)
{
	char		list[256];
	int			n = lws_hdr_total_length(wsi, WSI_TOKEN_PROTOCOL);
	char	   *name,
			   *save = NULL;

	if (n == 0)
		return true;
	if (n >= (int) sizeof(list) || lws_hdr_copy(wsi, list, sizeof(list), WSI_TOKEN_PROTOCOL) != n)
		return false;
	for (name = strtok_r(list, ", \t", &save); name != NULL; name = strtok_r(NULL, ", \t", &save))
	{
		if (lws_vhost_name_to_protocol(lws_get_vhost(wsi), name) == NULL)
			continue;
		return strcmp(name, ep->subprotocol != NULL ? ep->subprotocol : "bothy-gateway") == 0;
	}
	return false;
}

/*
 * The refusal of an upgrade: 404 with the body of every other 404 of the
 * node (protocol.md), in HTTP/1.1.  lws_return_http_status would answer
 * HTTP/1.0 here: lws reads the request's version only for a request it
 * does not upgrade (lws_http_action), and strict WebSocket clients refuse
 * a 1.0 status line.  The connection closes after it.
 */
static int
refuse_upgrade(struct lws *wsi)
{
	static const char status[] = "HTTP/1.1 404 Not Found";
	static const char body[] = "not found\n";
	char		length[16];
	unsigned char buf[LWS_PRE + 512];
	unsigned char *start = buf + LWS_PRE,
			   *p = start,
			   *end = buf + sizeof(buf) - sizeof(body);
	int			n = snprintf(length, sizeof(length), "%zu", sizeof(body) - 1);

	if (lws_add_http_header_by_name(wsi, NULL, (const unsigned char *) status,
									(int) sizeof(status) - 1, &p, end) ||
		lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE,
									 (const unsigned char *) "text/plain", 10, &p, end) ||
		lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH,
									 (const unsigned char *) length, n, &p, end) ||
		lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
									 (const unsigned char *) "no-store", 8, &p, end) ||
		lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION,
									 (const unsigned char *) "close", 5, &p, end) ||
		lws_finalize_http_header(wsi, &p, end))
		return -1;
	memcpy(p, body, sizeof(body) - 1);
	p += sizeof(body) - 1;
	if (lws_write(wsi, start, (size_t) (p - start), LWS_WRITE_HTTP_HEADERS) != (int) (p - start))
		return -1;
	return 1;					/* answered: lws ends the HTTP/1.0 transaction, closing */
}

/*
 * An upgrade of a path no endpoint takes, or naming a subprotocol its
 * endpoint does not take, is answered 404 while it is still HTTP, so that
 * a client (or an edge in front) sees a plain answer instead of a
 * connection that just ends (an edge turns that into 502).
 */
static int
confirm_upgrade(struct lws *wsi)
{
	int			index;
	const gw_ws_endpoint *ep = upgrade_endpoint(wsi, &index);

	if (ep != NULL && subprotocol_taken(wsi, ep))
		return 0;
	return refuse_upgrade(wsi);
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
	int			index;
	const gw_ws_endpoint *ep = upgrade_endpoint(wsi, &index);

	/* what confirm_upgrade answered 404: the same rule, in one place */
	if (ep == NULL || !subprotocol_taken(wsi, ep))
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
		case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
			return confirm_upgrade(wsi);
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
		case LWS_CALLBACK_RECEIVE_PONG:
			if (c->state != GW_CONN_CLOSING && endpoint_of(c)->pong != NULL)
				endpoint_of(c)->pong(c, in, len);
			return 0;
		case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
			if (c->state != GW_CONN_CLOSING)
			{
				const unsigned char *p = in;

				c->state = GW_CONN_CLOSING;
				c->close_code = (uint16_t) (len >= 2 ? (p[0] << 8 | p[1]) : 1005);
				gw_metrics_close(c->close_code);
			}
			return 0;
		case LWS_CALLBACK_CLOSED:
			if (c->state != GW_CONN_CLOSING)
				gw_metrics_close(1006);
			if (endpoint_of(c)->closed != NULL)
				endpoint_of(c)->closed(c);
			lws_dll2_remove(&c->in_endpoint);
			lws_dll2_remove(&c->in_wheel);
			gw_sendq_clear(&c->sendq);
			drop_rx(c);
			c->wsi = NULL;
			return 0;

		case LWS_CALLBACK_HTTP:
			return gw_http_request(wsi, c, in);
		case LWS_CALLBACK_HTTP_BODY:
			return gw_http_body_in(c, in, len);
		case LWS_CALLBACK_HTTP_BODY_COMPLETION:
			return gw_http_body_done(wsi, c);
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
