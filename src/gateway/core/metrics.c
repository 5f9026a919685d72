/*
 * metrics.c
 *		Prometheus text rendering of the node's counters.
 *
 * Rendered on request into one buffer, so a scrape costs the loop one
 * short burst and the counters themselves stay plain integers.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

gw_metrics	gw_stats;

static const int close_codes[GW_N_CLOSE_CODES] = GW_CLOSE_CODES;
static const double db_buckets[GW_N_DB_BUCKETS] = GW_DB_BUCKETS;
static const char *const conn_kind_names[GW_CONN_KIND_COUNT] = {"unidentified", "person", "agent"};
static const char *const db_result_names[GW_DB_RESULT_COUNT] = {"ok", "error", "timeout"};
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
gw_metrics_close(int code)
{
	int			i;

	for (i = 0; i < GW_N_CLOSE_CODES; i++)
		if (close_codes[i] == code)
			break;
	gw_stats.closes[i]++;
}

void
gw_metrics_rest(gw_rest_endpoint endpoint, unsigned status)
{
	int			i;

	for (i = 0; i < GW_N_REST_STATUSES; i++)
		if (rest_statuses[i] == status)
			break;
	gw_stats.rest_requests[endpoint][i]++;
}

void
gw_metrics_db_call(gw_db_result result, double seconds)
{
	int			i;

	gw_stats.db_calls[result]++;
	gw_stats.db_seconds_sum += seconds;
	for (i = 0; i < GW_N_DB_BUCKETS; i++)
		if (seconds <= db_buckets[i])
		{
			gw_stats.db_bucket[i]++;
			break;
		}
}

typedef struct buf
{
	char	   *data;
	size_t		len;
	size_t		cap;
	bool		failed;
} buf;

static void
put(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(buf *b, const char *fmt, ...)
{
	va_list		ap;
	int			n;

	if (b->failed)
		return;
	for (;;)
	{
		va_start(ap, fmt);
		n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0)
		{
			b->failed = true;
			return;
		}
		if ((size_t) n < b->cap - b->len)
		{
			b->len += (size_t) n;
			return;
		}
		{
			size_t		cap = b->cap * 2 + (size_t) n;
			char	   *p = realloc(b->data, cap);

			if (p == NULL)
			{
				b->failed = true;
				return;
			}
			b->data = p;
			b->cap = cap;
		}
	}
}

static void
header(buf *b, const char *name, const char *type, const char *help)
{
	put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A plain counter: its HELP, TYPE and one sample. */
static void
counter(buf *b, const char *name, const char *help, uint64_t value)
{
	header(b, name, "counter", help);
	put(b, "%s %llu\n", name, (unsigned long long) value);
}

/* A gauge without labels. */
static void
gauge(buf *b, const char *name, const char *help, long long value)
{
	header(b, name, "gauge", help);
	put(b, "%s %lld\n", name, value);
}

bool
gw_metrics_render(int db_up, int ready, char **out, size_t *len)
{
	buf			b = {malloc(8192), 0, 8192, false};
	uint64_t	cumulative = 0,
				count = 0;
	int			i;

	if (b.data == NULL)
		return false;

	header(&b, "bothy_gateway_connections", "gauge", "Open WebSocket connections by kind.");
	for (i = 0; i < GW_CONN_KIND_COUNT; i++)
		put(&b, "bothy_gateway_connections{kind=\"%s\"} %lld\n", conn_kind_names[i],
			(long long) gw_stats.connections[i]);
	counter(&b, "bothy_gateway_frames_in_total",
			"Complete client messages received.",
			gw_stats.frames_in);
	counter(&b, "bothy_gateway_frames_out_total",
			"Messages written to clients.",
			gw_stats.frames_out);
	header(&b, "bothy_gateway_closes_total", "counter", "Connections closed, by close code.");
	for (i = 0; i < GW_N_CLOSE_CODES; i++)
		put(&b, "bothy_gateway_closes_total{code=\"%d\"} %llu\n", close_codes[i],
			(unsigned long long) gw_stats.closes[i]);
	put(&b, "bothy_gateway_closes_total{code=\"other\"} %llu\n",
		(unsigned long long) gw_stats.closes[GW_N_CLOSE_CODES]);
	counter(&b, "bothy_gateway_send_queue_overflows_total",
			"Clients closed because their send queue was full.",
			gw_stats.send_queue_overflows);
	counter(&b, "bothy_gateway_heartbeats_missed_total",
			"Connections closed because no message came within twice heartbeat_ms.",
			gw_stats.heartbeats_missed);
	counter(&b, "bothy_gateway_tokens_refused_total",
			"Identify or resume tokens refused.",
			gw_stats.tokens_refused);

	header(&b, "bothy_gateway_db_calls_total", "counter", "Database calls by result.");
	for (i = 0; i < GW_DB_RESULT_COUNT; i++)
	{
		put(&b, "bothy_gateway_db_calls_total{result=\"%s\"} %llu\n", db_result_names[i],
			(unsigned long long) gw_stats.db_calls[i]);
		count += gw_stats.db_calls[i];
	}
	header(&b, "bothy_gateway_db_call_duration_seconds", "histogram",
		   "Latency of database calls, queue wait included.");
	for (i = 0; i < GW_N_DB_BUCKETS; i++)
	{
		cumulative += gw_stats.db_bucket[i];
		put(&b, "bothy_gateway_db_call_duration_seconds_bucket{le=\"%g\"} %llu\n", db_buckets[i],
			(unsigned long long) cumulative);
	}
	put(&b, "bothy_gateway_db_call_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
		(unsigned long long) count);
	put(&b, "bothy_gateway_db_call_duration_seconds_sum %.6f\n", gw_stats.db_seconds_sum);
	put(&b, "bothy_gateway_db_call_duration_seconds_count %llu\n", (unsigned long long) count);
	gauge(&b, "bothy_gateway_db_up", "1 while a query connection to the database is open.", db_up);
	gauge(&b, "bothy_gateway_ready", "1 while /readyz answers 200.", ready);

	gauge(&b, "bothy_gateway_listener_up", "1 while LISTEN ephemeral holds.", gw_stats.listener_up);
	counter(&b, "bothy_gateway_listener_losses_total",
			"Listening connections lost.",
			gw_stats.listener_losses);
	counter(&b, "bothy_gateway_listener_reconnects_total",
			"LISTEN ephemeral succeeded again after a loss.",
			gw_stats.listener_reconnects);
	counter(&b, "bothy_gateway_route_reconciles_total",
			"Reconciliations run by the listener's routes after a reconnect.",
			gw_stats.route_reconciles);

	header(&b, "bothy_gateway_presence_flushes_total", "counter",
		   "Presence flushes the database applied, by kind (delta or full).");
	put(&b, "bothy_gateway_presence_flushes_total{kind=\"delta\"} %llu\n",
		(unsigned long long) gw_stats.presence_flushes[0]);
	put(&b, "bothy_gateway_presence_flushes_total{kind=\"full\"} %llu\n",
		(unsigned long long) gw_stats.presence_flushes[1]);
	counter(&b, "bothy_gateway_presence_write_failures_total",
			"Presence flushes that failed or could not be sent; retried at the next interval.",
			gw_stats.presence_write_failures);
	gauge(&b, "bothy_gateway_presence_rows",
			"Presence rows this node holds: gateway sessions of its ready person connections.",
			gw_stats.presence_rows);

	header(&b, "bothy_gateway_signals_received_total", "counter",
		   "Signals decoded from other producers, by kind.");
	for (i = 1; i < BOTHY_KIND_COUNT; i++)
		put(&b, "bothy_gateway_signals_received_total{kind=\"%s\"} %llu\n",
			bothy_kind_name((bothy_kind) i), (unsigned long long) gw_stats.signals_received[i]);
	counter(&b, "bothy_gateway_signals_own_total",
			"Signals of this node heard back and ignored.",
			gw_stats.signals_own);
	counter(&b, "bothy_gateway_signals_ignored_total",
			"Payloads of a kind outside gateway. and terminal., ignored.",
			gw_stats.signals_ignored);
	header(&b, "bothy_gateway_signals_dropped_total", "counter",
		   "Payloads dropped as malformed, by reason.");
	for (i = 1; i < BOTHY_REASON_COUNT; i++)
		put(&b, "bothy_gateway_signals_dropped_total{reason=\"%s\"} %llu\n",
			bothy_reason_code((bothy_reason) i), (unsigned long long) gw_stats.signals_dropped[i]);

	header(&b, "bothy_gateway_events_delivered_total", "counter",
		   "Event messages queued to clients, by type.");
	for (i = 0; i < GW_EV_TYPE_COUNT; i++)
		put(&b, "bothy_gateway_events_delivered_total{type=\"%s\"} %llu\n",
			gw_event_type_name((gw_event_type) i),
			(unsigned long long) gw_stats.events_delivered[i]);
	counter(&b, "bothy_gateway_audience_queries_total",
			"Thread audience calls (bothy.thread_audience), one per delivery.",
			gw_stats.audience_queries);
	counter(&b, "bothy_gateway_audience_failures_total",
			"Thread audience calls that failed; their event was not delivered.",
			gw_stats.audience_failures);
	counter(&b, "bothy_gateway_signals_published_total",
			"Signals this node originated and staged (multi mode).", gw_stats.signals_published);
	counter(&b, "bothy_gateway_signal_publish_failures_total",
			"Signals this node could not stage; other nodes missed the event.",
			gw_stats.publish_failures);
	counter(&b, "bothy_gateway_typing_dropped_total",
			"Typing ops dropped within --typing-interval of the last one for the thread.",
			gw_stats.typing_dropped);
	counter(&b, "bothy_gateway_typing_rejected_total",
			"Typing ops of a person who may not see the thread.", gw_stats.typing_rejected);
	counter(&b, "bothy_gateway_run_snapshots_total",
			"Run documents read and delivered as run.updated.", gw_stats.run_snapshots);
	counter(&b, "bothy_gateway_runs_coalesced_total",
			"gateway.run signals folded into another read (older or within the window).",
			gw_stats.runs_coalesced);
	counter(&b, "bothy_gateway_runs_too_large_total",
			"Run documents not delivered because they exceed half of --send-queue.",
			gw_stats.runs_too_large);
	counter(&b, "bothy_gateway_run_read_failures_total",
			"Run document reads that failed.", gw_stats.run_read_failures);
	counter(&b, "bothy_gateway_hints_not_admitted_total",
			"Hints not delivered: the recipient may not see the thread.",
			gw_stats.hints_not_admitted);
	counter(&b, "bothy_gateway_agent_heartbeats_persisted_total",
			"Agent heartbeats stored (bothy.agent_heartbeat_persist).",
			gw_stats.heartbeats_persisted);
	counter(&b, "bothy_gateway_agent_heartbeat_persist_failures_total",
			"Agent heartbeats that could not be stored (tried again).",
			gw_stats.heartbeat_persist_failures);
	counter(&b, "bothy_gateway_agent_presence_announced_total",
			"Agent takeovers and state changes announced.", gw_stats.agent_presence_announced);
	counter(&b, "bothy_gateway_agent_event_read_failures_total",
			"Reads of agent events that failed (read again at the next signal or ack).",
			gw_stats.agent_event_read_failures);
	counter(&b, "bothy_gateway_consumer_resumes_total",
			"Consumer leases that lapsed with no takeover and were held again.",
			gw_stats.consumer_resumes);
	header(&b, "bothy_gateway_autocomplete_total", "counter",
		   "Autocomplete requests by outcome.");
	put(&b, "bothy_gateway_autocomplete_total{outcome=\"forwarded\"} %llu\n",
		(unsigned long long) gw_stats.autocomplete_forwarded);
	put(&b, "bothy_gateway_autocomplete_total{outcome=\"answered\"} %llu\n",
		(unsigned long long) gw_stats.autocomplete_answered);
	put(&b, "bothy_gateway_autocomplete_total{outcome=\"timeout\"} %llu\n",
		(unsigned long long) gw_stats.autocomplete_timeouts);
	put(&b, "bothy_gateway_autocomplete_total{outcome=\"no_consumer\"} %llu\n",
		(unsigned long long) gw_stats.autocomplete_empty);
	put(&b, "bothy_gateway_autocomplete_total{outcome=\"late\"} %llu\n",
		(unsigned long long) gw_stats.autocomplete_late);
	header(&b, "bothy_gateway_rest_requests_total", "counter",
		   "REST requests by endpoint and status.");
	for (i = 0; i < GW_REST_ENDPOINT_COUNT; i++)
	{
		int			j;

		for (j = 0; j < GW_N_REST_STATUSES; j++)
			put(&b, "bothy_gateway_rest_requests_total{endpoint=\"%s\",status=\"%u\"} %llu\n",
				rest_endpoint_names[i], rest_statuses[j],
				(unsigned long long) gw_stats.rest_requests[i][j]);
		put(&b, "bothy_gateway_rest_requests_total{endpoint=\"%s\",status=\"other\"} %llu\n",
			rest_endpoint_names[i], (unsigned long long) gw_stats.rest_requests[i][GW_N_REST_STATUSES]);
	}

	if (b.failed)
	{
		free(b.data);
		return false;
	}
	*out = b.data;
	*len = b.len;
	return true;
}
