/*
 * terminal/control/connection.h
 *		A control connection of a host service (docs/protocol.md, "The
 *		terminal: control connection"; docs/terminal.md, "A control
 *		connection" under "The gateway's control plane"): one struct per
 *		connection, its states, and the primitives the other parts of the
 *		control plane (endpoint.c, hosts.c, presence.c, probe.c,
 *		opens.c, hostcheck.c) use.  The close codes are terminal/model.h's.
 *
 * The primitives call no handler: the endpoint (endpoint.c) calls the
 * handlers, and the handlers call these, so the calls go one way.
 *
 * A connection's life: challenge; hello (or pair while pairing), checked
 * against the database; ready with its conn ID and the host's state;
 * report, heartbeats; session.open and session.close from the node,
 * session.started from the host; a probe when another connection of the
 * host appears; the close with the code of the host's state.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_CONNECTION_H
#define BOTHY_GATEWAY_TERMINAL_CONNECTION_H

#include <stdbool.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "core/conn.h"
#include "core/db.h"
#include "core/uuidmap.h"
#include "terminal/model.h"
#include "terminal/control/wire.h"
#include "uuid.h"

/* conn.state of a control connection; the core's GW_CONN_CLOSING ends them. */
typedef enum gw_tconn_state
{
	GW_TC_NEW = 0,				/* challenge sent: hello or pair next */
	GW_TC_CHECKING,				/* hello or pair: its database call runs */
	GW_TC_READY					/* ready sent */
} gw_tconn_state;

typedef struct gw_tconn
{
	gw_conn		conn;			/* the transport's part: first */
	gw_uuidmap_link in_host;	/* hosts.c: the connections of its host, from hello or pair */
	bothy_uuid	id;				/* conn: a UUIDv7 of this node, drawn at the upgrade */
	bothy_uuid	host;			/* claimed by hello or pair, proven at ready */
	uint8_t		key[GW_TKEY_BYTES];	/* the key it proved (ready on) */
	uint8_t		nonce[GW_TNONCE_BYTES];	/* the challenge's, then the running probe's */
	uint8_t		hstate;			/* gw_thost its last ready said: confirming or active */
	uint8_t		counted;		/* stats.h: the gauge it is counted in */
	bool		indexed;		/* in its host's list */
	bool		reported;		/* a report since the last ready */
	bool		announced;		/* multi: terminal.host_present sent (from the first report) */
	bool		probing;		/* a probe waits for its answer */
	bool		verdict;		/* its probe was answered: the verdict's call runs */
	bool		opens_due;		/* a session.open waits for the hold to end */
	bool		opens_retry;	/* its sessions could not be read: again at the next heartbeat */
	bool		recheck;		/* terminal.host_close came while its hello ran */
	int64_t		deadline;		/* gw_mono_ms: hello by then, then the next heartbeat */
	int64_t		probe_until;	/* probing: the answer by then */
	int64_t		probation_until;	/* multi: no session.open before then (0: none) */
} gw_tconn;

static inline gw_tconn *
gw_tconn_of(gw_conn *c)
{
	return lws_container_of(c, gw_tconn, conn);
}

/*
 * Ready, with its first report since ready: counts as the host
 * connected here (GET /v1/terminal/hosts, the 409 of an open).
 */
bool		gw_tconn_connected(const gw_tconn *tc);

/* Connected, the host active and no verdict running: session.open may go to it. */
bool		gw_tconn_eligible(const gw_tconn *tc);

/*
 * No session.open now: its probation runs (multi), it is being probed,
 * or a probe of another connection of its host runs on this node.
 */
bool		gw_tconn_held(const gw_tconn *tc, int64_t now);

/*
 * Asks the sweep for the connection's tick at the earliest of its hello or
 * heartbeat deadline, its probe's and, while a session.open waits, its
 * hold's end; after each change of them (endpoint.c, opens.c, probe.c).
 */
void		gw_tconn_rearm(gw_tconn *tc);

/* Queues one message; false when the connection is closing. */
bool		gw_tconn_send(gw_tconn *tc, const char *msg, int len);

/*
 * ready (again) with the host's state: its conn ID is the same every time.
 * A terminal.host_close heard while its hello ran (tc->recheck) is the
 * caller's to act on (endpoint.c): the primitives call up into no handler.
 */
void		gw_tconn_ready(gw_tconn *tc, gw_thost state);

/*
 * The silence after which a connection closes (4009), in ms: the settings
 * read now.  A remote entry of presence.c counts for as long.
 */
int64_t		gw_tconn_window(void);

/* The heartbeat's deadline set a window from now (ready, and every heartbeat). */
void		gw_tconn_arm_heartbeat(gw_tconn *tc);

/*
 * A database call on behalf of one connection.  Its answer looks the
 * connection up again by host and conn ID, so a connection that closed
 * meanwhile is never touched: done gets NULL then (a call that committed
 * may still have something to say).  extra (extra_len bytes, copied) is
 * handed back.  False when the call could not be queued (done is not
 * called).
 */
typedef void (*gw_tconn_done) (gw_tconn *tc, gw_db_result result, const PGresult *res,
							   const void *extra);
bool		gw_tconn_submit(gw_tconn *tc, const char *sql, int nparams,
							const char *const *params, gw_tconn_done done,
							const void *extra, size_t extra_len);

/* Database calls of the control plane not yet answered (the stop waits for them). */
int			gw_tcontrol_pending(void);

/* A call of the control plane began, or ended (for the calls not tied to one connection). */
void		gw_tcontrol_call_began(void);
void		gw_tcontrol_call_ended(void);

#endif							/* BOTHY_GATEWAY_TERMINAL_CONNECTION_H */
