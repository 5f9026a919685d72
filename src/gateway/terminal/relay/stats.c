/*
 * terminal/relay/stats.c
 *		The relay's counters and gauges in /metrics and /status.json (see
 *		stats.h); every name is in docs/gateway.md.
 */
#include "core/conn.h"
#include "core/metrics.h"
#include "terminal/relay/relay.h"
#include "terminal/relay/stats.h"

gw_relay_counters gw_relay_stats;

static const char *const side_names[2] = {"device", "host"};
static const char *const call_names[GW_RCALL_COUNT] = {
	"read", "detach", "activate", "open_timeout", "idle", "closed_by_host",
};

const char *
gw_relay_side_name(int kind)
{
	return side_names[kind == GW_RSIDE_HOST];
}

const char *
gw_relay_call_name(gw_rcall call)
{
	return call_names[call];
}

void
gw_relay_stats_metrics(gw_metrics_out *out)
{
	gw_rslot_counts n;
	uint32_t	streams = gw_conn_count(&gw_relay_stream);
	int			k,
				c;

	gw_rslots_counts(&n);
	gw_metrics_header(out, "bothy_terminal_relay_streams", "gauge",
					  "Stream connections of this node by state.");
	gw_metrics_put(out, "bothy_terminal_relay_streams{state=\"identifying\"} %u\n",
				   streams - 2 * n.paired - n.waiting[0] - n.waiting[1]);
	for (k = 0; k < 2; k++)
		gw_metrics_put(out, "bothy_terminal_relay_streams{state=\"waiting\",side=\"%s\"} %u\n",
					   side_names[k], n.waiting[k]);
	gw_metrics_put(out, "bothy_terminal_relay_streams{state=\"paired\"} %u\n", 2 * n.paired);
	gw_metrics_gauge(out, "bothy_terminal_relay_slots",
					 "Slots (one per session and grant) this node holds.", n.slots);
	gw_metrics_header(out, "bothy_terminal_relay_unpaired_total", "counter",
					  "Lone sides closed with 4102 that never paired, by side.");
	for (k = 0; k < 2; k++)
		gw_metrics_put(out, "bothy_terminal_relay_unpaired_total{side=\"%s\"} %llu\n",
					   side_names[k], (unsigned long long) gw_relay_stats.unpaired[k]);
	gw_metrics_counter(out, "bothy_terminal_relay_pairings_total",
					   "Two sides paired on this node.", gw_relay_stats.pairings);
	gw_metrics_header(out, "bothy_terminal_relay_bytes_total", "counter",
					  "Terminal bytes relayed, by direction.");
	gw_metrics_put(out, "bothy_terminal_relay_bytes_total{direction=\"device_to_host\"} %llu\n",
				   (unsigned long long) gw_relay_stats.bytes[GW_RSIDE_DEVICE]);
	gw_metrics_put(out, "bothy_terminal_relay_bytes_total{direction=\"host_to_device\"} %llu\n",
				   (unsigned long long) gw_relay_stats.bytes[GW_RSIDE_HOST]);
	gw_metrics_counter(out, "bothy_terminal_relay_dropped_total",
					   "Binary messages of a side without a counterpart, dropped.",
					   gw_relay_stats.dropped);
	gw_metrics_counter(out, "bothy_terminal_relay_paused_total",
					   "Times a side's reading was paused because its counterpart's queue was full.",
					   gw_relay_stats.paused);
	gw_metrics_counter(out, "bothy_terminal_relay_held_total",
					   "Times a device's output was held by a full window (--stream-window unacknowledged).",
					   gw_relay_stats.held);
	gw_metrics_counter(out, "bothy_terminal_relay_acks_total",
					   "A device's pongs accepted as acknowledgements of its output.",
					   gw_relay_stats.acks);
	gw_metrics_header(out, "bothy_terminal_relay_refused_total", "counter",
					  "Stream identifies refused (4001), by side.");
	for (k = 0; k < 2; k++)
		gw_metrics_put(out, "bothy_terminal_relay_refused_total{side=\"%s\"} %llu\n",
					   side_names[k], (unsigned long long) gw_relay_stats.refused[k]);
	gw_metrics_header(out, "bothy_terminal_relay_decisions_total", "counter",
					  "Session transitions this node's relay made, by transition.");
	for (c = GW_RCALL_DETACH; c < GW_RCALL_COUNT; c++)
		gw_metrics_put(out, "bothy_terminal_relay_decisions_total{decision=\"%s\"} %llu\n",
					   call_names[c], (unsigned long long) gw_relay_stats.decisions[c]);
	gw_metrics_counter(out, "bothy_terminal_relay_call_failures_total",
					   "Relay database calls that failed or timed out (tried again).",
					   gw_relay_stats.call_failures);
}

bool
gw_relay_stats_status(json_t *status)
{
	gw_rslot_counts n;
	json_t	   *relay;

	gw_rslots_counts(&n);
	relay = json_pack("{s:I,s:I,s:I,s:I}", "slots", (json_int_t) n.slots,
					  "paired", (json_int_t) n.paired,
					  "waiting_devices", (json_int_t) n.waiting[GW_RSIDE_DEVICE],
					  "waiting_hosts", (json_int_t) n.waiting[GW_RSIDE_HOST]);
	return relay != NULL && json_object_set_new(status, "terminal_relay", relay) == 0;
}
