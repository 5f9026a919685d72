/*
 * terminal/model.h
 *		The terminal's words as the database writes them (docs/terminal.md):
 *		a session's states, the transitions of the terminal log, the close
 *		details, and one log row as the tail hands it on.  Shared by the
 *		control plane (control, tail) and the relay, so that both read the
 *		log the same way.
 *
 * Every parser is strict: a word outside the closed set is refused, and
 * the caller drops the row with one log record, as for a signal.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_MODEL_H
#define BOTHY_GATEWAY_TERMINAL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uuid.h"

/* A session's state (bothy.terminal_sessions.state). */
typedef enum gw_tstate
{
	GW_TSTATE_OPENING = 1,
	GW_TSTATE_ACTIVE,
	GW_TSTATE_DETACHED,
	GW_TSTATE_CLOSED
} gw_tstate;

/* A row's transition (bothy.terminal_log.transition). */
typedef enum gw_ttransition
{
	GW_TLOG_SESSION_OPENED = 1,
	GW_TLOG_SESSION_ATTACHED,
	GW_TLOG_SESSION_STARTED,
	GW_TLOG_SESSION_DETACHED,
	GW_TLOG_SESSION_ACTIVATED,
	GW_TLOG_SESSION_CLOSED,
	GW_TLOG_HOST_PAIRED,
	GW_TLOG_HOST_CONFIRMED,
	GW_TLOG_HOST_RESET,
	GW_TLOG_HOST_DISABLED
} gw_ttransition;

/* Why a session closed (bothy.terminal_sessions.close_detail). */
typedef enum gw_tclose
{
	GW_TCLOSE_NONE = 0,			/* the session is not closed */
	GW_TCLOSE_BY_DEVICE,
	GW_TCLOSE_BY_HOST,
	GW_TCLOSE_OPEN_TIMEOUT,
	GW_TCLOSE_RECHECK_FAILED,
	GW_TCLOSE_HOST_GONE,
	GW_TCLOSE_IDLE,
	GW_TCLOSE_HOST_DISABLED,
	GW_TCLOSE_HOST_PAIRING
} gw_tclose;

/*
 * One row of bothy.terminal_log_after(), parsed.  A host's row (host_*)
 * has no session; state is then the host's, kept as text.
 */
typedef struct gw_tlog_row
{
	int64_t		seq;			/* 1 .. 2^53 - 1, in commit order */
	bothy_uuid	host;
	bool		has_session;	/* a session's transition */
	bothy_uuid	session;
	gw_ttransition transition;
	gw_tstate	state;			/* a session's row: its state after the transition */
	char		host_state[16];	/* a host's row: "pairing", "confirming", "active", "disabled" */
	bool		has_grant;
	bothy_uuid	grant;			/* the session's current grant, when the row names one */
	gw_tclose	close_detail;	/* GW_TCLOSE_NONE unless the session closed */
} gw_tlog_row;

/* Each name as the database writes it, or NULL for a value outside the set. */
const char *gw_tstate_name(gw_tstate s);
const char *gw_ttransition_name(gw_ttransition t);
const char *gw_tclose_name(gw_tclose c);

/* The value of name[0..len), strictly; false outside the closed set. */
bool		gw_tstate_parse(const char *name, size_t len, gw_tstate *out);
bool		gw_ttransition_parse(const char *name, size_t len, gw_ttransition *out);
bool		gw_tclose_parse(const char *name, size_t len, gw_tclose *out);

/* Whether a transition is a host's (its row has no session). */
bool		gw_ttransition_is_host(gw_ttransition t);

#endif							/* BOTHY_GATEWAY_TERMINAL_MODEL_H */
