/*
 * core/http.h
 *		HTTP on the listen port (the one vhost, HTTP of conn.c's callback):
 *		/healthz, /readyz and /metrics, the page's files (web.c), and every
 *		other path to the route that registered its prefix (route.h); and
 *		the writing of an answer, for the core and the routes alike.
 */
#ifndef BOTHY_GATEWAY_HTTP_H
#define BOTHY_GATEWAY_HTTP_H

#include <libwebsockets.h>

#include "core/conn.h"

/*
 * The most one send() of the listen port's protocol carries (its
 * tx_packet_size, server.c), and the piece of an HTTP body written per writeable.  Without
 * it lws would cap every send() at the protocol's receive buffer (512
 * bytes) and keep the rest of any longer message for later turns.
 */
#define GW_HTTP_PIECE 65536

/* LWS_CALLBACK_HTTP: uri is the path. */
int			gw_http_request(struct lws *wsi, gw_conn *c, const char *uri);

/*
 * Writes the status line and headers now (call it from an HTTP callback of
 * wsi) and keeps a copy of the body for the next HTTP_WRITEABLE.  Nonzero:
 * close the connection.
 */
int			gw_http_respond(struct lws *wsi, gw_conn *c, unsigned status, const char *type,
							const char *body, size_t len);

/* c->rx = a copy of body[0..len) behind LWS_PRE headroom; false when out of memory. */
bool		gw_http_keep_body(gw_conn *c, const char *body, size_t len);

/*
 * After the headers of an answer whose body is in c->rx: the body goes
 * from the next HTTP_WRITEABLE on, and until it is all sent the answer
 * counts as owed.
 */
void		gw_http_owe_body(struct lws *wsi, gw_conn *c);

/*
 * Answers whose headers are sent and whose body is not: a stop waits for
 * them, or its client would read a cut response.
 */
int			gw_http_bodies_owed(void);

/*
 * LWS_CALLBACK_HTTP_BODY and _COMPLETION: a POST body for a route that
 * reads bodies (route.h, body_max) is gathered into c->rx; at its end the
 * route's request is called.  Other bodies are ignored.  Nonzero closes.
 */
int			gw_http_body_in(gw_conn *c, const void *in, size_t len);
int			gw_http_body_done(struct lws *wsi, gw_conn *c);

/*
 * The request body during the route's request call for a POST (route.h,
 * body_max): its bytes, not NUL-terminated, and their count in *len.
 * NULL (and 0) in any other call.
 */
const char *gw_http_body(size_t *len);

/* LWS_CALLBACK_HTTP_WRITEABLE: the body (or a route's answer, c->http_call, first). */
int			gw_http_writeable(struct lws *wsi, gw_conn *c);

/* LWS_CALLBACK_CLOSED_HTTP: the route's call is cancelled, the body freed. */
void		gw_http_closed(gw_conn *c);

#endif							/* BOTHY_GATEWAY_HTTP_H */
