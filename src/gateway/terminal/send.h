/*
 * terminal/send.h
 *		How the terminal sends a signal this node decided (D-M2-47-4): in
 *		multi mode it is published (bothy.publish) and every node, this one
 *		too, hears it through the listener; in single mode nothing is staged
 *		and the route's handler runs at once, the same handler the listener
 *		would call.  Either way the signal reaches the route's handler after
 *		the decision committed.
 *
 * Some signals the database stages itself in the transaction of a
 * gateway's decision, in multi mode only (docs/terminal.md, "Signals and
 * modes"): terminal.session_open of an open or attach, terminal.host_close
 * of the duplicate verdict, terminal.log of every gateway transition.
 * For those the node calls gw_terminal_decided or gw_terminal_committed
 * after its commit: nothing more is sent in multi mode (the listener
 * brings what the database staged), and in single mode the handler runs
 * now, as it would for the signal.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_SEND_H
#define BOTHY_GATEWAY_TERMINAL_SEND_H

#include <stdint.h>

#include "signal.h"

/*
 * What send.c calls, set by route.c before the node starts: the shared
 * ground includes neither the route nor the tail (docs/development.md,
 * "The gateway's rooms").  dispatch is the route's handler of a terminal
 * signal (gw_terminal_dispatch); wake is the log tail's wake-up
 * (gw_ttail_wake, 0: something committed).
 */
typedef void (*gw_tsend_dispatch) (const bothy_signal *sig);
typedef void (*gw_tsend_wake) (int64_t seq);
void		gw_terminal_send_hooks(gw_tsend_dispatch dispatch, gw_tsend_wake wake);

/*
 * sig: a kind only gateways stage (terminal.host_present, _host_gone,
 * _session_paired), encoded by the common codec; never fails loudly
 * (counted, logged).
 */
void		gw_terminal_send(const bothy_signal *sig);

/*
 * sig: a kind the database staged with this node's committed decision in
 * multi mode (terminal.session_open, terminal.host_close): in single mode
 * the route's handler runs now.
 */
void		gw_terminal_decided(const bothy_signal *sig);

/*
 * A transition this node decided committed (any terminal function of a
 * gateway): in single mode the database staged no terminal.log, so the
 * log tail reads now; in multi mode the wake-up comes through the
 * listener.  Without it the tail still reads it within
 * bothy.terminal_log_poll_interval.
 */
void		gw_terminal_committed(void);

#endif							/* BOTHY_GATEWAY_TERMINAL_SEND_H */
