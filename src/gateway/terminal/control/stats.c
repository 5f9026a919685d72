/*
 * terminal/control/stats.c
 *		The control plane's counters in /metrics (see stats.h).
 */
#include "core/conn.h"
#include "core/metrics.h"
#include "core/node.h"
#include "terminal/control/presence.h"
#include "terminal/control/stats.h"

gw_tstats_t gw_tstats;

void
gw_tstats_metrics(gw_metrics_out *out)
{
	static const char *const gauges[GW_TCOUNT_COUNT] = {NULL, "unready", "confirming", "active"};
	static const char *const refusals[GW_TREFUSE_COUNT] = {"unknown_host", "bad_signature", "wrong_code"};
	static const char *const probes[GW_TPROBE_COUNT] = {"answered", "unanswered", "refused"};
	static const char *const verdicts[GW_TVERDICT_COUNT] = {"pairing", "disabled", "failed"};
	int			i;

	gw_metrics_header(out, "bothy_terminal_control_connections", "gauge",
					  "Open control connections of host services, by state.");
	for (i = GW_TCOUNT_UNREADY; i < GW_TCOUNT_COUNT; i++)
		gw_metrics_put(out, "bothy_terminal_control_connections{state=\"%s\"} %lld\n", gauges[i],
					   (long long) gw_tstats.control[i]);
	gw_metrics_labelled(out, "bothy_terminal_control_refused_total",
						"Control connections refused at hello or pair (4001), by reason.", "reason",
						refusals, gw_tstats.refused, GW_TREFUSE_COUNT);
	gw_metrics_counter(out, "bothy_terminal_heartbeats_missed_total",
					   "Control connections closed because no heartbeat came in time (4009).",
					   gw_tstats.heartbeats_missed);
	gw_tpresence_expire(gw_mono_ms());
	gw_metrics_gauge(out, "bothy_terminal_presence_entries",
					 "Other nodes' control connections this node counts as connected.",
					 (long long) gw_tpresence_entries());
	gw_metrics_counter(out, "bothy_terminal_presence_announced_total",
					   "terminal.host_present signals this node sent.", gw_tstats.announced);
	gw_metrics_counter(out, "bothy_terminal_presence_refused_total",
					   "Announcements of other nodes not kept: the view was full.",
					   gw_tstats.presence_refused);
	gw_metrics_counter(out, "bothy_terminal_presence_unknown_total",
					   "Newer control connections heard of that the database did not know: not probed for.",
					   gw_tstats.presence_unknown);
	gw_metrics_counter(out, "bothy_terminal_presence_announce_failures_total",
					   "Announcements and withdrawals of this node's control connections the database did not record.",
					   gw_tstats.announce_failures);
	gw_metrics_labelled(out, "bothy_terminal_probes_total",
						"Duplicate probes of this node's control connections, by outcome.", "outcome",
						probes, gw_tstats.probes, GW_TPROBE_COUNT);
	gw_metrics_labelled(out, "bothy_terminal_duplicate_verdicts_total",
						"Duplicate verdicts this node asked for, by the host's state after it.", "result",
						verdicts, gw_tstats.verdicts, GW_TVERDICT_COUNT);
	gw_metrics_counter(out, "bothy_terminal_session_opens_sent_total",
					   "session.open messages sent to host services.", gw_tstats.opens_sent);
	gw_metrics_counter(out, "bothy_terminal_session_closes_sent_total",
					   "session.close messages sent to host services.", gw_tstats.closes_sent);
	gw_metrics_counter(out, "bothy_terminal_sessions_started_total",
					   "session.started of host services that committed a transition.",
					   gw_tstats.started);
}
