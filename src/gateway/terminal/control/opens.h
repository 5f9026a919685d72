/*
 * terminal/control/opens.h
 *		What a control connection is told of sessions, and tells of them
 *		(D-M2-47-3, 12, 27): session.open for every session of its host
 *		that is not closed (opening, active or detached), at its first
 *		report, after its hold (probation, a probe) and after a
 *		reconciliation; session.open of one session on
 *		terminal.session_open; session.started committed
 *		(bothy.terminal_session_started) and handed to the relay;
 *		session.close when the terminal log says a session of its host
 *		closed, and for the sessions a report names that are closed.
 *
 * Only an eligible connection (gw_tconn_eligible) is sent session.open,
 * and a held one (gw_tconn_held) is not: its opens are due, and once the
 * hold ends the host's sessions are read again from the database.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_OPENS_H
#define BOTHY_GATEWAY_TERMINAL_OPENS_H

#include "terminal/control/connection.h"
#include "terminal/model.h"
#include "terminal/control/wire.h"
#include "uuid.h"

/*
 * tc may be sent its host's sessions now: read them and send
 * session.open for each, unless it is held (then they are due) or not
 * eligible (then nothing).
 */
void		gw_topens_due(gw_tconn *tc);

/* terminal.session_open: the session, to this node's eligible connections of host. */
void		gw_topens_signal(const bothy_uuid *host, const bothy_uuid *session);

/* session.started on tc. */
void		gw_topens_started(gw_tconn *tc, const gw_tmsg *m);

/* A report naming sessions: session.close for each that is closed or not its host's. */
void		gw_topens_reported(gw_tconn *tc, const gw_tmsg *m);

/*
 * A session_closed row of the log tail (gw_tcontrol_observe): the end
 * becomes session.close to its host's active connections here.
 */
void		gw_topens_closed(const gw_tlog_row *row);

#endif							/* BOTHY_GATEWAY_TERMINAL_OPENS_H */
