/*
 * clients/audience.h
 *		Who may see a thread, asked of the seam at every delivery
 *		(D-M7-17-5: a person removed from a place stops receiving its events
 *		at once, also those from other nodes), in one call that also reads
 *		what the event needs.
 *
 * A delivery asks about this node's persons by naming the node:
 * bothy.thread_audience_on(thread, node) intersects the thread's audience
 * with the persons whose devices are bound to this node, in the database
 * (src/extension/members_here.c), so the call costs what the audience
 * here costs, not what everyone connected here costs, and the node sends
 * no list of its persons (docs/gateway.md, "Cross-node delivery").  A
 * hint asks about its one recipient with bothy.thread_audience instead.
 * A call that fails or is refused delivers nothing; nothing about
 * admission is kept after the delivery.
 */
#ifndef BOTHY_GATEWAY_AUDIENCE_H
#define BOTHY_GATEWAY_AUDIENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "uuid.h"

/*
 * The admitted persons here, the tail of a call's select list: its last
 * column.  Parameters $N and $N+1 are the thread and this node's ID, N
 * being one more than the caller's own parameters.
 */
#define GW_AUDIENCE_HERE_COLUMN(thread, node) \
	"(SELECT string_agg(p::text, ',') FROM bothy.thread_audience_on(" thread "::uuid, " \
	node "::uuid) AS p)"

typedef struct gw_audience_call gw_audience_call;

/*
 * The call answered, failed or timed out, exactly once: ok false when it
 * failed (res is NULL or the error).  Otherwise res has one row whose
 * last column was parsed into admitted; the caller reads its own columns
 * before it.
 */
typedef void (*gw_audience_answer) (void *arg, bool ok, const PGresult *res,
									const bothy_uuid *admitted, size_t n);

/*
 * Asks sql (a constant: the caller's nparams text params first, then the
 * thread, then this node's ID) once.  NULL when it could not be queued:
 * answer is then not called.  fence: the WAL fence of the signals
 * delivered (gw_listener_fence), so that a standby may answer once it
 * replayed it (docs/standbys.md); 0 when unknown: the primary answers.
 */
gw_audience_call *gw_audience_ask_here(const char *sql, int nparams, const char *const *params,
									   const bothy_uuid *thread, uint64_t fence,
									   gw_audience_answer answer, void *arg);

/*
 * The thread's place, then the recipient admitted or not (hints), with
 * the fence of the signal whose hook runs now: in the answer,
 * gw_audience_place reads the place from res (false when the answer is
 * not a UUID; *place NULL for a thread the seam does not know).
 */
gw_audience_call *gw_audience_ask_recipient(const bothy_uuid *thread, const bothy_uuid *recipient,
											gw_audience_answer answer, void *arg);
bool		gw_audience_place(const PGresult *res, bothy_uuid *buf, const bothy_uuid **place);

/* The caller goes away: answer is not called any more (not from inside it). */
void		gw_audience_cancel(gw_audience_call *call);

#endif							/* BOTHY_GATEWAY_AUDIENCE_H */
