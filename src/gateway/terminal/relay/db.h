/*
 * terminal/relay/db.h
 *		The relay's database calls: a slot's calls (the row, detach,
 *		activate, the end at open_timeout, idle and closed_by_host; each a
 *		compare-and-swap of docs/terminal.md), the read of the row that a
 *		terminal.session_open makes into an expectation, and the columns of
 *		the expectation the identify's calls read too.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_RELAY_DB_H
#define BOTHY_GATEWAY_TERMINAL_RELAY_DB_H

#include <stdbool.h>

#include <libpq-fe.h>

#include "core/db.h"

#include "terminal/relay/slot.h"

/*
 * The expectation's columns, from bothy.terminal_relay_expectation as e
 * and bothy.terminal_host_states as h: host, grant, state, milliseconds
 * left until the grant's expiry (by the database's clock, so a node's own
 * clock does not matter), require_local_confirm.
 */
#define GW_RDB_EXPECTATION \
	"e.host, e.grant_id, e.state, " \
	"floor(extract(epoch FROM e.grant_expires_at - now()) * 1000)::bigint, " \
	"coalesce(h.require_local_confirm, false)"
#define GW_RDB_EXPECTATION_COLS 5

/*
 * The expectation at columns col.. of row 0: *exists false when its host
 * is NULL (no row: the session is closed or unknown).  False when the
 * answer is not understood (one log record).
 */
bool		gw_rdb_expectation(const PGresult *res, int col, gw_rrow *row, bool *exists);

/* gw_rslot_io's call: its answer goes to gw_rslots_done; false when not started. */
bool		gw_rdb_call(const gw_rslot *slot, gw_rcall call);

/* terminal.session_open: the session's row, made into an expectation. */
void		gw_rdb_expect(const bothy_uuid *session);

/*
 * terminal.session_paired of a session whose expectation is being read:
 * applied once the read made it (the signals' order, whatever the reads').
 */
void		gw_rdb_paired(const bothy_uuid *session);

/* Calls running. */
int			gw_rdb_pending(void);

/* The loop ended: every call is forgotten. */
void		gw_rdb_forget(void);

/* One record and a count of a call that failed or timed out. */
void		gw_rdb_failed(const char *call, gw_db_result result);

#endif							/* BOTHY_GATEWAY_TERMINAL_RELAY_DB_H */
