/*
 * core/db.h
 *		The query pool: a few asynchronous libpq connections on the loop
 *		and one FIFO of calls, each with a deadline (--db-timeout) that
 *		covers its wait in the queue and its run.
 *
 * A database outage never closes a client: its calls wait in the queue,
 * time out with GW_DB_TIMEOUT (one log record each) and the connections
 * reconnect by themselves.  The gateway calls only bothy.* functions.
 */
#ifndef BOTHY_GATEWAY_DB_H
#define BOTHY_GATEWAY_DB_H

#include <stdbool.h>
#include <stdint.h>

#include <libpq-fe.h>
#include <libwebsockets.h>

#include "core/metrics.h"
#include "uuid.h"

#define GW_DB_MAX_PARAMS 8
#define GW_DB_MAX_QUEUE 100000	/* calls waiting at once; more are refused */
#define GW_DB_MAX_BACKGROUND 1000	/* background calls waiting at once; more are refused */

typedef struct gw_db gw_db;
typedef struct gw_db_call gw_db_call;

/*
 * The outcome of a call.  res is the first result (GW_DB_OK: tuples or
 * command ok; GW_DB_ERROR: the error, or NULL when the connection broke),
 * valid during the callback only; NULL on GW_DB_TIMEOUT.
 */
typedef void (*gw_db_cb) (void *arg, gw_db_result result, const PGresult *res);

gw_db	   *gw_db_create(struct lws_context *context, struct lws_vhost *vhost,
						 const char *conninfo, int pool, int timeout_ms,
						 const int *backoff_ms);

/*
 * Queues sql (a constant string) with text params (copied; NULL is SQL
 * NULL).  NULL when the queue is full or memory ran out: cb is then never
 * called.  Otherwise cb is called exactly once, unless cancelled first.
 */
gw_db_call *gw_db_submit(gw_db *db, const char *sql, int nparams,
					   const char *const *params, gw_db_cb cb, void *arg);

/*
 * A parameter of gw_db_submit_params: text when length is negative (value
 * NUL-terminated), binary otherwise (length bytes in the type's send
 * format); value NULL is SQL NULL.
 */
typedef struct gw_db_param
{
	const char *value;
	int			length;
} gw_db_param;

/* gw_db_submit with parameters of either format (copied). */
gw_db_call *gw_db_submit_params(gw_db *db, const char *sql, int nparams,
								const gw_db_param *params, gw_db_cb cb, void *arg);

/*
 * gw_db_submit_params of a read-only call (docs/sql-api.md marks them) that
 * a standby may answer once it has replayed fence (docs/standbys.md): with
 * no --database-read, or fence 0 (unknown), the primary answers it.
 */
gw_db_call *gw_db_submit_read(gw_db *db, uint64_t fence, const char *sql, int nparams,
							  const gw_db_param *params, gw_db_cb cb, void *arg);

/*
 * Between begin and end, calls submitted are background calls: work a
 * signal caused, which waits behind every client's call and never holds
 * all the slots; past GW_DB_MAX_BACKGROUND waiting, submit returns NULL
 * (counted in bothy_gateway_db_background_refused_total).  The listener
 * hands every signal to the routes inside such a scope, and the callback
 * of a background call runs inside one, so what a signal sets going stays
 * background to its end.  Nests.
 */
void		gw_db_background_begin(void);
void		gw_db_background_end(void);

/* The caller goes away: cb is not called.  A running call finishes unseen. */
void		gw_db_cancel(gw_db_call *call);

/*
 * A boolean of an answer, strictly: row 0, column col holds exactly "t" or
 * "f" (NULL or anything else is false, with one log record).
 * gw_db_bool: a one-row, one-column answer.
 */
bool		gw_db_bool_at(const PGresult *res, int col, bool *value);
bool		gw_db_bool(const PGresult *res, bool *value);

/*
 * A UUID column of a row, strictly (bothy_uuid_parse): false when it is
 * NULL or not a UUID's text.  Logs nothing; each caller says what the row
 * was for.
 */
bool		gw_db_uuid_at(const PGresult *res, int row, int col, bothy_uuid *out);

/* At least one query connection is open. */
bool		gw_db_up(const gw_db *db);

/* Calls waiting or running. */
int			gw_db_pending(const gw_db *db);

/* Closes every connection; calls still queued are dropped unseen. */
void		gw_db_destroy(gw_db *db);

#endif							/* BOTHY_GATEWAY_DB_H */
