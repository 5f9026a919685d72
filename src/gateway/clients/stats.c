/*
 * clients/stats.c
 *		The gateway route's counters in /metrics and /status.json (see
 *		stats.h).
 */
#include <string.h>

#include "clients/settings.h"
#include "clients/stats.h"
#include "core/node.h"

gw_clients_metrics gw_clients_stats;

static const char *const conn_kind_names[GW_CONN_KIND_COUNT] = {"unidentified", "person", "agent"};
static const char *const event_type_names[GW_EV_TYPE_COUNT] = {
	"typing.started", "run.updated", "agent.presence_changed", "notification.created",
	"agent.event", "command.autocomplete_requested"
};
static const char *const rest_endpoint_names[GW_REST_ENDPOINT_COUNT] = {
	"/v1/agent/events", "/v1/agents/presence", "/v1/presence"
};
static const unsigned rest_statuses[GW_N_REST_STATUSES] = GW_REST_STATUSES;

const char *
gw_event_type_name(gw_event_type type)
{
	return type >= 0 && type < GW_EV_TYPE_COUNT ? event_type_names[type] : "unknown";
}

void
gw_metrics_rest(gw_rest_endpoint endpoint, unsigned status)
{
	int			i;

	for (i = 0; i < GW_N_REST_STATUSES; i++)
		if (rest_statuses[i] == status)
			break;
	gw_clients_stats.rest_requests[endpoint][i]++;
}

void
gw_clients_metrics_write(gw_metrics_out *b)
{
	const gw_clients_metrics *s = &gw_clients_stats;
	int			i;

	gw_metrics_header(b, "bothy_gateway_connections", "gauge", "Open WebSocket connections by kind.");
	for (i = 0; i < GW_CONN_KIND_COUNT; i++)
		gw_metrics_put(b, "bothy_gateway_connections{kind=\"%s\"} %lld\n", conn_kind_names[i],
					   (long long) s->connections[i]);
	gw_metrics_counter(b, "bothy_gateway_heartbeats_missed_total",
					   "Connections closed because no message came within twice heartbeat_ms.",
					   s->heartbeats_missed);
	gw_metrics_counter(b, "bothy_gateway_tokens_refused_total",
					   "Identify or resume tokens refused.",
					   s->tokens_refused);

	gw_metrics_header(b, "bothy_gateway_presence_flushes_total", "counter",
					  "Presence flushes the database applied, by kind (delta or full).");
	gw_metrics_put(b, "bothy_gateway_presence_flushes_total{kind=\"delta\"} %llu\n",
				   (unsigned long long) s->presence_flushes[0]);
	gw_metrics_put(b, "bothy_gateway_presence_flushes_total{kind=\"full\"} %llu\n",
				   (unsigned long long) s->presence_flushes[1]);
	gw_metrics_counter(b, "bothy_gateway_presence_write_failures_total",
					   "Presence flushes that failed or could not be sent; retried at the next interval.",
					   s->presence_write_failures);
	gw_metrics_gauge(b, "bothy_gateway_presence_rows",
					 "Presence rows this node holds: gateway sessions of its ready person connections.",
					 s->presence_rows);

	gw_metrics_header(b, "bothy_gateway_events_delivered_total", "counter",
					  "Event messages queued to clients, by type.");
	for (i = 0; i < GW_EV_TYPE_COUNT; i++)
		gw_metrics_put(b, "bothy_gateway_events_delivered_total{type=\"%s\"} %llu\n",
					   gw_event_type_name((gw_event_type) i),
					   (unsigned long long) s->events_delivered[i]);
	gw_metrics_counter(b, "bothy_gateway_audience_queries_total",
					   "Thread audience calls (bothy.thread_audience_on), one per delivery.",
					   s->audience_queries);
	gw_metrics_counter(b, "bothy_gateway_signals_unreached_total",
					   "Typing and run signals whose reach left this node out: no call, no delivery.",
					   s->signals_unreached);
	gw_metrics_counter(b, "bothy_gateway_audience_failures_total",
					   "Thread audience calls that failed; their event was not delivered.",
					   s->audience_failures);
	gw_metrics_counter(b, "bothy_gateway_typing_dropped_total",
					   "Typing ops dropped within --typing-interval of the last one for the thread.",
					   s->typing_dropped);
	gw_metrics_counter(b, "bothy_gateway_typing_rejected_total",
					   "Typing ops of a person who may not see the thread.", s->typing_rejected);
	gw_metrics_counter(b, "bothy_gateway_run_snapshots_total",
					   "Run documents read and delivered as run.updated.", s->run_snapshots);
	gw_metrics_counter(b, "bothy_gateway_runs_coalesced_total",
					   "gateway.run signals folded into another read (older or within the window).",
					   s->runs_coalesced);
	gw_metrics_counter(b, "bothy_gateway_runs_too_large_total",
					   "Run documents not delivered because they exceed half of --send-queue.",
					   s->runs_too_large);
	gw_metrics_counter(b, "bothy_gateway_device_signal_checks_total",
					   "gateway.device signals that could close a connection here, checked against the binding in the database.",
					   s->device_checks);
	gw_metrics_counter(b, "bothy_gateway_run_signals_contradicted_total",
					   "Run reads whose document's thread or version was not the signal's: delivered as the document says.",
					   s->runs_contradicted);
	gw_metrics_counter(b, "bothy_gateway_run_read_failures_total",
					   "Run document reads that failed.", s->run_read_failures);
	gw_metrics_counter(b, "bothy_gateway_hints_not_admitted_total",
					   "Hints not delivered: the recipient may not see the thread.",
					   s->hints_not_admitted);
	gw_metrics_counter(b, "bothy_gateway_agent_heartbeats_persisted_total",
					   "Agent heartbeats stored (bothy.agent_heartbeat_persist).",
					   s->heartbeats_persisted);
	gw_metrics_counter(b, "bothy_gateway_agent_heartbeat_persist_failures_total",
					   "Agent heartbeats that could not be stored (tried again).",
					   s->heartbeat_persist_failures);
	gw_metrics_counter(b, "bothy_gateway_agent_presence_announced_total",
					   "Agent takeovers and state changes announced.", s->agent_presence_announced);
	gw_metrics_counter(b, "bothy_gateway_agent_event_read_failures_total",
					   "Reads of agent events that failed (read again at the next signal or ack).",
					   s->agent_event_read_failures);
	gw_metrics_counter(b, "bothy_gateway_consumer_resumes_total",
					   "Consumer leases that lapsed with no takeover and were held again.",
					   s->consumer_resumes);
	gw_metrics_header(b, "bothy_gateway_autocomplete_total", "counter",
					  "Autocomplete requests by outcome.");
	gw_metrics_put(b, "bothy_gateway_autocomplete_total{outcome=\"forwarded\"} %llu\n",
				   (unsigned long long) s->autocomplete_forwarded);
	gw_metrics_put(b, "bothy_gateway_autocomplete_total{outcome=\"answered\"} %llu\n",
				   (unsigned long long) s->autocomplete_answered);
	gw_metrics_put(b, "bothy_gateway_autocomplete_total{outcome=\"timeout\"} %llu\n",
				   (unsigned long long) s->autocomplete_timeouts);
	gw_metrics_put(b, "bothy_gateway_autocomplete_total{outcome=\"no_consumer\"} %llu\n",
				   (unsigned long long) s->autocomplete_empty);
	gw_metrics_put(b, "bothy_gateway_autocomplete_total{outcome=\"late\"} %llu\n",
				   (unsigned long long) s->autocomplete_late);
	gw_metrics_header(b, "bothy_gateway_rest_requests_total", "counter",
					  "REST requests by endpoint and status.");
	for (i = 0; i < GW_REST_ENDPOINT_COUNT; i++)
	{
		int			j;

		for (j = 0; j < GW_N_REST_STATUSES; j++)
			gw_metrics_put(b, "bothy_gateway_rest_requests_total{endpoint=\"%s\",status=\"%u\"} %llu\n",
						   rest_endpoint_names[i], rest_statuses[j],
						   (unsigned long long) s->rest_requests[i][j]);
		gw_metrics_put(b, "bothy_gateway_rest_requests_total{endpoint=\"%s\",status=\"other\"} %llu\n",
					   rest_endpoint_names[i],
					   (unsigned long long) s->rest_requests[i][GW_N_REST_STATUSES]);
	}
}

bool
gw_clients_status(json_t *status)
{
	json_t	   *conns = json_object();
	json_t	   *signals = json_object();
	bool		ok;
	int			i;

	if (conns == NULL || signals == NULL)
	{
		json_decref(conns);
		json_decref(signals);
		return false;
	}
	for (i = 0; i < GW_CONN_KIND_COUNT; i++)
		json_object_set_new(conns, conn_kind_names[i],
							json_integer(gw_clients_stats.connections[i]));
	/* the kinds a gateway node counts; terminal kinds are another route's */
	for (i = 1; i < BOTHY_KIND_COUNT; i++)
	{
		const char *name = bothy_kind_name((bothy_kind) i);

		if (strncmp(name, "gateway.", 8) == 0)
			json_object_set_new(signals, name,
								json_integer((json_int_t) gw_stats.signals_received[i]));
	}
	/* each call takes its value, also when it fails: none is skipped */
	ok = json_object_set_new(status, "heartbeat_ms", json_integer(gw_copt.heartbeat_ms)) == 0;
	ok = json_object_set_new(status, "connections", conns) == 0 && ok;
	ok = json_object_set_new(status, "presence_rows",
							 json_integer((json_int_t) gw_clients_stats.presence_rows)) == 0 && ok;
	ok = json_object_set_new(status, "signals_received", signals) == 0 && ok;
	return ok;
}
