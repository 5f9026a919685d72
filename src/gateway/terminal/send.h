/*
 * terminal/send.h
 *		How the terminal sends a signal this node decided (D-M2-47-4): in
 *		multi mode it is published (bothy.publish) and every node, this one
 *		too, hears it through the listener; in single mode nothing is staged
 *		and the route's handler runs at once, the same handler the listener
 *		would call.  Either way the signal reaches the route's handler after
 *		the decision committed.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_SEND_H
#define BOTHY_GATEWAY_TERMINAL_SEND_H

#include "signal.h"

/* sig: a terminal kind, encoded by the common codec; never fails loudly (counted, logged). */
void		gw_terminal_send(const bothy_signal *sig);

#endif							/* BOTHY_GATEWAY_TERMINAL_SEND_H */
