/*
 * terminal/relay/db.c
 *		The relay's database calls (see db.h).
 *
 * A call carries the session and grant of its slot, not the slot: the
 * answer finds the slot again (gw_rslots_done), so a slot that ended
 * meanwhile is never touched.  A failed call is counted and logged here
 * and tried again by the machine.
 *
 * terminal.session_open's reads are coalesced (docs/security.md, "Signals
 * that flood"): one read of expectations runs at a time, and the sessions
 * heard meanwhile wait and go together in the next, at most EXPECT_BATCH
 * a call.  A lone open is read at once, as before; a burst costs the
 * database one call per batch instead of one per session.
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

#define EXPECT_BATCH 500		/* sessions a read of expectations asks at most */
#define EXPECT_WAITING_MAX 10000	/* sessions waiting for one; more are not read */

typedef struct rdb_call
{
	lws_dll2_t	in_list;		/* the calls running */
	gw_db_call *db;
	bothy_uuid	session;
	bothy_uuid	grant;
	gw_rcall	call;
} rdb_call;

static lws_dll2_owner_t running;

/* A session heard in terminal.session_open, its expectation to be read. */
typedef struct expect_one
{
	bothy_uuid	session;
	bool		paired;			/* terminal.session_paired came before its row did */
} expect_one;

typedef struct expect_list
{
	expect_one *at;
	size_t		count;
	size_t		cap;
} expect_list;

static expect_list waiting;		/* heard, not yet asked */
static expect_list reading;		/* asked by the read in flight */
static gw_db_call *read_call;	/* that read, or NULL */

static const char sql_expect[] =
"SELECT u.s::text, " GW_RDB_EXPECTATION
" FROM unnest($1::uuid[]) WITH ORDINALITY AS u(s, i)"
" LEFT JOIN LATERAL bothy.terminal_relay_expectation(u.s) e ON true"
" LEFT JOIN LATERAL bothy.terminal_host_states(ARRAY[e.host]) h ON true"
" ORDER BY u.i";

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

/* The expectation in row r from column col on (GW_RDB_EXPECTATION). */
static bool
expectation_at(const PGresult *res, int r, int col, gw_rrow *row, bool *exists)
{
	long		left;
	const char *confirm;

	memset(row, 0, sizeof(*row));
	*exists = false;
	if (PQnfields(res) < col + GW_RDB_EXPECTATION_COLS)
		goto bad;
	if (PQgetisnull(res, r, col))
		return true;			/* no row: closed or unknown */
	confirm = PQgetvalue(res, r, col + 4);
	if (!gw_db_uuid_at(res, r, col, &row->host) || !gw_db_uuid_at(res, r, col + 1, &row->grant) ||
		!gw_tstate_parse(PQgetvalue(res, r, col + 2), (size_t) PQgetlength(res, r, col + 2),
						 &row->state) ||
		row->state == GW_TSTATE_CLOSED ||
		!bothy_parse_int(PQgetvalue(res, r, col + 3), -(1L << 53), 1L << 53, &left) ||
		PQgetisnull(res, r, col + 4) || (strcmp(confirm, "t") != 0 && strcmp(confirm, "f") != 0))
		goto bad;
	row->local_confirm = confirm[0] == 't';
	row->grant_left_ms = left;
	*exists = true;
	return true;
bad:
	gw_log(GW_LOG_ERROR, "database answer not understood");
	return false;
}

bool
gw_rdb_expectation(const PGresult *res, int col, gw_rrow *row, bool *exists)
{
	if (PQntuples(res) != 1)
	{
		gw_log(GW_LOG_ERROR, "database answer not understood");
		return false;
	}
	return expectation_at(res, 0, col, row, exists);
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
	gw_rslots_done(&c->session, &c->grant, c->call, r, r == GW_RRESULT_TRUE ? &row : NULL,
				   gw_mono_ms());
	free(c);
}

static bool
submit(const bothy_uuid *session, const bothy_uuid *grant, gw_rcall call)
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
	return submit(&slot->session, &slot->grant, call);
}

/* --- terminal.session_open's reads, coalesced ------------------------------ */

static void read_next(void);

/* The read of expectations answered: a side-less expectation per session found. */
static void
expect_done(void *arg, gw_db_result result, const PGresult *res)
{
	int64_t		now = gw_mono_ms();
	size_t		i;

	(void) arg;
	read_call = NULL;
	if (result != GW_DB_OK || (size_t) PQntuples(res) != reading.count)
		/* a failed read leaves each expectation to its sides (D-M2-47-21) */
		gw_rdb_failed(gw_relay_call_name(GW_RCALL_READ), result == GW_DB_OK ? GW_DB_ERROR : result);
	else
		for (i = 0; i < reading.count; i++)
		{
			expect_one *e = &reading.at[i];
			bothy_uuid	asked;
			gw_rrow		row;
			bool		exists;

			if (!gw_db_uuid_at(res, (int) i, 0, &asked) ||
				bothy_uuid_compare(&asked, &e->session) != 0 ||
				!expectation_at(res, (int) i, 1, &row, &exists))
				continue;
			if (exists && gw_rslots_expect(&e->session, &row, now) != NULL && e->paired)
				gw_rslots_session_paired(&e->session, now);
		}
	reading.count = 0;
	read_next();
}

static bool
list_add(expect_list *l, const expect_one *e)
{
	if (l->count == l->cap)
	{
		size_t		cap = l->cap == 0 ? 64 : 2 * l->cap;
		expect_one *grown = realloc(l->at, cap * sizeof(*grown));

		if (grown == NULL)
			return false;
		l->at = grown;
		l->cap = cap;
	}
	l->at[l->count++] = *e;
	return true;
}

/* The next batch of the sessions waiting, when no read runs. */
static void
read_next(void)
{
	size_t		n = waiting.count < EXPECT_BATCH ? waiting.count : EXPECT_BATCH,
				i;
	char	   *array,
			   *p;
	const char *params[1];

	if (read_call != NULL || n == 0)
		return;
	array = malloc(n * (BOTHY_UUID_STRLEN + 1) + 3);
	for (i = 0; array != NULL && i < n; i++)
		if (!list_add(&reading, &waiting.at[i]))
			break;
	if (array == NULL || i < n)
	{
		free(array);
		reading.count = 0;
		waiting.count = 0;		/* out of memory: the sides build them (D-M2-47-21) */
		gw_rdb_failed(gw_relay_call_name(GW_RCALL_READ), GW_DB_ERROR);
		return;
	}
	memmove(waiting.at, waiting.at + n, (waiting.count - n) * sizeof(*waiting.at));
	waiting.count -= n;
	p = array;
	*p++ = '{';
	for (i = 0; i < n; i++)
	{
		if (i > 0)
			*p++ = ',';
		bothy_uuid_format(&reading.at[i].session, p);
		p += BOTHY_UUID_STRLEN;
	}
	*p++ = '}';
	*p = '\0';
	params[0] = array;
	read_call = gw_db_submit(gw.db, sql_expect, 1, params, expect_done, NULL);
	free(array);
	if (read_call == NULL)
	{
		/* the pool refused it (its queue full): these and the waiting go to the sides */
		reading.count = 0;
		waiting.count = 0;
		gw_rdb_failed(gw_relay_call_name(GW_RCALL_READ), GW_DB_ERROR);
	}
}

void
gw_rdb_expect(const bothy_uuid *session)
{
	expect_one	e = {*session, false};

	if (waiting.count >= EXPECT_WAITING_MAX || !list_add(&waiting, &e))
	{
		gw_rdb_failed(gw_relay_call_name(GW_RCALL_READ), GW_DB_ERROR);
		return;
	}
	read_next();
}

/* terminal.session_paired before the session's row was read: remembered for it. */
static void
mark_paired(expect_list *l, const bothy_uuid *session)
{
	size_t		i;

	for (i = 0; i < l->count; i++)
		if (bothy_uuid_compare(&l->at[i].session, session) == 0)
			l->at[i].paired = true;
}

void
gw_rdb_paired(const bothy_uuid *session)
{
	mark_paired(&reading, session);
	mark_paired(&waiting, session);
}

int
gw_rdb_pending(void)
{
	return (int) running.count + (read_call != NULL ? 1 : 0);
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
	gw_db_cancel(read_call);
	read_call = NULL;
	reading.count = waiting.count = 0;
}
