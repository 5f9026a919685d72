/*
 * core/http.c
 *		The operations endpoints (docs/gateway.md):
 *		  /healthz  200 while the process serves
 *		  /readyz   200 when started, not stopping and a query connection is
 *		            open; the listener is a soft dependency (the rulings):
 *		            reported in the body, never a reason for 503
 *		  /metrics  Prometheus text format
 *		  the page's files and /status.json (web.c)
 *		  and every other path to the route that registered the longest
 *		  prefix of it (route.h: the gateway route's REST calls under /v1/)
 *
 * The body is built whole when the request arrives (into the connection's
 * rx buffer, with LWS_PRE headroom) and written in HTTP_WRITEABLE.
 *
 * A POST to a route that reads bodies (route.h, body_max) is answered
 * only once its body is in: rx gathers it first, bounded by body_max,
 * then the route's request runs with it (gw_http_body).  Only a body of
 * a declared length is read: without Content-Length lws would read up to
 * 100 MiB, and a chunked body would reach the route with its framing.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/http.h"
#include "core/metrics.h"
#include "core/node.h"
#include "core/route.h"
#include "core/web.h"
#include "intparse.h"

bool
gw_http_keep_body(gw_conn *c, const char *body, size_t len)
{
	c->rx = malloc(LWS_PRE + len);
	if (c->rx == NULL)
		return false;
	memcpy(c->rx + LWS_PRE, body, len);
	c->rx_len = len;
	return true;
}

int
gw_http_respond(struct lws *wsi, gw_conn *c, unsigned status, const char *type,
				const char *body, size_t len)
{
	unsigned char hdr[LWS_PRE + 512];
	unsigned char *start = hdr + LWS_PRE,
			   *p = start,
			   *end = hdr + sizeof(hdr) - 1;

	if (!gw_http_keep_body(c, body, len))
		return 1;
	if (lws_add_http_common_headers(wsi, status, type, (lws_filepos_t) len, &p, end) ||
		lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
									 (const unsigned char *) "no-store", 8, &p, end) ||
		lws_finalize_write_http_header(wsi, start, &p, end))
		return 1;
	gw_http_owe_body(wsi, c);
	return 0;
}

static int	bodies_owed;

void
gw_http_owe_body(struct lws *wsi, gw_conn *c)
{
	c->body_owed = true;
	bodies_owed++;
	lws_callback_on_writable(wsi);
}

int
gw_http_bodies_owed(void)
{
	return bodies_owed;
}

/* The body is sent, or its connection is gone. */
static void
body_settled(gw_conn *c)
{
	if (c->body_owed)
	{
		c->body_owed = false;
		bodies_owed--;
	}
	free(c->rx);
	c->rx = NULL;
	c->rx_len = 0;
	c->body_done = 0;
	c->body_last = false;
	c->body_in = false;
}

/* The body of the POST whose route's request runs now (gw_http_body). */
static const char *request_body;
static size_t request_body_len;

const char *
gw_http_body(size_t *len)
{
	*len = request_body_len;
	return request_body;
}

/*
 * A body the core will not read: {"error":code} with status, and the
 * connection closes after it, since the unread body would otherwise be
 * read as the next request.
 */
static int
refuse_body(struct lws *wsi, gw_conn *c, unsigned status, const char *code)
{
	char		body[64];
	int			n = snprintf(body, sizeof(body), "{\"error\":\"%s\"}", code);

	c->close_after = true;
	return gw_http_respond(wsi, c, status, "application/json", body, (size_t) n);
}

/* A POST to a route that reads bodies: its declared length, then gather. */
static int
body_begin(struct lws *wsi, gw_conn *c)
{
	char		text[24];
	long		len;

	if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0 ||
		lws_hdr_copy(wsi, text, sizeof(text), WSI_TOKEN_HTTP_CONTENT_LENGTH) <= 0 ||
		!bothy_parse_int(text, 0, LONG_MAX, &len))
		return refuse_body(wsi, c, 411, "length_required");
	if ((unsigned long) len > c->http->body_max)
		return refuse_body(wsi, c, 413, "too_large");
	c->rx = malloc(c->http->body_max);
	if (c->rx == NULL)
		return 1;
	c->rx_len = 0;
	c->body_in = true;
	/* lws calls BODY and BODY_COMPLETION next, at once for a length of 0 */
	return 0;
}

int
gw_http_body_in(gw_conn *c, const void *in, size_t len)
{
	if (!c->body_in || len == 0)
		return 0;
	/* lws hands no more than Content-Length, which is at most body_max */
	if (len > c->http->body_max - c->rx_len)
		return -1;
	memcpy(c->rx + c->rx_len, in, len);
	c->rx_len += len;
	return 0;
}

int
gw_http_body_done(struct lws *wsi, gw_conn *c)
{
	char	   *body = c->rx;
	char		uri[1024];
	int			r;

	if (!c->body_in)
		return 0;
	/* the route's prefix matched this path already; a longer one is not ours */
	if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_POST_URI) <= 0)
		return -1;
	/* rx is the answer's from here: the body is the route's for this call */
	c->body_in = false;
	request_body = body;
	request_body_len = c->rx_len;
	c->rx = NULL;
	c->rx_len = 0;
	r = c->http->request(wsi, c, uri);
	request_body = NULL;
	request_body_len = 0;
	free(body);
	return r;
}

int
gw_http_request(struct lws *wsi, gw_conn *c, const char *uri)
{
	char		body[256];
	int			n;

	memset(c, 0, sizeof(*c));
	if (gw_web_claims(uri))
		return gw_web_request(wsi, c, uri);
	if (strcmp(uri, "/healthz") == 0)
		return gw_http_respond(wsi, c, HTTP_STATUS_OK, "text/plain", "ok\n", 3);
	if (strcmp(uri, "/readyz") == 0)
	{
		bool		ready = gw_ready();

		n = snprintf(body, sizeof(body), "%s\nstarted: %s\nstopping: %s\ndatabase: %s\nlistener: %s\n",
					 ready ? "ready" : "not ready", gw.started ? "yes" : "no",
					 gw.stopping ? "yes" : "no",
					 gw.db != NULL && gw_db_up(gw.db) ? "up" : "down",
					 gw.listener != NULL && gw_listener_up(gw.listener) ? "up" : "down");
		return gw_http_respond(wsi, c, ready ? HTTP_STATUS_OK : HTTP_STATUS_SERVICE_UNAVAILABLE,
					   "text/plain", body, (size_t) n);
	}
	if (strcmp(uri, "/metrics") == 0)
	{
		char	   *text;
		size_t		len;
		int			r;

		if (!gw_metrics_render(gw.db != NULL && gw_db_up(gw.db), gw_ready(), &text, &len))
			return 1;
		r = gw_http_respond(wsi, c, HTTP_STATUS_OK, "text/plain; version=0.0.4", text, len);
		free(text);
		return r;
	}
	c->http = gw_route_http_find(uri);
	if (c->http != NULL && c->http->body_max > 0 &&
		lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0)
		return body_begin(wsi, c);
	if (c->http != NULL)
		return c->http->request(wsi, c, uri);
	return gw_http_respond(wsi, c, HTTP_STATUS_NOT_FOUND, "text/plain", "not found\n", 10);
}

/*
 * The body goes in pieces of GW_HTTP_PIECE, one per writeable: lws calls
 * here again only once it has sent all it kept of the last piece (what the
 * socket did not take at once).  So the body stays owed until it is all in
 * the socket, and a stop waits for it; and each piece renews the client's
 * --send-timeout, as WebSocket output does: a client that reads slowly
 * takes its answer, one that stops reading loses its connection.
 */
int
gw_http_writeable(struct lws *wsi, gw_conn *c)
{
	if (c->http_call != NULL)
		return c->http->writeable(wsi, c);
	if (!c->body_owed)
		return -1;
	if (!c->body_last)
	{
		size_t		left = c->rx_len - c->body_done;
		size_t		n = left < GW_HTTP_PIECE ? left : GW_HTTP_PIECE;

		/* the LWS_PRE bytes before a later piece were sent: lws may use them */
		c->body_last = n == left;
		if (lws_write(wsi, (unsigned char *) c->rx + LWS_PRE + c->body_done, n,
					  c->body_last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) < 0)
		{
			body_settled(c);
			return -1;
		}
		c->body_done += n;
		if (!c->body_last || lws_partial_buffered(wsi))
		{
			lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, (gw.opt.send_timeout_ms + 999) / 1000);
			lws_callback_on_writable(wsi);
			return 0;
		}
	}
	lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
	body_settled(c);
	if (c->close_after)
		return -1;
	return lws_http_transaction_completed(wsi) ? -1 : 0;
}

void
gw_http_closed(gw_conn *c)
{
	if (c != NULL)
	{
		if (c->http != NULL && c->http->closed != NULL)
			c->http->closed(c);
		body_settled(c);
	}
}
