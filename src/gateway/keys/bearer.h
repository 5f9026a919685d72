/*
 * keys/bearer.h
 *		The token of an HTTP request's "Authorization: Bearer" header,
 *		verified against the node's key store: one place for every REST
 *		route, so that they refuse and log alike.
 */
#ifndef BOTHY_GATEWAY_KEYS_BEARER_H
#define BOTHY_GATEWAY_KEYS_BEARER_H

#include <stdbool.h>

#include <libwebsockets.h>

#include "keys/token.h"

/*
 * The request's token, verified for the kinds in accept (a
 * BOTHY_TOKEN_ACCEPT set) into *t; false when there is none (logged at
 * info as missing) or it is refused (logged at info as refused, with the
 * reason; never the token itself).  The two messages are the route's, as
 * docs/gateway.md lists them.
 */
bool		gw_bearer_verify(struct lws *wsi, unsigned accept, const char *missing,
							 const char *refused, bothy_token *t);

#endif							/* BOTHY_GATEWAY_KEYS_BEARER_H */
