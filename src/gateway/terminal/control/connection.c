/*
 * terminal/control/connection.c
 *		A control connection's primitives (see connection.h): database
 *		calls on its behalf, what it is, its deadlines, sending, ready.
 */
#include <stdlib.h>
#include <string.h>

#include "core/node.h"
#include "terminal/control/connection.h"
#include "terminal/control/hosts.h"
#include "terminal/control/stats.h"
#include "terminal/settings.h"

/* Large enough for ready, the one message sent here. */
#define OUT_MAX 256

/* --- calls on behalf of a connection ------------------------------------ */

static int	pending;

typedef struct tcall
{
	bothy_uuid	host;
	bothy_uuid	conn;
	gw_tconn_done done;
	unsigned char extra[];
} tcall;

void
gw_tcontrol_call_began(void)
{
	pending++;
}

void
gw_tcontrol_call_ended(void)
{
	pending--;
}

int
gw_tcontrol_pending(void)
{
	return pending;
}

static void
tcall_done(void *arg, gw_db_result result, const PGresult *res)
{
	tcall	   *t = arg;
	gw_tconn   *tc = gw_thosts_find(&t->host, &t->conn);

	if (tc != NULL && tc->conn.state == GW_CONN_CLOSING)
		tc = NULL;
	pending--;
	t->done(tc, result, res, t->extra);
	free(t);
}

bool
gw_tconn_submit(gw_tconn *tc, const char *sql, int nparams, const char *const *params,
				gw_tconn_done done, const void *extra, size_t extra_len)
{
	tcall	   *t = malloc(sizeof(*t) + extra_len);

	if (t == NULL)
		return false;
	t->host = tc->host;
	t->conn = tc->id;
	t->done = done;
	if (extra_len > 0)
		memcpy(t->extra, extra, extra_len);
	if (gw_db_submit(gw.db, sql, nparams, params, tcall_done, t) == NULL)
	{
		free(t);
		return false;
	}
	pending++;
	return true;
}

/* --- what a connection is ----------------------------------------------- */

bool
gw_tconn_connected(const gw_tconn *tc)
{
	return tc->conn.state == GW_TC_READY && tc->reported;
}

bool
gw_tconn_eligible(const gw_tconn *tc)
{
	return gw_tconn_connected(tc) && tc->hstate == GW_THOST_ACTIVE && !tc->verdict;
}

static void
probed_here(gw_tconn *other, void *arg)
{
	bool	   *probed = arg;

	if (other->probing && other->conn.state != GW_CONN_CLOSING)
		*probed = true;
}

bool
gw_tconn_held(const gw_tconn *tc, int64_t now)
{
	bool		probed = false;

	if (tc->probation_until > now || tc->probing)
		return true;
	gw_thosts_each(&tc->host, probed_here, &probed);
	return probed;
}

bool
gw_tconn_send(gw_tconn *tc, const char *msg, int len)
{
	if (len < 0 || tc->conn.state == GW_CONN_CLOSING)
		return false;
	gw_conn_send(&tc->conn, msg, (size_t) len);
	return true;
}

static int64_t
earliest(int64_t a, int64_t b)
{
	return a == 0 || (b != 0 && b < a) ? b : a;
}

/*
 * The sweep ticks a connection only when it asked (core/conn.h): ask for
 * the earliest of what it waits for.  A session.open held by another
 * connection's probe is looked at every sweep; that wait is rare and short.
 */
void
gw_tconn_rearm(gw_tconn *tc)
{
	int64_t		now = gw_mono_ms();
	int64_t		when = tc->deadline;

	if (tc->probing)
		when = earliest(when, tc->probe_until);
	if (tc->opens_due)
		when = earliest(when, tc->probation_until > now ? tc->probation_until : now + GW_SWEEP_MS);
	if (when != 0)
		gw_conn_wake_at(&tc->conn, when);
}

int64_t
gw_tconn_window(void)
{
	return gw_tsettings.terminal_host_heartbeat_interval * gw_tsettings.terminal_host_heartbeat_miss_limit;
}

void
gw_tconn_arm_heartbeat(gw_tconn *tc)
{
	tc->deadline = gw_mono_ms() + gw_tconn_window();
	gw_tconn_rearm(tc);
}

void
gw_tconn_ready(gw_tconn *tc, gw_thost state)
{
	char		out[OUT_MAX];

	tc->conn.state = GW_TC_READY;
	tc->hstate = (uint8_t) state;
	tc->reported = false;
	gw_tconn_arm_heartbeat(tc);
	gw_tstats_count(tc, state == GW_THOST_ACTIVE ? GW_TCOUNT_ACTIVE : GW_TCOUNT_CONFIRMING);
	(void) gw_tconn_send(tc, out, gw_tenc_ready(out, sizeof(out), &tc->id, state,
												gw_tsettings.terminal_host_heartbeat_interval));
}
