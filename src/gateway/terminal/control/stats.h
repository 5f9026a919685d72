/*
 * terminal/control/stats.h
 *		The control plane's counters (control connections, presence,
 *		probes and verdicts, session.open and session.close) and their
 *		families in /metrics (docs/gateway.md, "Metrics"); the log tail
 *		(tail.h), the REST calls (rest/rest.h) and the relay (relay/relay.h)
 *		write their own.
 */
#ifndef BOTHY_GATEWAY_TERMINAL_STATS_H
#define BOTHY_GATEWAY_TERMINAL_STATS_H

#include <stdint.h>

#include "terminal/control/connection.h"
#include "terminal/model.h"

struct gw_metrics_out;

/* Why a hello or a pair was refused (4001). */
typedef enum gw_trefusal
{
	GW_TREFUSE_UNKNOWN_HOST = 0,
	GW_TREFUSE_BAD_SIGNATURE,
	GW_TREFUSE_WRONG_CODE,
	GW_TREFUSE_COUNT
} gw_trefusal;

/* How a probe ended. */
typedef enum gw_tprobe_outcome
{
	GW_TPROBE_ANSWERED = 0,		/* a valid probe_ack: the duplicate verdict follows */
	GW_TPROBE_UNANSWERED,		/* none in time: 4009 */
	GW_TPROBE_REFUSED,			/* a probe_ack with a bad signature: 4001 */
	GW_TPROBE_COUNT
} gw_tprobe_outcome;

/* What bothy.terminal_host_duplicate answered. */
typedef enum gw_tverdict
{
	GW_TVERDICT_PAIRING = 0,
	GW_TVERDICT_DISABLED,
	GW_TVERDICT_FAILED,			/* not recorded: an error, a timeout */
	GW_TVERDICT_COUNT
} gw_tverdict;

/* The gauge a control connection is counted in (gw_tconn.counted). */
typedef enum gw_tcounted
{
	GW_TCOUNT_NONE = 0,
	GW_TCOUNT_UNREADY,			/* before ready */
	GW_TCOUNT_CONFIRMING,
	GW_TCOUNT_ACTIVE,
	GW_TCOUNT_COUNT
} gw_tcounted;

typedef struct gw_tstats_t
{
	int64_t		control[GW_TCOUNT_COUNT];	/* open control connections by gauge */
	uint64_t	refused[GW_TREFUSE_COUNT];
	uint64_t	heartbeats_missed;
	uint64_t	announced;		/* terminal.host_present sent */
	uint64_t	presence_refused;	/* remote entries not kept: GW_TPRESENCE_MAX */
	uint64_t	presence_unknown;	/* newer connections heard that the database did not know: no probe */
	uint64_t	announce_failures;	/* announcements or withdrawals not recorded */
	uint64_t	probes[GW_TPROBE_COUNT];
	uint64_t	verdicts[GW_TVERDICT_COUNT];
	uint64_t	opens_sent;		/* session.open messages */
	uint64_t	closes_sent;	/* session.close messages */
	uint64_t	started;		/* session.started committed */
} gw_tstats_t;

extern gw_tstats_t gw_tstats;

/* Moves tc's count to gauge (GW_TCOUNT_NONE when it closes); inline, so no file calls up into stats.c. */
static inline void
gw_tstats_count(gw_tconn *tc, gw_tcounted gauge)
{
	if (tc->counted != GW_TCOUNT_NONE)
		gw_tstats.control[tc->counted]--;
	tc->counted = (uint8_t) gauge;
	if (gauge != GW_TCOUNT_NONE)
		gw_tstats.control[gauge]++;
}

/* The control plane's families of /metrics (the log tail writes its own, tail.h). */
void		gw_tstats_metrics(struct gw_metrics_out *out);

#endif							/* BOTHY_GATEWAY_TERMINAL_STATS_H */
