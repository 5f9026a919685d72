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

/*
 * The terminal's own close codes (docs/protocol.md, "Close codes of the
 * control connection" and "Close codes of a stream"), beside the
 * transport's (core/conn.h): each route declares its codes in its own room.
 */
#define GW_TCODE_ENDED 1000		/* a stream: the session ended */
#define GW_TCODE_REFUSED 4001	/* a bad signature, an unknown host, a wrong pairing code; identify refused */
#define GW_TCODE_SILENT 4009	/* no heartbeat, or no probe answer, in time */
#define GW_TCODE_LONE 4102		/* a stream: no counterpart within bothy.terminal_open_timeout */
#define GW_TCODE_PAIRING 4110	/* the host went back to pairing */
#define GW_TCODE_DISABLED 4111	/* the host is disabled */
#define GW_TCODE_DUPLICATE 4112	/* the duplicate verdict, on the probing node */

/*
 * The codes bothy_gateway_closes_total counts by name for this route: a
 * refusal, malformed input (the transport's 4002, which a control
 * connection sends too), no answer in time, a lone side, the host's state,
 * the duplicate verdict.  Used where core/conn.h is included (route.c).
 */
#define GW_TERMINAL_CLOSE_CODES {GW_TCODE_REFUSED, GW_CLOSE_MALFORMED, GW_TCODE_SILENT, \
		GW_TCODE_LONE, GW_TCODE_PAIRING, GW_TCODE_DISABLED, GW_TCODE_DUPLICATE}

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

/* A host's state (bothy.terminal_hosts.state). */
typedef enum gw_thost
{
	GW_THOST_PAIRING = 1,
	GW_THOST_CONFIRMING,
	GW_THOST_ACTIVE,
	GW_THOST_DISABLED
} gw_thost;

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
const char *gw_thost_name(gw_thost h);

/* The value of name[0..len), strictly; false outside the closed set. */
bool		gw_tstate_parse(const char *name, size_t len, gw_tstate *out);
bool		gw_ttransition_parse(const char *name, size_t len, gw_ttransition *out);
bool		gw_tclose_parse(const char *name, size_t len, gw_tclose *out);
bool		gw_thost_parse(const char *name, size_t len, gw_thost *out);

/* Whether a transition is a host's (its row has no session). */
bool		gw_ttransition_is_host(gw_ttransition t);

/* The columns of a row, in the order gw_tlog_row_parse takes them. */
enum
{
	GW_TLOG_COL_SEQ = 0,
	GW_TLOG_COL_HOST,
	GW_TLOG_COL_SESSION,
	GW_TLOG_COL_TRANSITION,
	GW_TLOG_COL_STATE,
	GW_TLOG_COL_GRANT,
	GW_TLOG_COL_CLOSE_DETAIL,
	GW_TLOG_NCOLS
};

/*
 * One row from the text of its columns (seq, host, session, transition,
 * state, grant_id, close_detail of bothy.terminal_log_after; NULL for
 * SQL NULL), strictly as the table's constraints have them: seq a
 * decimal 1 .. 2^53 - 1, canonical UUIDs, words of the closed sets; a
 * host's row has no session, grant or close detail and a host's state; a
 * session's row has a session and a session's state, and a close detail
 * exactly when it closed.  False (and *out unspecified) for anything
 * else: the tail drops the row with one log record.
 */
bool		gw_tlog_row_parse(const char *const cols[GW_TLOG_NCOLS], gw_tlog_row *out);

/* seq's text strictly: decimal digits, 1 .. 2^53 - 1. */
bool		gw_tlog_seq_parse(const char *text, int64_t *out);

#endif							/* BOTHY_GATEWAY_TERMINAL_MODEL_H */
