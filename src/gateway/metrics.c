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
	header(&b, "bothy_gateway_frames_in_total", "counter", "Complete client messages received.");
	put(&b, "bothy_gateway_frames_in_total %llu\n", (unsigned long long) gw_stats.frames_in);
	header(&b, "bothy_gateway_frames_out_total", "counter", "Messages written to clients.");
	put(&b, "bothy_gateway_frames_out_total %llu\n", (unsigned long long) gw_stats.frames_out);
	header(&b, "bothy_gateway_closes_total", "counter", "Connections closed, by close code.");
	for (i = 0; i < GW_N_CLOSE_CODES; i++)
		put(&b, "bothy_gateway_closes_total{code=\"%d\"} %llu\n", close_codes[i],
			(unsigned long long) gw_stats.closes[i]);
	put(&b, "bothy_gateway_closes_total{code=\"other\"} %llu\n",
		(unsigned long long) gw_stats.closes[GW_N_CLOSE_CODES]);
	header(&b, "bothy_gateway_send_queue_overflows_total", "counter",
		   "Clients closed because their send queue was full.");
	put(&b, "bothy_gateway_send_queue_overflows_total %llu\n",
		(unsigned long long) gw_stats.send_queue_overflows);
	header(&b, "bothy_gateway_heartbeats_missed_total", "counter",
		   "Connections closed because no message came within twice heartbeat_ms.");
	put(&b, "bothy_gateway_heartbeats_missed_total %llu\n",
		(unsigned long long) gw_stats.heartbeats_missed);
	header(&b, "bothy_gateway_tokens_refused_total", "counter", "Identify or resume tokens refused.");
	put(&b, "bothy_gateway_tokens_refused_total %llu\n", (unsigned long long) gw_stats.tokens_refused);

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
	header(&b, "bothy_gateway_db_up", "gauge", "1 while a query connection to the database is open.");
	put(&b, "bothy_gateway_db_up %d\n", db_up);
	header(&b, "bothy_gateway_ready", "gauge", "1 while /readyz answers 200.");
	put(&b, "bothy_gateway_ready %d\n", ready);

	header(&b, "bothy_gateway_listener_up", "gauge", "1 while LISTEN ephemeral holds.");
	put(&b, "bothy_gateway_listener_up %d\n", gw_stats.listener_up);
	header(&b, "bothy_gateway_listener_losses_total", "counter", "Listening connections lost.");
	put(&b, "bothy_gateway_listener_losses_total %llu\n",
		(unsigned long long) gw_stats.listener_losses);
	header(&b, "bothy_gateway_listener_reconnects_total", "counter",
		   "LISTEN ephemeral succeeded again after a loss.");
	put(&b, "bothy_gateway_listener_reconnects_total %llu\n",
		(unsigned long long) gw_stats.listener_reconnects);
	header(&b, "bothy_gateway_route_reconciles_total", "counter",
		   "Reconciliations run by the listener's routes after a reconnect.");
	put(&b, "bothy_gateway_route_reconciles_total %llu\n",
		(unsigned long long) gw_stats.route_reconciles);

	header(&b, "bothy_gateway_presence_flushes_total", "counter",
		   "Presence flushes the database applied, by kind (delta or full).");
	put(&b, "bothy_gateway_presence_flushes_total{kind=\"delta\"} %llu\n",
		(unsigned long long) gw_stats.presence_flushes[0]);
	put(&b, "bothy_gateway_presence_flushes_total{kind=\"full\"} %llu\n",
		(unsigned long long) gw_stats.presence_flushes[1]);
	header(&b, "bothy_gateway_presence_write_failures_total", "counter",
		   "Presence flushes that failed or could not be sent; retried at the next interval.");
	put(&b, "bothy_gateway_presence_write_failures_total %llu\n",
		(unsigned long long) gw_stats.presence_write_failures);
	header(&b, "bothy_gateway_presence_rows", "gauge",
		   "Presence rows this node holds: gateway sessions of its ready person connections.");
	put(&b, "bothy_gateway_presence_rows %lld\n", (long long) gw_stats.presence_rows);

	header(&b, "bothy_gateway_signals_received_total", "counter",
		   "Signals decoded from other producers, by kind.");
	for (i = 1; i < BOTHY_KIND_COUNT; i++)
		put(&b, "bothy_gateway_signals_received_total{kind=\"%s\"} %llu\n",
			bothy_kind_name((bothy_kind) i), (unsigned long long) gw_stats.signals_received[i]);
	header(&b, "bothy_gateway_signals_own_total", "counter",
		   "Signals of this node heard back and ignored.");
	put(&b, "bothy_gateway_signals_own_total %llu\n", (unsigned long long) gw_stats.signals_own);
	header(&b, "bothy_gateway_signals_ignored_total", "counter",
		   "Payloads of a kind outside gateway. and terminal., ignored.");
	put(&b, "bothy_gateway_signals_ignored_total %llu\n",
		(unsigned long long) gw_stats.signals_ignored);
	header(&b, "bothy_gateway_signals_dropped_total", "counter",
		   "Payloads dropped as malformed, by reason.");
	for (i = 1; i < BOTHY_REASON_COUNT; i++)
		put(&b, "bothy_gateway_signals_dropped_total{reason=\"%s\"} %llu\n",
			bothy_reason_code((bothy_reason) i), (unsigned long long) gw_stats.signals_dropped[i]);

	if (b.failed)
	{
		free(b.data);
		return false;
	}
	*out = b.data;
	*len = b.len;
	return true;
}
