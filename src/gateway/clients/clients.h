/*
 * route_gateway.h
 *		The gateway's route on the shared listener: decodes every payload
 *		with the common codec, ignores this node's own signals and kinds of
 *		other routes, counts what it received by kind and what it dropped as
 *		malformed by reason.
 */
#ifndef BOTHY_GATEWAY_ROUTE_GATEWAY_H
#define BOTHY_GATEWAY_ROUTE_GATEWAY_H

#include "listener.h"

/* The route's table entry (ctx unused: the node is global). */
extern const gw_route gw_route_gateway;

#endif							/* BOTHY_GATEWAY_ROUTE_GATEWAY_H */
