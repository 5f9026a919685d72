/*
 * clients/clients.h
 *		The gateway route: people's devices and agent consumers, client
 *		protocol v1 at /gateway and its REST calls under /v1/.  One
 *		gw_route (core/route.h), which main.c registers.
 *
 * On the shared listener it takes the gateway kinds (the codec decoded
 * them once for every route), ignores this node's own signals and leaves
 * the terminal kinds to their route.
 */
#ifndef BOTHY_GATEWAY_CLIENTS_H
#define BOTHY_GATEWAY_CLIENTS_H

#include "core/route.h"

/* The route's registration. */
extern const gw_route gw_clients_route;

/* Its WebSocket path, /gateway: the core lists its connections (hub.c). */
extern const gw_ws_endpoint gw_clients_ws;

#endif							/* BOTHY_GATEWAY_CLIENTS_H */
