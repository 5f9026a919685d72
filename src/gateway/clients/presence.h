/*
 * clients/presence.h
 *		The node's presence writer (D-M7-17-6): every
 *		bothy.presence_flush_interval one call of bothy.presence_flush with
 *		what changed since the last successful flush (a delta), or every row
 *		the node holds (a full flush: at start, and when the database asks
 *		for one after losing the node's rows).
 *
 * Rows are the ready person connections: gateway session, person, device,
 * focus and idle.  A failed write is logged and counted and the changes
 * are kept for the next interval; a write never blocks a connection.
 * docs/sql-api.md, "The presence flush", is the contract with the SQL side.
 */
#ifndef BOTHY_GATEWAY_PRESENCE_H
#define BOTHY_GATEWAY_PRESENCE_H

#include <stdbool.h>

#include "clients/client.h"

/* The node started: the first flush (full) is due now. */
void		gw_presence_start(void);

/* Stop flushing; true once no flush is in flight (the stop polls it). */
bool		gw_presence_stop(void);

/* A person connection became ready, or changed focus or idle. */
void		gw_presence_changed(gw_client *c);

/* A ready person connection is closing: its row goes at the next flush. */
void		gw_presence_ended(gw_client *c);

#endif							/* BOTHY_GATEWAY_PRESENCE_H */
