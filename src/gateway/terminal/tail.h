/*
 * terminal/tail.h
 *		The terminal log tail of this node (docs/terminal.md, "The
 *		terminal log"): it starts from bothy.terminal_log_head(), reads
 *		bothy.terminal_log_after(its last number) when terminal.log wakes
 *		it and every bothy.terminal_log_poll_interval, and hands each row,
 *		parsed strictly (model.h), in number order to the row hook route.c
 *		hands in at init (the control plane, then the relay).
 *
 * One read at a time; a wake-up during a read reads again after it, and
 * a full batch is followed by the next at once.  After a listener loss
 * nothing is special: the tail goes on from its last number, which no
 * row that commits later can be below (the log's numbering).  A read
 * that fails is retried at the next poll.  An answer that skips numbers
 * (rows pruned before this node read them) calls the gap hook: the route
 * reconciles from the states (D-M2-47-5).
 *
 * The tail sees only the shared ground (model.h) and the core: what it
 * calls is handed in, so that no wing calls up into it and it calls up
 * into no wing (docs/development.md, "The gateway's rooms").
 */
#ifndef BOTHY_GATEWAY_TERMINAL_TAIL_H
#define BOTHY_GATEWAY_TERMINAL_TAIL_H

#include <stdbool.h>
#include <stdint.h>

#include "terminal/model.h"

struct gw_metrics_out;

/* Rows read per call (bothy.terminal_log_after allows up to 1000). */
#define GW_TTAIL_BATCH 500

/* What the tail calls, set by the route before the node starts. */
typedef struct gw_ttail_hooks
{
	void		(*row) (const gw_tlog_row *row);	/* each row parsed, in number order */
	void		(*gap) (void);	/* after an answer that skipped numbers */
} gw_ttail_hooks;

/* The tail's counters, in /metrics through gw_ttail_metrics. */
typedef struct gw_ttail_stats_t
{
	uint64_t	rows[GW_TLOG_HOST_DISABLED + 1];	/* by transition */
	uint64_t	rows_dropped;
	uint64_t	gaps;			/* reads that found numbers missing: reconciled */
	uint64_t	read_failures;
	int64_t		seq;			/* the last number the tail read */
} gw_ttail_stats_t;

extern gw_ttail_stats_t gw_ttail_stats;

/* hooks (kept, not copied) and both of its calls set. */
void		gw_ttail_init(const gw_ttail_hooks *hooks);

/* The tail's families of /metrics. */
void		gw_ttail_metrics(struct gw_metrics_out *out);

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
