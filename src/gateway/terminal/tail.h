/*
 * terminal/tail.h
 *		The terminal log tail of this node (docs/terminal.md, "The
 *		terminal log"): it starts from bothy.terminal_log_head(), reads
 *		bothy.terminal_log_after(its last number) when terminal.log wakes
 *		it and every bothy.terminal_log_poll_interval, and hands each row,
 *		parsed strictly (model.h), in number order to the control plane and
 *		then to the relay (gw_relay_observe).
 *
 * One read at a time; a wake-up during a read reads again after it, and
 * a full batch is followed by the next at once.  After a listener loss
 * nothing is special: the tail goes on from its last number, which no
 * row that commits later can be below (the log's numbering).  A read
 * that fails is retried at the next poll.  An answer that skips numbers
 * (rows pruned before this node read them) makes the route reconcile
 * from the states (gw_terminal_reconcile).
 */
#ifndef BOTHY_GATEWAY_TERMINAL_TAIL_H
#define BOTHY_GATEWAY_TERMINAL_TAIL_H

#include <stdbool.h>
#include <stdint.h>

/* Rows read per call (bothy.terminal_log_after allows up to 1000). */
#define GW_TTAIL_BATCH 500

/* The node started: read the head, then poll. */
void		gw_ttail_start(void);

/*
 * terminal.log with seq, or 0 for "something committed" (single mode,
 * gw_terminal_committed): read now unless seq is already read.
 */
void		gw_ttail_wake(int64_t seq);

/* The stop began: no read starts any more. */
void		gw_ttail_stop(void);

/* The loop ended: the timer is cancelled and the running read forgotten. */
void		gw_ttail_forget(void);

/* No read runs. */
bool		gw_ttail_idle(void);

#endif							/* BOTHY_GATEWAY_TERMINAL_TAIL_H */
