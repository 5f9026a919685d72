/*
 * core/web.h
 *		The page and the node's live state on the listen port (the one
 *		vhost, HTTP of conn.c's callback):
 *		  /status.json  this node's state for the /status page, always
 *		  /             DIR/index.html   } only with `serve --web DIR`;
 *		  /status       DIR/status.html  } without it these are 404
 *		  /NAME.EXT     DIR/NAME.EXT, NAME of [a-z0-9_-], EXT one of
 *		                html js css svg png
 *
 * Nothing else is served: no other name, no subdirectory, no listing, so
 * no request can reach a file outside DIR.
 */
#ifndef BOTHY_GATEWAY_WEB_H
#define BOTHY_GATEWAY_WEB_H

#include <stdbool.h>

#include <libwebsockets.h>

#include "core/conn.h"

/* The path is one of web.c's (with or without --web). */
bool		gw_web_claims(const char *uri);

/*
 * LWS_CALLBACK_HTTP for a claimed path: builds the whole response into
 * c->rx as http.c does, so gw_http_writeable writes it.
 */
int			gw_web_request(struct lws *wsi, gw_conn *c, const char *uri);

#endif							/* BOTHY_GATEWAY_WEB_H */
