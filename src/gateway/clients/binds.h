/*
 * clients/binds.h
 *		The device binds of person identifies and resumes, in batches
 *		(D-M7-17-3): the binds waiting when a call can go are sent together
 *		in one call of bothy.device_bind_batch, so that a reconnect storm
 *		costs the database one transaction and one commit per batch instead
 *		of one per client.
 *
 * A lone identify still goes at once: a batch is sent whenever fewer than
 * GW_BINDS_CALLS are running, and takes every bind waiting then (at most
 * GW_BINDS_BATCH).  While batches run, the binds that arrive meanwhile
 * wait for the next one.
 */
#ifndef BOTHY_GATEWAY_BINDS_H
#define BOTHY_GATEWAY_BINDS_H

#include "clients/client.h"

/* Batch calls running at once, and binds in one call. */
#define GW_BINDS_CALLS 2
#define GW_BINDS_BATCH 1000

/*
 * Binds c's device to its session (c: a person connection identifying,
 * session, principal and device set); gw_session_bound answers it, at
 * once when the call cannot be made.
 */
void		gw_binds_add(gw_client *c);

/* c goes away: its bind is not sent, or its answer not handed over. */
void		gw_binds_forget(gw_client *c);

/* The pool goes with its calls (the route's forget): drop every batch unanswered. */
void		gw_binds_stop(void);

#endif							/* BOTHY_GATEWAY_BINDS_H */
