/*
 * clients/stream.h
 *		The agent event stream on a consumer connection: the events an
 *		application appended (bothy.agent_event_appended), delivered in ID
 *		order as agent.event to the one connection holding the agent's
 *		stream, at most --agent-window beyond the held acknowledgement.
 *
 * A new holder continues from the held acknowledgement (ready's "acked"),
 * so nothing acknowledged is delivered again and nothing unacknowledged is
 * lost; events are read with bothy.agent_events_after, which answers only
 * the holder, so a fenced connection is delivered nothing as its own.
 * gateway.agent_event (every mode) says that a newer event exists.
 */
#ifndef BOTHY_GATEWAY_STREAM_H
#define BOTHY_GATEWAY_STREAM_H

#include "clients/client.h"
#include "signal.h"

/* The connection became ready holding the stream from c->acked. */
void		gw_stream_ready(gw_client *c);

/* The client acknowledged (c->acked moved): the window may take more. */
void		gw_stream_acked(gw_client *c);

/* gateway.agent_event: events up to sig->event exist for sig->agent. */
void		gw_stream_signal(const bothy_signal *sig);

/* One consumer reads what it may have missed (it held again after a lapse). */
void		gw_stream_reconcile_conn(gw_client *c);

/* After a lost listener: every consumer here reads what it may have missed. */
void		gw_stream_reconcile(void);

/* The connection closes: its running read finishes unseen. */
void		gw_stream_closed(gw_client *c);

#endif							/* BOTHY_GATEWAY_STREAM_H */
