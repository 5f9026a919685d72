/*
 * core/publish.h
 *		Signals this node originates (typing, agent presence): staged with
 *		bothy.publish in a call of their own, in multi mode only (D-M7-17-7;
 *		docs/gateway.md, "Cross-node delivery": in single mode a gateway
 *		event is delivered locally only and stages nothing).  Device bindings
 *		and consumer takeovers are staged by their own SQL functions, not here.
 *
 * The event was delivered locally first (D-M7-17-5); the signal goes out
 * after the call commits, through the fan-out worker, and every other node
 * rebuilds the event.  A failed call loses the signal: logged and counted,
 * as a lost NOTIFY would be (signals are at most once).
 */
#ifndef BOTHY_GATEWAY_PUBLISH_H
#define BOTHY_GATEWAY_PUBLISH_H

#include "signal.h"

/* Stages sig (its node is set to this node's ID here) when the cluster runs multi. */
void		gw_publish(bothy_signal *sig);

#endif							/* BOTHY_GATEWAY_PUBLISH_H */
