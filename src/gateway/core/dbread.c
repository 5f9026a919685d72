/*
 * core/dbread.c
 *		Reads on hot standbys (see dbread.h; docs/standbys.md).
 *
 * Why a check before each read: a call carries the fence of the signals
 * it delivers (the fan-out worker's wal.fence, docs/signals.md), and a
 * standby may answer it only once pg_last_wal_replay_lsn() is at or past
 * that fence.  The check is one statement and the read another, sent only
 * after the check's answer came back: the read's snapshot is taken after
 * the replay position was seen, so it shows every commit up to the fence
 * (a standby makes a commit visible when it replays its record, in WAL
 * order).  A connection remembers the highest position it saw, so a read
 * whose fence is below it needs no check; a reconnect forgets it, since a
 * standby started again may have replayed less than before.
 *
 * A standby leaves the rotation for --database-read-retry when it is not
 * in recovery (promoted, or never a standby: it would answer from a
 * history of its own), when reads waited --database-read-wait for it in
 * vain --database-read-misses times in a row (it lags past the bound; one
 * such read is a hiccup, and only that read goes to the primary), or while
 * none of its connections is up; its calls then go to the primary, each
 * counted as a fallback.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/db.h"
#include "core/dbread.h"
#include "core/loop.h"
#include "core/pgconn.h"
#include "logline.h"

/*
 * A standby's replay is looked at again this often while a read waits:
 * libev's epoll waits whole milliseconds, so a shorter interval would wait
 * as long, and asking again at every answer would keep a standby backend
 * busy for each waiting read (docs/standbys.md gives this figure).  A
 * gw_timer, not an lws_sul: core/loop.c says why.
 */
#define RECHECK_US 1000

/*
 * A connection that saw a read's fence replayed sends the read without a
 * check, but not when its last check is older than this: a standby
 * promoted meanwhile (its state holds every commit up to the fence, but it
 * may take writes of its own after) still gets such reads for up to this
 * long, then leaves the rotation at the next check (docs/standbys.md,
 * "After a promotion, for up to a second").
 */
#define CHECK_MAX_AGE_US (1000 * 1000)

/*
 * The replay position, whether the server is in recovery, and which server
 * incarnation answers (a conninfo may reach several servers, and a server
 * may be started again).  The start time does not change when the
 * postmaster reinitialises after a backend crash, yet recovery then starts
 * again from the last restartpoint and may show a lower replay: so what
 * one connection saw serves the others only while no connection of the
 * standby was lost since, and a lower replay than the one cached is taken
 * as a new incarnation (docs/standbys.md, "Rotation").
 */
static const char sql_check[] =
"SELECT pg_last_wal_replay_lsn()::text, pg_is_in_recovery(), pg_postmaster_start_time()::text,"
" current_database()";

#define SERVER_ID_MAX 48			/* the start time's text, "2026-12-07 01:02:03.123456+00" */

typedef struct standby standby;

typedef struct rslot
{
	gw_pgconn	pc;
	standby    *sb;
	gw_db_call *call;			/* held here (checking or reading), or NULL */
	bool		checking;		/* the check runs, not the read */
	bool		busy;			/* a statement is in flight */
	PGresult   *first;
	uint64_t	seen;			/* highest replay position seen on this connection */
	lws_usec_t	checked_at;		/* its last check's answer */
	char		server[SERVER_ID_MAX];	/* the incarnation it reaches; "" until checked */
	gw_timer	t_recheck;		/* the next check of a fence not yet replayed */
	gw_timer	t_bound;		/* the call's wait_until, then its read_until */
} rslot;

struct standby
{
	gw_dbread  *r;
	int			index;			/* 1-based: the label of /metrics (never the conninfo) */
	rslot	   *slots;
	int			nslots;
	lws_usec_t	out_until;		/* out of rotation until then; 0: in */
	int			misses;			/* fence waits missed in a row, of newer and newer fences */
	uint64_t	missed_fence;	/* the newest fence among them */
	bool		was_up;
	bool		warned;			/* "unreachable" logged since its last connection */
	char		server[SERVER_ID_MAX];	/* the incarnation last checked, and */
	uint64_t	server_replay;	/* the highest replay any connection saw it at, */
	lws_usec_t	server_checked_at;	/* when last */
};

struct gw_dbread
{
	gw_db	   *db;
	standby    *sbs;
	int			n;
	int			next;			/* round robin */
	int			wait_ms;
	int			retry_ms;
	int			misses_max;		/* --database-read-misses */
	uint64_t	newest_fence;	/* the highest fence confirmed: replayed, or the primary's (the lag gauge) */
	gw_db_call *verify;			/* the primary's position asked after a missed fence, or NULL */
	int			verify_sb;		/* ... for this standby (index into sbs) */
	uint64_t	verify_fence;	/* ... which missed this fence */
	lws_usec_t	refused_logged;	/* "wal fence beyond the primary" last logged */
	lws_dll2_owner_t queue;		/* calls waiting for a standby connection */
	gw_timer	t_queue;		/* the oldest queued call's wait for one */
};

gw_read_stats gw_read_stats_now;
gw_dbread  *gw_dbread_current;

static const double wait_buckets[GW_N_READ_WAIT_BUCKETS] = GW_READ_WAIT_BUCKETS;
static const char *const fallback_names[GW_READ_FALLBACK_COUNT] = {"wait", "out", "error", "busy", "slow", "unfenced"};

static void dispatch(gw_dbread *r);

static void
count_wait(double seconds)
{
	int			i;

	gw_read_stats_now.wait_count++;
	gw_read_stats_now.wait_seconds_sum += seconds;
	for (i = 0; i < GW_N_READ_WAIT_BUCKETS; i++)
		if (seconds <= wait_buckets[i])
		{
			gw_read_stats_now.wait_bucket[i]++;
			break;
		}
}

static bool
in_rotation(standby *sb, lws_usec_t now)
{
	int			i;

	if (sb->out_until != 0 && now < sb->out_until)
		return false;
	for (i = 0; i < sb->nslots; i++)
		if (sb->slots[i].pc.state == GW_PG_UP)
			return true;
	return false;
}

/*
 * Out of the rotation for --database-read-retry; one record, not one per
 * call.  Lagging names its rule: the misses in a row that took it out.
 * It comes back with no miss counted.
 */
static void
take_out(standby *sb, const char *why)
{
	lws_usec_t	now = lws_now_usecs();

	if (sb->out_until == 0 || now >= sb->out_until)
	{
		if (strcmp(why, "lagging") == 0)
			gw_logf(GW_LOG_WARN, "standby out of rotation", "standby=%d reason=%s misses=%d",
					sb->index, why, sb->misses);
		else
			gw_logf(GW_LOG_WARN, "standby out of rotation", "standby=%d reason=%s", sb->index, why);
	}
	sb->out_until = now + (lws_usec_t) sb->r->retry_ms * LWS_US_PER_MS;
	sb->misses = 0;
	sb->missed_fence = 0;
}

static bool parse_lsn(const char *p, uint64_t *out);

static void
confirm(gw_dbread *r, uint64_t fence)
{
	if (fence > r->newest_fence)
		r->newest_fence = fence;
}

/* The primary's flushed position came back: was the missed fence real? */
static void
verified(void *arg, gw_db_result result, const PGresult *res)
{
	gw_dbread  *r = arg;
	standby    *sb = &r->sbs[r->verify_sb];
	uint64_t	primary;
	lws_usec_t	now = lws_now_usecs();

	r->verify = NULL;
	if (result != GW_DB_OK || PQntuples(res) != 1 || PQgetisnull(res, 0, 0) ||
		!parse_lsn(PQgetvalue(res, 0, 0), &primary))
		return;					/* not known: the standby stays, the next miss asks again */
	if (r->verify_fence <= primary)
	{
		confirm(r, r->verify_fence);
		if (sb->misses >= r->misses_max)
			take_out(sb, "lagging");
		return;
	}

	/*
	 * No commit of bothy's is there yet: the fan-out worker flushes before
	 * it notifies.  The misses counted with it prove nothing: counted
	 * again from none, so that an invented fence neither takes the standby
	 * out nor, as the newest missed, keeps real misses from counting.
	 */
	sb->misses = 0;
	sb->missed_fence = 0;
	gw_read_stats_now.fences_refused++;
	if (r->refused_logged == 0 || now - r->refused_logged >= 10 * LWS_US_PER_SEC)
	{
		gw_log(GW_LOG_WARN, "wal fence beyond the primary's WAL position, standby kept in rotation");
		r->refused_logged = now;
	}
}

/*
 * A read waited --database-read-wait in vain for its fence on sb.  A fence
 * is a claim heard on the channel, not a fact (docs/security.md): the
 * primary is asked whether it had flushed that position, which confirms
 * the fence (the lag gauge) and, once the misses in a row reached
 * --database-read-misses, takes the standby out (verified); meanwhile,
 * and if it had not, the standby stays.  One question at a time; a miss
 * while it runs waits for the next miss.
 */
static void
lagging(standby *sb, uint64_t fence)
{
	gw_dbread  *r = sb->r;

	if (r->verify != NULL)
		return;
	r->verify_sb = (int) (sb - r->sbs);
	r->verify_fence = fence;
	r->verify = gw_db_submit(r->db, "SELECT pg_current_wal_flush_lsn()::text", 0, NULL, verified, r);
}

/*
 * A read's fence was not seen replayed on sb within --database-read-wait:
 * the read goes to the primary, and one such read is a hiccup (a slow
 * flush of the standby's WAL, a busy core: docs/standbys.md, "Why a wait
 * may pass the bound"), after which the standby stays.  Lag is
 * --database-read-misses of them in a row, each of a newer fence than
 * the last counted (the deliveries of the signals of one batch share a
 * fence: one hiccup, one miss), with no read served meanwhile by
 * a standby that had replayed past them (ended).
 */
static void
missed(standby *sb, uint64_t fence)
{
	bool		out = sb->out_until != 0 && lws_now_usecs() < sb->out_until;

	/* a check still running when it left counts for nothing: it comes back with none */
	if (!out && (sb->misses == 0 || fence > sb->missed_fence) && sb->misses < INT_MAX)
	{
		sb->misses++;
		sb->missed_fence = fence;
	}
	lagging(sb, fence);
}

/* The call goes to the primary, counted by why. */
static void
to_primary(gw_db_call *c, gw_read_fallback why)
{
	gw_read_stats_now.fallbacks[why]++;
	gw_db_to_primary(c);
}

/* Frees the slot of its call; the caller decides where the call goes. */
static gw_db_call *
release(rslot *s)
{
	gw_db_call *c = s->call;

	s->call = NULL;
	s->checking = false;
	gw_timer_cancel(&s->t_recheck);
	gw_timer_cancel(&s->t_bound);
	if (c != NULL)
		gw_db_call_read(c)->slot = NULL;
	return c;
}

static bool
send_statement(rslot *s, bool check)
{
	gw_db_call *c = s->call;
	int			nparams;
	const char *const *values;
	const int  *lengths;
	const int  *formats;
	const char *sql;
	int			ok;

	s->checking = check;
	if (check)
		ok = PQsendQuery(s->pc.pg, sql_check);
	else
	{
		sql = gw_db_call_sql(c, &nparams, &values, &lengths, &formats);
		ok = PQsendQueryParams(s->pc.pg, sql, nparams, NULL, values, lengths, formats, 0);
	}
	if (!ok || !gw_pgconn_flush(&s->pc))
		return false;
	s->busy = true;
	return true;
}

/*
 * The bounds of docs/standbys.md, "Waits, fallbacks, rotation", enforced by
 * a timer, not only when an answer arrives: a standby that stopped
 * answering (stopped, blackholed, a stuck backend) must not hold a read
 * until --db-timeout.  A statement in flight stays on its connection (it
 * cannot be cancelled without blocking): the slot stays busy, takes no
 * read, and drops the answer when it comes.  Closing the connection
 * instead would also forget the standby's replay (slot_down), for no gain.
 */
static void
bound_cb(gw_timer *t)
{
	rslot	   *s = lws_container_of(t, rslot, t_bound);
	bool		checking = s->checking;

	if (s->call == NULL)
		return;
	if (checking)
	{
		/* the fence not seen replayed within --database-read-wait */
		missed(s->sb, gw_db_call_read(s->call)->fence);
		to_primary(release(s), GW_READ_FALLBACK_WAIT);
	}
	else
	{
		/* the read itself ran past half of --db-timeout */
		take_out(s->sb, "slow");
		to_primary(release(s), GW_READ_FALLBACK_SLOW);
	}
}

static void
arm_bound(rslot *s, lws_usec_t at, lws_usec_t now)
{
	gw_timer_schedule(&s->t_bound, at > now ? at - now : 1);
}

/* The slot's call: read at once when its fence is seen, else check. */
static void
start(rslot *s)
{
	gw_dbread_call *rc = gw_db_call_read(s->call);
	standby    *sb = s->sb;
	lws_usec_t	now = lws_now_usecs();
	bool		seen = s->seen >= rc->fence && now - s->checked_at < CHECK_MAX_AGE_US;

	/* another connection to the same incarnation saw it replayed */
	if (!seen && s->server[0] != '\0' && strcmp(s->server, sb->server) == 0 &&
		sb->server_replay >= rc->fence && now - sb->server_checked_at < CHECK_MAX_AGE_US)
		seen = true;

	if (rc->wait_from == 0)
	{
		/* the fence's wait starts on a connection: queueing is load, not lag */
		rc->wait_from = now;
		rc->wait_until = rc->wait_from + (lws_usec_t) s->sb->r->wait_ms * LWS_US_PER_MS;
	}
	if (seen)
	{
		confirm(sb->r, rc->fence);
		count_wait((double) (now - rc->wait_from) / 1e6);	/* 0 unless a recheck */
	}
	arm_bound(s, seen ? rc->read_until : rc->wait_until, now);
	if (!send_statement(s, !seen))
	{
		to_primary(release(s), GW_READ_FALLBACK_ERROR);
		gw_pgconn_lost(&s->pc);
	}
}

static void
recheck_cb(gw_timer *t)
{
	rslot	   *s = lws_container_of(t, rslot, t_recheck);

	if (s->call != NULL && !s->busy && s->pc.state == GW_PG_UP)
		start(s);
}

/*
 * "X/Y", upper-case hex as PostgreSQL prints an LSN, strictly: 1 to 8
 * digits each side.
 */
static bool
parse_lsn(const char *p, uint64_t *out)
{
	uint64_t	hi = 0,
				lo = 0;
	int			n = 0;

	for (; *p != '/'; p++, n++)
	{
		if (n >= 8 || !((*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'F')))
			return false;
		hi = hi * 16 + (uint64_t) (*p <= '9' ? *p - '0' : *p - 'A' + 10);
	}
	if (n == 0)
		return false;
	for (p++, n = 0; *p != '\0'; p++, n++)
	{
		if (n >= 8 || !((*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'F')))
			return false;
		lo = lo * 16 + (uint64_t) (*p <= '9' ? *p - '0' : *p - 'A' + 10);
	}
	if (n == 0)
		return false;
	*out = hi << 32 | lo;
	return true;
}

typedef enum check_answer
{
	CHECK_OK,					/* in recovery, replay and incarnation learned */
	CHECK_PROMOTED,				/* a well-formed answer: not in recovery */
	CHECK_WRONG,				/* another database than the primary's */
	CHECK_FAILED				/* an error, or an answer not understood */
} check_answer;

/*
 * What a check's answer tells of the slot's server: its replay position and
 * incarnation, kept for the slot and the standby.  Only a well-formed
 * answer that the server is not in recovery (promoted, or never a standby)
 * takes the standby out of the rotation as not_in_recovery; a failed check
 * (a timeout, a cancel, a broken connection) is the connection's matter.
 */
static check_answer
learn(rslot *s, const PGresult *res, lws_usec_t now, uint64_t *replay_out)
{
	standby    *sb = s->sb;
	uint64_t	replay = 0;

	const char *dbname = gw_db_dbname(sb->r->db);

	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 ||
		PQnfields(res) != 4 || PQgetisnull(res, 0, 1) || PQgetisnull(res, 0, 3) ||
		dbname == NULL)
		return CHECK_FAILED;

	/*
	 * A standby's other database (a dbname typo) would answer from
	 * unrelated data.  A hot standby of another cluster is not told apart
	 * here (docs/standbys.md, "At start").
	 */
	if (strcmp(PQgetvalue(res, 0, 3), dbname) != 0)
	{
		take_out(sb, "wrong_database");
		return CHECK_WRONG;
	}
	if (strcmp(PQgetvalue(res, 0, 1), "f") == 0)
	{
		take_out(sb, "not_in_recovery");
		return CHECK_PROMOTED;
	}
	if (strcmp(PQgetvalue(res, 0, 1), "t") != 0 || PQgetisnull(res, 0, 0) ||
		!parse_lsn(PQgetvalue(res, 0, 0), &replay) || PQgetisnull(res, 0, 2) ||
		PQgetlength(res, 0, 2) >= SERVER_ID_MAX)
		return CHECK_FAILED;
	*replay_out = replay;
	s->checked_at = now;
	if (replay > s->seen)
		s->seen = replay;
	memcpy(s->server, PQgetvalue(res, 0, 2), (size_t) PQgetlength(res, 0, 2) + 1);
	if (strcmp(s->server, sb->server) != 0 || replay < sb->server_replay)
	{
		/* another incarnation, or the same one restarted its recovery */
		memcpy(sb->server, s->server, sizeof(sb->server));
		sb->server_replay = 0;
	}
	if (replay > sb->server_replay)
		sb->server_replay = replay;
	sb->server_checked_at = now;
	return CHECK_OK;
}

/* The check's answer: read now, wait a little more, or go to the primary. */
static void
checked(rslot *s, const PGresult *res)
{
	standby    *sb = s->sb;
	gw_dbread_call *rc = gw_db_call_read(s->call);
	uint64_t	replay = 0;
	lws_usec_t	now = lws_now_usecs();

	switch (learn(s, res, now, &replay))
	{
		case CHECK_PROMOTED:
		case CHECK_WRONG:
			to_primary(release(s), GW_READ_FALLBACK_OUT);
			return;
		case CHECK_FAILED:
			to_primary(release(s), GW_READ_FALLBACK_ERROR);
			return;
		case CHECK_OK:
			break;
	}
	if (now >= rc->wait_until)
	{
		/* an answer past the bound is too late, even one with the fence */
		missed(sb, rc->fence);
		to_primary(release(s), GW_READ_FALLBACK_WAIT);
		return;
	}
	if (s->seen >= rc->fence)
	{
		confirm(sb->r, rc->fence);
		count_wait((double) (now - rc->wait_from) / 1e6);
		arm_bound(s, rc->read_until, now);
		if (!send_statement(s, false))
		{
			to_primary(release(s), GW_READ_FALLBACK_ERROR);
			gw_pgconn_lost(&s->pc);
		}
		return;
	}
	gw_timer_schedule(&s->t_recheck, RECHECK_US);
}

/* A statement of the slot ended with res (the first result; NULL if none). */
static void
ended(rslot *s, PGresult *res)
{
	gw_db_call *c = s->call;
	ExecStatusType st = res != NULL ? PQresultStatus(res) : PGRES_FATAL_ERROR;

	s->busy = false;
	if (c == NULL)
	{
		uint64_t	replay;

		/* the check of a new connection, or a statement past its bound */
		if (s->checking)
			(void) learn(s, res, lws_now_usecs(), &replay);
		s->checking = false;
		return;
	}
	if (s->checking)
	{
		checked(s, res);
		return;
	}
	release(s);
	if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK)
	{
		/*
		 * Served: the misses in a row end, once the standby replayed past
		 * the newest fence it missed (a read of an older fence served
		 * meanwhile says nothing of the lag).
		 */
		if (s->seen >= s->sb->missed_fence)
		{
			s->sb->misses = 0;
			s->sb->missed_fence = 0;
		}
		gw_read_stats_now.standby_reads++;
		gw_db_finish(c, GW_DB_OK, res);
	}
	else
	{
		/* a recovery conflict, say: the primary answers instead, once */
		to_primary(c, GW_READ_FALLBACK_ERROR);
	}
}

static void
slot_io(gw_pgconn *pc)
{
	rslot	   *s = pc->owner;
	PGconn	   *pg = pc->pg;
	gw_dbread  *r = s->sb->r;

	if (!gw_pgconn_read(pc))
	{
		gw_pgconn_lost(pc);
		return;
	}
	while (s->busy && gw_pgconn_ended(pc, &s->first))
	{
		PGresult   *res;

		res = s->first;
		s->first = NULL;
		ended(s, res);
		if (res != NULL)
			PQclear(res);
		if (pc->state != GW_PG_UP || pc->pg != pg)
			return;
	}
	if (PQstatus(pg) == CONNECTION_BAD)
	{
		gw_pgconn_lost(pc);
		return;
	}
	dispatch(r);
}

static void
slot_up(gw_pgconn *pc)
{
	rslot	   *s = pc->owner;

	s->seen = 0;				/* a standby started again may have replayed less */
	s->server[0] = '\0';		/* and is another incarnation, known at the first check */
	s->sb->warned = false;
	if (!s->sb->was_up)
		gw_logf(GW_LOG_INFO, "standby connection open", "standby=%d", s->sb->index);
	s->sb->was_up = true;

	/*
	 * A check at once: the connection learns its server's incarnation and
	 * replay position before it takes reads, so the deliveries of a batch
	 * rarely need a check of their own (and a server that is no standby
	 * leaves the rotation before any read).
	 */
	if (!send_statement(s, true))
	{
		gw_pgconn_lost(pc);
		return;
	}
}

static void
slot_down(gw_pgconn *pc)
{
	rslot	   *s = pc->owner;
	standby    *sb = s->sb;
	gw_db_call *c;
	int			i;
	bool		up = false;

	s->busy = false;
	if (s->first != NULL)
	{
		PQclear(s->first);
		s->first = NULL;
	}
	c = release(s);

	/*
	 * A lost connection may be a crash of the server (its postmaster
	 * reinitialises with the same start time and replays again from its
	 * last restartpoint): what any connection saw no longer serves others.
	 */
	sb->server[0] = '\0';
	sb->server_replay = 0;
	for (i = 0; i < sb->nslots; i++)
		if (sb->slots[i].pc.state == GW_PG_UP)
			up = true;
	if (sb->was_up && !up)
	{
		gw_logf(GW_LOG_WARN, "standby connection lost", "standby=%d", sb->index);
		sb->was_up = false;
	}
	if (c != NULL)
		to_primary(c, GW_READ_FALLBACK_ERROR);
	dispatch(sb->r);
}

static void
slot_failed(gw_pgconn *pc)
{
	rslot	   *s = pc->owner;

	if (!s->sb->was_up && !s->sb->warned)
	{
		gw_logf(GW_LOG_WARN, "standby unreachable, its reads go to the primary",
				"standby=%d", s->sb->index);
		s->sb->warned = true;
	}
	dispatch(s->sb->r);
}

static const gw_pgconn_ops rslot_ops = {slot_up, slot_io, slot_down, slot_failed};

/* An idle connection of a standby in rotation, round robin; NULL if none. */
static rslot *
idle_slot(gw_dbread *r, lws_usec_t now, bool *any)
{
	int			k,
				i;

	*any = false;
	for (k = 0; k < r->n; k++)
	{
		standby    *sb = &r->sbs[(r->next + k) % r->n];

		if (!in_rotation(sb, now))
			continue;
		*any = true;
		for (i = 0; i < sb->nslots; i++)
			if (sb->slots[i].pc.state == GW_PG_UP && sb->slots[i].call == NULL &&
				!sb->slots[i].busy)
			{
				r->next = (r->next + k + 1) % r->n;
				return &sb->slots[i];
			}
	}
	return NULL;
}

/*
 * A read found no free connection within --database-read-wait: that is
 * load, not lag, unless every connection of a standby is still held by a
 * statement past its bound (a check or read that never answered: a
 * standby stopped, or unreachable behind open connections).  Such a
 * standby missed this read's fence too: with fewer connections than
 * --database-read-misses it would otherwise never miss enough.
 */
static void
stuck(gw_dbread *r, uint64_t fence, lws_usec_t now)
{
	int			k,
				i;

	for (k = 0; k < r->n; k++)
	{
		standby    *sb = &r->sbs[k];
		bool		held = true;

		if (!in_rotation(sb, now))
			continue;
		for (i = 0; i < sb->nslots; i++)
			if (sb->slots[i].pc.state == GW_PG_UP &&
				!(sb->slots[i].busy && sb->slots[i].call == NULL))
				held = false;
		if (held)
			missed(sb, fence);
	}
}

/*
 * Hands queued calls to idle connections of standbys in rotation; with no
 * standby in rotation every queued call goes to the primary.  A call
 * waiting for a free connection is load, not lag: it waits (--db-timeout
 * bounds it), and so the primary is spared the reads the standbys are
 * slow with.
 */
static void
queue_cb(gw_timer *t)
{
	dispatch(lws_container_of(t, gw_dbread, t_queue));
}

static void
dispatch(gw_dbread *r)
{
	lws_usec_t	now = lws_now_usecs();
	lws_usec_t	wait = (lws_usec_t) r->wait_ms * LWS_US_PER_MS;

	gw_timer_cancel(&r->t_queue);
	while (r->queue.head != NULL)
	{
		gw_db_call *c = gw_db_call_of_link(r->queue.head);
		bool		any;
		rslot	   *s;

		if (now - gw_db_call_read(c)->queued_at >= wait)
		{
			/* no free connection within --database-read-wait: load, not lag */
			lws_dll2_remove(r->queue.head);
			stuck(r, gw_db_call_read(c)->fence, now);
			to_primary(c, GW_READ_FALLBACK_BUSY);
			continue;
		}
		s = idle_slot(r, now, &any);
		if (!any)
		{
			lws_dll2_remove(r->queue.head);
			to_primary(c, GW_READ_FALLBACK_OUT);
			continue;
		}
		if (s == NULL)
		{
			/* the oldest first: the calls share one wait */
			gw_timer_schedule(&r->t_queue, gw_db_call_read(c)->queued_at + wait - now);
			break;
		}
		lws_dll2_remove(r->queue.head);
		s->call = c;
		gw_db_call_read(c)->slot = s;
		start(s);
	}
}

bool
gw_dbread_take(gw_dbread *r, gw_dbread_call *rc)
{
	gw_db_call *c = gw_db_call_of_read(rc);
	lws_usec_t	now = lws_now_usecs();
	int			k;
	bool		any = false;

	for (k = 0; k < r->n; k++)
		if (in_rotation(&r->sbs[k], now))
			any = true;
	if (!any)
	{
		gw_read_stats_now.fallbacks[GW_READ_FALLBACK_OUT]++;
		return false;
	}
	rc->wait_from = 0;
	rc->queued_at = now;
	rc->slot = NULL;
	lws_dll2_add_tail(gw_db_call_link(c), &r->queue);
	dispatch(r);
	return true;
}

void
gw_dbread_detach(gw_db_call *c)
{
	rslot	   *s = gw_db_call_read(c)->slot;

	release(s);
	if (s->busy)
	{
		s->busy = false;
		gw_pgconn_lost(&s->pc);	/* the statement cannot be cancelled without blocking */
	}
	else
		dispatch(s->sb->r);		/* the slot is free for a queued read */
}

bool
gw_dbread_check(const char *conninfo, char *err, size_t errlen)
{
	char	   *msg = NULL;
	PQconninfoOption *opts = PQconninfoParse(conninfo, &msg);

	if (opts == NULL)
	{
		/* libpq's reason may quote the conninfo, which may hold a password */
		snprintf(err, errlen, "--database-read is not a valid libpq connection string");
		PQfreemem(msg);
		return false;
	}
	PQconninfoFree(opts);
	return true;
}

gw_dbread *
gw_dbread_create(gw_db *db, struct lws_context *context, struct lws_vhost *vhost,
				 const char *const *conninfo, int n, int pool, int wait_ms, int retry_ms,
				 int misses, int connect_timeout_ms, const int *backoff_ms)
{
	gw_dbread  *r = calloc(1, sizeof(*r));
	int			k,
				i;

	if (r == NULL || (r->sbs = calloc((size_t) n, sizeof(standby))) == NULL)
	{
		free(r);
		return NULL;
	}
	gw_timer_init(&r->t_queue, queue_cb);
	r->db = db;
	r->n = n;
	r->wait_ms = wait_ms;
	r->retry_ms = retry_ms;
	r->misses_max = misses;
	for (k = 0; k < n; k++)
	{
		standby    *sb = &r->sbs[k];

		sb->r = r;
		sb->index = k + 1;
		sb->nslots = pool;
		sb->slots = calloc((size_t) pool, sizeof(rslot));
		if (sb->slots == NULL)
		{
			gw_dbread_destroy(r);
			return NULL;
		}
	}
	for (k = 0; k < n; k++)
		for (i = 0; i < pool; i++)
		{
			rslot	   *s = &r->sbs[k].slots[i];

			s->sb = &r->sbs[k];
			gw_timer_init(&s->t_recheck, recheck_cb);
			gw_timer_init(&s->t_bound, bound_cb);
			gw_pgconn_start(&s->pc, context, vhost, conninfo[k], "bothy-gateway-read",
							backoff_ms, connect_timeout_ms, &rslot_ops, s);
		}
	gw_db_set_reads(db, r);
	gw_dbread_current = r;
	return r;
}

void
gw_dbread_metrics(gw_metrics_out *out)
{
	gw_dbread  *r = NULL;
	uint64_t	cumulative = 0;
	lws_usec_t	now = lws_now_usecs();
	int			i;

	gw_metrics_counter(out, "bothy_gateway_standby_reads_total",
					   "Read calls a standby answered.", gw_read_stats_now.standby_reads);
	gw_metrics_counter(out, "bothy_gateway_standby_fences_refused_total",
					   "Fences a read missed on a standby that lay beyond the primary's flushed WAL: the standby stayed in rotation.",
					   gw_read_stats_now.fences_refused);
	gw_metrics_header(out, "bothy_gateway_standby_fallbacks_total", "counter",
					  "Read calls with a fence the primary answered, by why.");
	for (i = 0; i < GW_READ_FALLBACK_COUNT; i++)
		gw_metrics_put(out, "bothy_gateway_standby_fallbacks_total{reason=\"%s\"} %llu\n",
					   fallback_names[i], (unsigned long long) gw_read_stats_now.fallbacks[i]);
	gw_metrics_header(out, "bothy_gateway_standby_fence_wait_seconds", "histogram",
					  "From a read's first check on a standby to its fence seen replayed.");
	for (i = 0; i < GW_N_READ_WAIT_BUCKETS; i++)
	{
		cumulative += gw_read_stats_now.wait_bucket[i];
		gw_metrics_put(out, "bothy_gateway_standby_fence_wait_seconds_bucket{le=\"%g\"} %llu\n",
					   wait_buckets[i], (unsigned long long) cumulative);
	}
	gw_metrics_put(out, "bothy_gateway_standby_fence_wait_seconds_bucket{le=\"+Inf\"} %llu\n",
				   (unsigned long long) gw_read_stats_now.wait_count);
	gw_metrics_put(out, "bothy_gateway_standby_fence_wait_seconds_sum %.6f\n",
				   gw_read_stats_now.wait_seconds_sum);
	gw_metrics_put(out, "bothy_gateway_standby_fence_wait_seconds_count %llu\n",
				   (unsigned long long) gw_read_stats_now.wait_count);
	r = gw_dbread_current;
	gw_metrics_header(out, "bothy_gateway_standby_in_rotation", "gauge",
					  "1 while the standby (numbered in --database-read order) takes reads.");
	for (i = 0; r != NULL && i < r->n; i++)
		gw_metrics_put(out, "bothy_gateway_standby_in_rotation{standby=\"%d\"} %d\n",
					   r->sbs[i].index, in_rotation(&r->sbs[i], now) ? 1 : 0);
	gw_metrics_header(out, "bothy_gateway_standby_fence_misses", "gauge",
					  "Fence waits the standby missed in a row; it leaves the rotation at "
					  "--database-read-misses.");
	for (i = 0; r != NULL && i < r->n; i++)
		gw_metrics_put(out, "bothy_gateway_standby_fence_misses{standby=\"%d\"} %d\n",
					   r->sbs[i].index, r->sbs[i].misses);
	gw_metrics_header(out, "bothy_gateway_standby_lag_bytes", "gauge",
					  "WAL bytes between the newest fence a read carried and the standby's "
					  "highest replay seen; absent while no connection knows its replay.");
	for (i = 0; r != NULL && i < r->n; i++)
	{
		standby    *sb = &r->sbs[i];

		/* computed now, from the replay of the server reached (docs/standbys.md) */
		if (sb->server[0] == '\0')
			continue;
		gw_metrics_put(out, "bothy_gateway_standby_lag_bytes{standby=\"%d\"} %llu\n",
					   sb->index, (unsigned long long) (r->newest_fence > sb->server_replay ?
														r->newest_fence - sb->server_replay : 0));
	}
}

void
gw_dbread_destroy(gw_dbread *r)
{
	int			k,
				i;

	if (r == NULL)
		return;
	gw_db_cancel(r->verify);	/* the pool outlives the standbys (server.c) */
	for (k = 0; k < r->n; k++)
	{
		standby    *sb = &r->sbs[k];

		for (i = 0; sb->slots != NULL && i < sb->nslots; i++)
		{
			rslot	   *s = &sb->slots[i];
			gw_db_call *c;

			if (s->sb == NULL)
				continue;		/* never started */
			gw_pgconn_stop(&s->pc);
			if (s->first != NULL)
				PQclear(s->first);
			c = release(s);
			if (c != NULL)
				gw_db_drop(c);
		}
		free(sb->slots);
	}
	while (r->queue.head != NULL)
		gw_db_drop(gw_db_call_of_link(r->queue.head));
	gw_timer_cancel(&r->t_queue);
	if (gw_dbread_current == r)
		gw_dbread_current = NULL;
	gw_db_set_reads(r->db, NULL);
	free(r->sbs);
	free(r);
}
