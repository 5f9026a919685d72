/*
 * terminal/control/endpoint.h
 *		The endpoint of the control connections of host services at
 *		/terminal/host (docs/protocol.md, "The terminal: control
 *		connection"; docs/terminal.md, "A control connection" under "The
 *		gateway's control plane"): what the route (route.c) asks of the
 *		control plane.  A connection and its primitives: connection.h.
 *
 * A connection's life: challenge; hello (or pair while pairing), checked
 * against the database; ready with its conn ID and the host's state;
 * report, heartbeats; session.open and session.close from the node,
 * session.started from the host; a probe when another connection of the
 * host appears; the close with the code of the host's state.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_CONTROL_H
#define BOTHY_GATEWAY_TERMINAL_CONTROL_H

#include "core/conn.h"
#include "terminal/model.h"

/* "/terminal/host": the control connections' endpoint. */
extern const gw_ws_endpoint gw_tcontrol_endpoint;

/*
 * One row of the log tail for the control plane (route.c's row hook, before
 * the relay's): a session's end becomes session.close to its host's
 * connections here (opens.h); a host's confirmation, ready again
 * (hostcheck.h).
 */
void		gw_tcontrol_observe(const gw_tlog_row *row);

#endif							/* BOTHY_GATEWAY_TERMINAL_CONTROL_H */
