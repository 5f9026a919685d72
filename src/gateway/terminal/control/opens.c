/*
 * terminal/control/opens.c
 *		session.open, session.started and session.close on the control
 *		connections (see opens.h).
 *
 * The database says which grant and device a session.open carries: a
 * signal only names the session, and the row is read when it is heard
 * (late, repeated or reordered signals then send nothing stale).
 */
#include <stdlib.h>
#include <string.h>

#include "core/node.h"
#include "core/uuidlist.h"
#include "logline.h"
#include "terminal/control/hosts.h"
#include "terminal/control/opens.h"
#include "terminal/relay/relay.h"
#include "terminal/send.h"
#include "terminal/control/stats.h"

#define OUT_MAX 256

static const char sql_host_sessions[] =
"SELECT session, device, grant_id FROM bothy.terminal_host_sessions($1::uuid)";

static const char sql_expectation[] =
"SELECT host, device, grant_id FROM bothy.terminal_relay_expectation($1::uuid)";

/* Only a session of this connection's host: the function alone would start any session. */
static const char sql_started[] =
"SELECT bothy.terminal_session_started($1::uuid, $2::uuid) "
"FROM bothy.terminal_relay_expectation($1::uuid) e WHERE e.host = $3::uuid";

static const char sql_reported[] =
"SELECT r FROM unnest($1::uuid[]) r "
"EXCEPT SELECT s.session FROM bothy.terminal_host_sessions($2::uuid) s";

static void
send_open(gw_tconn *tc, const bothy_uuid *session, const bothy_uuid *grant,
		  const bothy_uuid *device)
{
	char		out[OUT_MAX];

	if (gw_tconn_send(tc, out, gw_tenc_session_open(out, sizeof(out), session, grant, device)))
		gw_tstats.opens_sent++;
}

static void
send_close(gw_tconn *tc, const bothy_uuid *session)
{
	char		out[OUT_MAX];

	if (gw_tconn_send(tc, out, gw_tenc_session_close(out, sizeof(out), session)))
		gw_tstats.closes_sent++;
}

/* --- every session of the host ------------------------------------------- */

static void
host_sessions_read(gw_tconn *tc, gw_db_result result, const PGresult *res, const void *extra)
{
	int			i;

	(void) extra;
	if (tc == NULL || !gw_tconn_eligible(tc))
		return;
	if (result != GW_DB_OK || PQnfields(res) != 3)
	{
		gw_log(GW_LOG_WARN, "terminal sessions not read for a control connection, again at its next heartbeat");
		tc->opens_retry = true;
		return;
	}
	/* held meanwhile (a probe began): read again when the hold ends */
	if (gw_tconn_held(tc, gw_mono_ms()))
	{
		tc->opens_due = true;
		gw_tconn_rearm(tc);
		return;
	}
	for (i = 0; i < PQntuples(res); i++)
	{
		bothy_uuid	session,
					device,
					grant;

		if (!gw_db_uuid_at(res, i, 0, &session) || !gw_db_uuid_at(res, i, 1, &device) ||
			!gw_db_uuid_at(res, i, 2, &grant))
		{
			gw_log(GW_LOG_ERROR, "terminal sessions answer not understood");
			return;
		}
		send_open(tc, &session, &grant, &device);
	}
}

void
gw_topens_due(gw_tconn *tc)
{
	char		host[BOTHY_UUID_STRLEN + 1];
	const char *params[1] = {host};

	tc->opens_due = false;
	if (!gw_tconn_eligible(tc))
		return;
	if (gw_tconn_held(tc, gw_mono_ms()))
	{
		tc->opens_due = true;
		gw_tconn_rearm(tc);
		return;
	}
	bothy_uuid_format(&tc->host, host);
	if (!gw_tconn_submit(tc, sql_host_sessions, 1, params, host_sessions_read, NULL, 0))
		host_sessions_read(tc, GW_DB_ERROR, NULL, NULL);
}

/* --- one session: terminal.session_open ------------------------------------ */

typedef struct one_session
{
	bothy_uuid	host;
	bothy_uuid	session;
	bothy_uuid	grant;
	bothy_uuid	device;
	bool		read;			/* grant and device are the row's */
	bool		any;			/* an eligible connection of the host is here */
	bool		free_one;		/* one of them is not held */
} one_session;

static void
look(gw_tconn *tc, void *arg)
{
	one_session *o = arg;

	if (!gw_tconn_eligible(tc) || tc->conn.state == GW_CONN_CLOSING)
		return;
	o->any = true;
	if (gw_tconn_held(tc, gw_mono_ms()))
	{
		/* checked again in the database when the hold ends (D-M2-47-7) */
		tc->opens_due = true;
		gw_tconn_rearm(tc);
		return;
	}
	o->free_one = true;
	if (o->read)
		send_open(tc, &o->session, &o->grant, &o->device);
}

static void
expectation_read(void *arg, gw_db_result result, const PGresult *res)
{
	one_session *o = arg;
	bothy_uuid	host;

	gw_tcontrol_call_ended();
	if (result != GW_DB_OK || PQnfields(res) != 3)
		gw_log(GW_LOG_WARN, "terminal session not read for session.open");
	else if (PQntuples(res) == 1 && gw_db_uuid_at(res, 0, 0, &host) &&
			 gw_db_uuid_at(res, 0, 1, &o->device) && gw_db_uuid_at(res, 0, 2, &o->grant))
	{
		/* closed since, or not this host's: nothing to open */
		if (bothy_uuid_compare(&host, &o->host) == 0)
		{
			o->read = true;
			gw_thosts_each(&o->host, look, o);
		}
	}
	else if (PQntuples(res) != 0)
		gw_log(GW_LOG_ERROR, "terminal sessions answer not understood");
	free(o);
}

void
gw_topens_signal(const bothy_uuid *host, const bothy_uuid *session)
{
	one_session *o = calloc(1, sizeof(*o));
	char		s[BOTHY_UUID_STRLEN + 1];
	const char *params[1] = {s};

	if (o == NULL)
		return;
	o->host = *host;
	o->session = *session;
	gw_thosts_each(host, look, o);
	if (!o->free_one)
	{
		free(o);
		return;
	}
	bothy_uuid_format(session, s);
	gw_tcontrol_call_began();
	if (gw_db_submit(gw.db, sql_expectation, 1, params, expectation_read, o) == NULL)
		expectation_read(o, GW_DB_ERROR, NULL);
}

/* --- session.started ------------------------------------------------------- */

typedef struct started_grant
{
	bothy_uuid	session;
	bothy_uuid	grant;
} started_grant;

static void
started_done(gw_tconn *tc, gw_db_result result, const PGresult *res, const void *extra)
{
	const started_grant *g = extra;
	bool		started = false;

	(void) tc;
	if (result != GW_DB_OK)
	{
		gw_log(GW_LOG_WARN, "terminal session.started not recorded");
		return;
	}
	/* no row: not a session of this host, or closed */
	if (PQntuples(res) == 0 || !gw_db_bool(res, &started) || !started)
		return;
	gw_tstats.started++;
	gw_terminal_committed();
	gw_relay_started(&g->session, &g->grant);
}

void
gw_topens_started(gw_tconn *tc, const gw_tmsg *m)
{
	char		s[BOTHY_UUID_STRLEN + 1],
				g[BOTHY_UUID_STRLEN + 1],
				h[BOTHY_UUID_STRLEN + 1];
	const char *params[3] = {s, g, h};
	started_grant sg = {m->session, m->grant};

	bothy_uuid_format(&m->session, s);
	bothy_uuid_format(&m->grant, g);
	bothy_uuid_format(&tc->host, h);
	if (!gw_tconn_submit(tc, sql_started, 3, params, started_done, &sg, sizeof(sg)))
		started_done(tc, GW_DB_ERROR, NULL, &sg);
}

/* --- a report's sessions ---------------------------------------------------- */

static void
reported_read(gw_tconn *tc, gw_db_result result, const PGresult *res, const void *extra)
{
	int			i;

	(void) extra;
	if (tc == NULL || result != GW_DB_OK || PQnfields(res) != 1)
		return;
	for (i = 0; i < PQntuples(res); i++)
	{
		bothy_uuid	session;

		if (gw_db_uuid_at(res, i, 0, &session))
			send_close(tc, &session);
	}
}

void
gw_topens_reported(gw_tconn *tc, const gw_tmsg *m)
{
	char		host[BOTHY_UUID_STRLEN + 1];
	char	   *list = gw_uuid_array_literal(m->sessions, m->nsessions);
	const char *params[2] = {list, host};

	if (list == NULL)
		return;
	bothy_uuid_format(&tc->host, host);
	if (!gw_tconn_submit(tc, sql_reported, 2, params, reported_read, NULL, 0))
		gw_log(GW_LOG_WARN, "terminal sessions not read for a control connection report");
	free(list);
}

/* --- the log tail ------------------------------------------------------------ */

static void
close_on(gw_tconn *tc, void *arg)
{
	if (tc->conn.state == GW_TC_READY && tc->hstate == GW_THOST_ACTIVE)
		send_close(tc, arg);
}

void
gw_topens_closed(const gw_tlog_row *row)
{
	bothy_uuid	session = row->session;

	if (row->has_session)
		gw_thosts_each(&row->host, close_on, &session);
}
