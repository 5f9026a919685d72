/*
 * terminal/relay/stats.h
 *		The relay's counters, and what /metrics and /status.json show of
 *		them and of the slots (stats.c; docs/gateway.md, "Metrics").
 */
#ifndef BOTHY_GATEWAY_TERMINAL_RELAY_STATS_H
#define BOTHY_GATEWAY_TERMINAL_RELAY_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "terminal/relay/slot.h"

struct gw_metrics_out;

typedef struct gw_relay_counters
{
	uint64_t	unpaired[2];	/* lone sides closed 4102 that never paired, by side */
	uint64_t	pairings;		/* two sides paired (terminal.session_paired staged) */
	uint64_t	bytes[2];		/* relayed, by the sending side: device to host, host to device */
	uint64_t	dropped;		/* binary messages of a side without a counterpart */
	uint64_t	paused;			/* a side's reading paused: its counterpart's queue was full */
	uint64_t	held;			/* a device's output held by a full window (ack.c) */
	uint64_t	acks;			/* a device's pongs accepted as acknowledgements */
	uint64_t	refused[2];		/* identifies refused (4001), by side */
	uint64_t	decisions[GW_RCALL_COUNT];	/* transitions this node made, by call */
	uint64_t	call_failures;	/* database calls that failed or timed out */
} gw_relay_counters;

extern gw_relay_counters gw_relay_stats;

/* The relay's families of /metrics. */
void		gw_relay_stats_metrics(struct gw_metrics_out *out);

/* Its members of /status.json; false when out of memory. */
bool		gw_relay_stats_status(json_t *status);

/* Constant names, for labels and log details. */
const char *gw_relay_side_name(int kind);
const char *gw_relay_call_name(gw_rcall call);

#endif							/* BOTHY_GATEWAY_TERMINAL_RELAY_STATS_H */
