/*
 * terminal/relay/db.c
 *		The relay's database calls (see db.h).
 *
 * A call carries the session and grant of its slot, not the slot: the
 * answer finds the slot again (gw_rslots_done), so a slot that ended
 * meanwhile is never touched.  A failed call is counted and logged here
 * and tried again by the machine.
 */
#include <stdlib.h>
#include <string.h>

#include "core/conn.h"
#include "core/node.h"
#include "intparse.h"
#include "logline.h"
#include "terminal/relay/db.h"
#include "terminal/relay/stats.h"
#include "terminal/send.h"

typedef struct rdb_call
{
	lws_dll2_t	in_list;		/* the calls running */
	gw_db_call *db;
	bothy_uuid	session;
	bothy_uuid	grant;
	gw_rcall	call;
	bool		expect;			/* terminal.session_open's read, for no slot */
	bool		paired;			/* expect: terminal.session_paired came while it ran */
} rdb_call;

static lws_dll2_owner_t running;

/* one row whatever the session's state: NULLs when it is closed or unknown */
static const char sql_read[] =
"SELECT " GW_RDB_EXPECTATION
" FROM (VALUES (1)) AS one(row)"
" LEFT JOIN bothy.terminal_relay_expectation($1::uuid) e ON true"
" LEFT JOIN LATERAL bothy.terminal_host_states(ARRAY[e.host]) h ON true";

/* The transitions; IDLE and BY_HOST take no grant (the slot's staleness guards them). */
static const char *const sql_of[GW_RCALL_COUNT] = {
	[GW_RCALL_READ] = sql_read,
	[GW_RCALL_DETACH] = "SELECT bothy.terminal_session_detach($1::uuid, $2::uuid)",
	[GW_RCALL_ACTIVATE] = "SELECT bothy.terminal_session_activate($1::uuid, $2::uuid)",
	[GW_RCALL_OPEN_TIMEOUT] = "SELECT bothy.terminal_session_open_timeout($1::uuid, $2::uuid)",
	[GW_RCALL_IDLE] = "SELECT bothy.terminal_session_end($1::uuid, 'idle')",
	[GW_RCALL_BY_HOST] = "SELECT bothy.terminal_session_end($1::uuid, 'closed_by_host')",
};

bool
gw_rdb_expectation(const PGresult *res, int col, gw_rrow *row, bool *exists)
{
	long		left;

	memset(row, 0, sizeof(*row));
	*exists = false;
	if (PQntuples(res) != 1 || PQnfields(res) < col + GW_RDB_EXPECTATION_COLS)
		goto bad;
	if (PQgetisnull(res, 0, col))
		return true;			/* no row: closed or unknown */
	if (!gw_db_uuid_at(res, 0, col, &row->host) || !gw_db_uuid_at(res, 0, col + 1, &row->grant) ||
		!gw_tstate_parse(PQgetvalue(res, 0, col + 2), (size_t) PQgetlength(res, 0, col + 2),
						 &row->state) ||
		row->state == GW_TSTATE_CLOSED ||
		!bothy_parse_int(PQgetvalue(res, 0, col + 3), -(1L << 53), 1L << 53, &left) ||
		!gw_db_bool_at(res, col + 4, &row->local_confirm))
		goto bad;
	row->grant_left_ms = left;
	*exists = true;
	return true;
bad:
	gw_log(GW_LOG_ERROR, "database answer not understood");
	return false;
}

/*
 * Counted each; logged at once, then at most once a second with the count
 * since: a flood of terminal.session_open whose reads the pool refuses
 * (core/db.h, background calls) must not become a flood of lines.
 */
void
gw_rdb_failed(const char *call, gw_db_result result)
{
	static int64_t logged_at;
	static uint64_t unlogged;
	int64_t		now = gw_mono_ms();

	gw_relay_stats.call_failures++;
	unlogged++;
	if (logged_at != 0 && now - logged_at < 1000)
		return;
	gw_logf(GW_LOG_WARN, "terminal relay database call failed", "call=%s result=%s count=%llu", call,
			result == GW_DB_TIMEOUT ? "timeout" : "error", (unsigned long long) unlogged);
	logged_at = now;
	unlogged = 0;
}

static void
done(void *arg, gw_db_result result, const PGresult *res)
{
	rdb_call   *c = arg;
	gw_rresult	r = GW_RRESULT_FAILED;
	gw_rrow		row;
	bool		value = false;

	lws_dll2_remove(&c->in_list);
	if (result == GW_DB_OK && c->call == GW_RCALL_READ)
	{
		if (gw_rdb_expectation(res, 0, &row, &value))
			r = value ? GW_RRESULT_TRUE : GW_RRESULT_FALSE;
	}
	else if (result == GW_DB_OK && gw_db_bool(res, &value))
		r = value ? GW_RRESULT_TRUE : GW_RRESULT_FALSE;
	if (r == GW_RRESULT_FAILED)
		gw_rdb_failed(gw_relay_call_name(c->call), result == GW_DB_OK ? GW_DB_ERROR : result);
	else if (r == GW_RRESULT_TRUE && c->call != GW_RCALL_READ)
	{
		gw_relay_stats.decisions[c->call]++;
		gw_terminal_committed();	/* a single node's tail reads its row now */
	}
	if (c->expect)
	{
		/* a side-less expectation; a failed read leaves it to the sides (D-M2-47-21) */
		if (r == GW_RRESULT_TRUE && gw_rslots_expect(&c->session, &row, gw_mono_ms()) != NULL &&
			c->paired)
			gw_rslots_session_paired(&c->session, gw_mono_ms());
	}
	else
		gw_rslots_done(&c->session, &c->grant, c->call, r, r == GW_RRESULT_TRUE ? &row : NULL,
					   gw_mono_ms());
	free(c);
}

static bool
submit(const bothy_uuid *session, const bothy_uuid *grant, gw_rcall call, bool expect)
{
	rdb_call   *c = calloc(1, sizeof(*c));
	char		s[BOTHY_UUID_STRLEN + 1],
				g[BOTHY_UUID_STRLEN + 1];
	const char *params[2] = {s, g};
	int			n = call == GW_RCALL_DETACH || call == GW_RCALL_ACTIVATE ||
		call == GW_RCALL_OPEN_TIMEOUT ? 2 : 1;

	if (c != NULL)
	{
		c->session = *session;
		c->grant = *grant;
		c->call = call;
		c->expect = expect;
		bothy_uuid_format(session, s);
		bothy_uuid_format(grant, g);
		lws_dll2_add_tail(&c->in_list, &running);
		c->db = gw_db_submit(gw.db, sql_of[call], n, params, done, c);
		if (c->db != NULL)
			return true;
		lws_dll2_remove(&c->in_list);
		free(c);
	}
	/* not even queued (the pool's queue full, or no memory): the machine tries again */
	gw_rdb_failed(gw_relay_call_name(call), GW_DB_ERROR);
	return false;
}

bool
gw_rdb_call(const gw_rslot *slot, gw_rcall call)
{
	return submit(&slot->session, &slot->grant, call, false);
}

void
gw_rdb_expect(const bothy_uuid *session)
{
	(void) submit(session, session, GW_RCALL_READ, true);
}

void
gw_rdb_paired(const bothy_uuid *session)
{
	lws_dll2_t *d;

	for (d = running.head; d != NULL; d = d->next)
	{
		rdb_call   *c = lws_container_of(d, rdb_call, in_list);

		if (c->expect && memcmp(c->session.b, session->b, sizeof(session->b)) == 0)
			c->paired = true;
	}
}

int
gw_rdb_pending(void)
{
	return (int) running.count;
}

void
gw_rdb_forget(void)
{
	lws_dll2_t *d,
			   *next;

	for (d = running.head; d != NULL; d = next)
	{
		rdb_call   *c = lws_container_of(d, rdb_call, in_list);

		next = d->next;
		lws_dll2_remove(d);
		gw_db_cancel(c->db);
		free(c);
	}
}
