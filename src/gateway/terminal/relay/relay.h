/*
 * terminal/relay/relay.h
 *		The relay of one node: the expectations of sessions' current grants,
 *		one slot per session and grant, both stream sides at
 *		/terminal/stream/<session> (the device's and the host's data
 *		connection), their pairing, lone sides, the bytes between them with
 *		backpressure, idle sessions, and what the terminal log tells of the
 *		sessions this node relays (D-M2-47-8, 14, 15, 21, 22, 25).
 *
 * The contract between the terminal's control plane (the route, the
 * control connections, the log tail) and the relay (relay*.c).  The route
 * registers gw_relay_stream as its stream endpoint, forwards the relay's
 * signals, the log rows and its hooks; the relay reaches the database
 * itself (core/db.h) and sends its one signal, terminal.session_paired,
 * with gw_terminal_send (terminal/send.h).  Neither side reaches into the
 * other's state.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_RELAY_H
#define BOTHY_GATEWAY_TERMINAL_RELAY_H

#include <stdbool.h>

#include <jansson.h>

#include "core/route.h"
#include "signal.h"
#include "terminal/model.h"

struct gw_metrics_out;

/* "/terminal/stream/" (a prefix): both sides of every session. */
extern const gw_ws_endpoint gw_relay_stream;

/*
 * terminal.session_open and terminal.session_paired, in the listener's
 * order (multi), or as this node sends them (single, D-M2-47-4).  The
 * relay reads the session's row itself (RelayExpectation, D-M2-47-21);
 * late, repeated or reordered signals change nothing wrong.
 */
void		gw_relay_signal(const bothy_signal *sig);

/* One row of the terminal log, in number order, as the tail reads it. */
void		gw_relay_observe(const gw_tlog_row *row);

/*
 * A control connection of this node committed session.started of this
 * grant (the database's transition to active succeeded).  The slot of
 * that grant here, if any, is started; a pairing of it that already ended
 * here detaches the session (D-M2-47-15).
 */
void		gw_relay_started(const bothy_uuid *session, const bothy_uuid *grant);

/* The listener came back after a loss: check this node's slots (D-M2-47-5). */
void		gw_relay_reconcile(void);

/* The route's hooks (core/route.h), the relay's part of each. */
bool		gw_relay_init(void);
void		gw_relay_stopping(void);
bool		gw_relay_drained(void);
void		gw_relay_forget(void);
void		gw_relay_metrics(struct gw_metrics_out *out);
bool		gw_relay_status(json_t *status);

#endif							/* BOTHY_GATEWAY_TERMINAL_RELAY_H */
