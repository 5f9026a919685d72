/*
 * clients/audience.h
 *		Who may see a thread, asked of the seam (bothy.thread_audience) at
 *		every delivery (D-M7-17-5: a person removed from a place stops
 *		receiving its events at once, also those from other nodes), in
 *		parts, so that the first admitted persons receive the event while
 *		the database still reads the rest.
 *
 * The persons asked about are those connected to this node
 * (gw_local_persons), so a delivery's calls follow the node's distinct
 * persons, never the cluster's.  The first GW_AUDIENCE_FIRST go in the
 * caller's "head" statement, which also reads what the event needs (the
 * thread's place, the run document); once it answered and the caller
 * delivered to its persons, the rest follow in parts of at most
 * GW_AUDIENCE_PART, one pool call each, all queued at once (the pool runs
 * up to --db-pool of them side by side), each delivered as it answers.
 * A head that fails or is refused (an unknown run, a sender not admitted)
 * costs no further call.  Nothing about admission is kept after the
 * delivery.
 */
#ifndef BOTHY_GATEWAY_AUDIENCE_H
#define BOTHY_GATEWAY_AUDIENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "uuid.h"

#define GW_AUDIENCE_FIRST 64	/* persons in the first part, the head's */
#define GW_AUDIENCE_PART 1000	/* persons in each further part, at most */

/*
 * The admitted persons of one part, and the tail of a head statement's
 * select list that gives them: the head's last column.  Parameters $N and
 * $N+1 are the thread and the part's persons, N being one more than the
 * caller's own parameters.
 */
#define GW_AUDIENCE_COLUMN(thread, persons) \
	"(SELECT string_agg(p::text, ',') FROM bothy.thread_audience(" thread "::uuid, " \
	persons "::uuid[]) AS p)"

typedef struct gw_audience_call gw_audience_call;

typedef struct gw_audience_ops
{
	/*
	 * The head answered, first of all: ok false when it failed (res is
	 * NULL or the error; nothing is delivered).  Otherwise res has one row
	 * whose last column was parsed into admitted (the first part's
	 * persons); the caller reads its own columns before it and delivers to
	 * admitted.  Returning false delivers nothing more.
	 */
	bool		(*head) (void *arg, bool ok, const PGresult *res,
						 const bothy_uuid *admitted, size_t n);
	/* Another part's admitted persons, after the head returned true. */
	void		(*part) (void *arg, const bothy_uuid *admitted, size_t n);
	/*
	 * Exactly once, last: every part answered, failed or was dropped.
	 * failed counts the parts (the head included) whose call failed.
	 */
	void		(*done) (void *arg, int failed);
} gw_audience_ops;

/*
 * Asks about the n persons (copied; at least one) with head_sql (a
 * constant, the caller's nparams text params first, then the thread and
 * the first part's persons) for the first part.  NULL when the head could
 * not be queued: no callback is then called.  A later part that cannot be
 * queued counts as failed.  fence: the WAL fence of the signals delivered
 * (gw_listener_fence), so that a standby may answer every part once it
 * replayed it (docs/standbys.md); 0 when unknown: the primary answers.
 */
gw_audience_call *gw_audience_ask(const char *head_sql, int nparams, const char *const *params,
								  const bothy_uuid *thread, const bothy_uuid *persons,
								  size_t n, uint64_t fence, const gw_audience_ops *ops,
								  void *arg);

/*
 * gw_audience_ask with the thread's place as the head (typing, hints), with
 * the fence of the signal whose hook runs now (none outside one): in
 * the head callback, gw_audience_place reads it from res (false when the
 * answer is not a UUID; *place NULL for a thread the seam does not know).
 */
gw_audience_call *gw_audience_ask_place(const bothy_uuid *thread, const bothy_uuid *persons,
										size_t n, const gw_audience_ops *ops, void *arg);
bool		gw_audience_place(const PGresult *res, bothy_uuid *buf, const bothy_uuid **place);

/* The caller goes away: no callback is called any more (not from inside one). */
void		gw_audience_cancel(gw_audience_call *call);

#endif							/* BOTHY_GATEWAY_AUDIENCE_H */
