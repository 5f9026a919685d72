/*
 * terminal/route.h
 *		The terminal route: the control connections of host services, both
 *		stream sides of every session, the terminal's REST calls and its part
 *		of the shared listener (docs/terminal.md, "The gateway's control
 *		plane" and "The relay").  main.c registers gw_terminal_route with the
 *		core beside the gateway route.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_ROUTE_H
#define BOTHY_GATEWAY_TERMINAL_ROUTE_H

#include "core/route.h"
#include "signal.h"

extern const gw_route gw_terminal_route;

/*
 * The route's handler of one terminal signal: the listener's (multi), or
 * gw_terminal_send's at once (single, D-M2-47-4).  Kinds of other routes
 * are ignored.
 */
void		gw_terminal_dispatch(const bothy_signal *sig);

/*
 * Read back what this node may have missed (D-M2-47-5): the host states of
 * its control connections, the rows of its relay's slots, then the log.
 * The listener's reconcile after a loss, and the tail's after a gap.
 */
void		gw_terminal_reconcile(void);

#endif							/* BOTHY_GATEWAY_TERMINAL_ROUTE_H */
