/*
 * core/dbread.h
 *		Reads on hot standbys (--database-read): the read-only calls of
 *		deliveries, each answered by a standby only once that standby has
 *		replayed the call's fence, else by the primary (docs/standbys.md).
 *
 * The query pool (db.c) owns every call; a call submitted with a fence
 * (gw_db_submit_read) is handed here, and comes back to the primary's
 * queue when no standby can answer it in time.  Each call ends exactly
 * once, on one server or the other: a standby never answers a call the
 * primary answers too, so no delivery is lost or doubled by the detour.
 */
#ifndef BOTHY_GATEWAY_DBREAD_H
#define BOTHY_GATEWAY_DBREAD_H

#include <stdbool.h>
#include <stdint.h>

#include <libpq-fe.h>
#include <libwebsockets.h>

#include "core/metrics.h"

typedef struct gw_db gw_db;
typedef struct gw_db_call gw_db_call;
typedef struct gw_dbread gw_dbread;

/* What a call carries for this module (a member of gw_db_call). */
typedef struct gw_dbread_call
{
	uint64_t	fence;			/* the WAL position a standby must have replayed; 0: none */
	lws_usec_t	wait_from;		/* its first check began; 0: still queued */
	lws_usec_t	wait_until;		/* wait_from + --database-read-wait: then the primary answers */
	lws_usec_t	queued_at;		/* handed to the standbys; a free connection within
								 * --database-read-wait, else the primary answers */
	lws_usec_t	read_until;		/* set by db.c: half of --db-timeout after submission;
								 * a read on a standby still running then goes to the
								 * primary, which has the other half */
	void	   *slot;			/* the standby connection it is on, or NULL */
} gw_dbread_call;

/* The standbys' counters (/metrics, docs/gateway.md). */
#define GW_READ_WAIT_BUCKETS {0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05}
#define GW_N_READ_WAIT_BUCKETS 8

typedef enum gw_read_fallback
{
	GW_READ_FALLBACK_WAIT = 0,	/* the standby had not replayed the fence in time */
	GW_READ_FALLBACK_OUT,		/* no standby in rotation */
	GW_READ_FALLBACK_ERROR,		/* the standby failed the call or its connection */
	GW_READ_FALLBACK_BUSY,		/* no free standby connection within the wait */
	GW_READ_FALLBACK_SLOW,		/* the read on the standby ran past half of --db-timeout */
	GW_READ_FALLBACK_UNFENCED,	/* a delivery's read with no fence (a fallback NOTIFY's,
								 * or an extension older than 0.3.0) */
	GW_READ_FALLBACK_COUNT
} gw_read_fallback;

typedef struct gw_read_stats
{
	uint64_t	standby_reads;	/* answered by a standby */
	uint64_t	fences_refused;	/* missed fences beyond the primary's flushed WAL: nobody's commit */
	uint64_t	fallbacks[GW_READ_FALLBACK_COUNT];
	uint64_t	wait_bucket[GW_N_READ_WAIT_BUCKETS];	/* fence waits, not cumulative */
	uint64_t	wait_count;
	double		wait_seconds_sum;
} gw_read_stats;

extern gw_read_stats gw_read_stats_now;

/* The node's standbys, or NULL (for /metrics). */
extern gw_dbread *gw_dbread_current;

/*
 * Connects pool connections to each conninfo (checked already with
 * gw_dbread_check) and attaches them to db.  misses: the fence waits
 * missed in a row that take a standby out (--database-read-misses).
 * NULL when out of memory.
 */
gw_dbread  *gw_dbread_create(gw_db *db, struct lws_context *context, struct lws_vhost *vhost,
							 const char *const *conninfo, int n, int pool,
							 int wait_ms, int retry_ms, int misses, int connect_timeout_ms,
							 const int *backoff_ms);

/* A conninfo libpq can parse; false with a reason (never the conninfo) in err. */
bool		gw_dbread_check(const char *conninfo, char *err, size_t errlen);

/* Takes a call with a fence: false when it goes to the primary at once. */
bool		gw_dbread_take(gw_dbread *r, gw_dbread_call *call);

/* The call's deadline (--db-timeout) passed while a standby held it. */
void		gw_dbread_detach(gw_db_call *c);

/* The families of /metrics: fallbacks, waits, each standby's state and lag. */
void		gw_dbread_metrics(gw_metrics_out *out);

/* Closes every standby connection and drops the calls it holds. */
void		gw_dbread_destroy(gw_dbread *r);

/* --- db.c's side, for this module only -------------------------------- */
void		gw_db_finish(gw_db_call *c, gw_db_result result, const PGresult *res);
void		gw_db_to_primary(gw_db_call *c);
void		gw_db_drop(gw_db_call *c);
void		gw_db_set_reads(gw_db *db, gw_dbread *reads);
const char *gw_db_dbname(const gw_db *db);
gw_dbread_call *gw_db_call_read(gw_db_call *c);
gw_db_call *gw_db_call_of_read(gw_dbread_call *r);
lws_dll2_t *gw_db_call_link(gw_db_call *c);
gw_db_call *gw_db_call_of_link(lws_dll2_t *link);
const char *gw_db_call_sql(const gw_db_call *c, int *nparams, const char *const **values,
						   const int **lengths, const int **formats);

#endif							/* BOTHY_GATEWAY_DBREAD_H */
