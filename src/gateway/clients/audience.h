/*
 * clients/audience.h
 *		Who may see a thread: one asynchronous database call that asks the
 *		seam (bothy.thread_place and bothy.thread_audience) about a list of
 *		persons, at every delivery (D-M7-17-5: a person removed from a place
 *		stops receiving its events at once, also those from other nodes).
 *
 * The persons asked about are those connected to this node
 * (gw_local_persons), so a delivery costs one call whose size follows the
 * node's distinct persons, never the cluster's.
 */
#ifndef BOTHY_GATEWAY_AUDIENCE_H
#define BOTHY_GATEWAY_AUDIENCE_H

#include <stdbool.h>
#include <stddef.h>

#include "uuid.h"

typedef struct gw_audience_call gw_audience_call;

/*
 * The answer: ok false when the database could not answer (the event is
 * then not delivered: lost, as a lost signal).  place is NULL for a thread
 * the seam does not know; admitted holds the persons who may see it.
 * Valid during the callback only.
 */
typedef void (*gw_audience_cb) (void *arg, bool ok, const bothy_uuid *place,
								const bothy_uuid *admitted, size_t n);

/*
 * Asks about the n persons (copied).  NULL when the call could not be
 * queued: cb is then never called.  Otherwise cb is called exactly once,
 * unless cancelled first.
 */
gw_audience_call *gw_audience_ask(const bothy_uuid *thread, const bothy_uuid *persons,
								  size_t n, gw_audience_cb cb, void *arg);

/* The caller goes away: cb is not called. */
void		gw_audience_cancel(gw_audience_call *call);

#endif							/* BOTHY_GATEWAY_AUDIENCE_H */
