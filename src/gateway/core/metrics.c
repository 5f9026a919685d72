/*
 * core/metrics.c
 *		Prometheus text rendering of the core's counters, then of every
 *		route's through its metrics writer (see metrics.h).
 *
 * Rendered on request into one buffer, so a scrape costs the loop one
 * short burst and the counters themselves stay plain integers.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/channel.h"
#include "core/metrics.h"
#include "core/dbread.h"
#include "core/route.h"

gw_metrics	gw_stats;

static const double db_buckets[GW_N_DB_BUCKETS] = GW_DB_BUCKETS;
static const char *const db_result_names[GW_DB_RESULT_COUNT] = {"ok", "error", "timeout"};

void
gw_metrics_close(int code)
{
	const int  *codes;
	int			n = gw_route_close_codes(&codes),
				i;

	for (i = 0; i < n; i++)
		if (codes[i] == code)
			break;
	gw_stats.closes[i < n ? i : GW_MAX_CLOSE_CODES]++;
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

struct gw_metrics_out
{
	char	   *data;
	size_t		len;
	size_t		cap;
	bool		failed;
};

void
gw_metrics_put(gw_metrics_out *b, const char *fmt, ...)
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

void
gw_metrics_header(gw_metrics_out *b, const char *name, const char *type, const char *help)
{
	gw_metrics_put(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void
gw_metrics_counter(gw_metrics_out *b, const char *name, const char *help, uint64_t value)
{
	gw_metrics_header(b, name, "counter", help);
	gw_metrics_put(b, "%s %llu\n", name, (unsigned long long) value);
}

void
gw_metrics_gauge(gw_metrics_out *b, const char *name, const char *help, long long value)
{
	gw_metrics_header(b, name, "gauge", help);
	gw_metrics_put(b, "%s %lld\n", name, value);
}

void
gw_metrics_labelled(gw_metrics_out *b, const char *name, const char *help, const char *label,
					const char *const *names, const uint64_t *values, int n)
{
	int			i;

	gw_metrics_header(b, name, "counter", help);
	for (i = 0; i < n; i++)
		if (names[i] != NULL)
			gw_metrics_put(b, "%s{%s=\"%s\"} %llu\n", name, label, names[i],
						   (unsigned long long) values[i]);
}

bool
gw_metrics_render(int db_up, int ready, char **out, size_t *len)
{
	gw_metrics_out b = {malloc(8192), 0, 8192, false};
	uint64_t	cumulative = 0,
				count = 0;
	const int  *codes;
	int			ncodes = gw_route_close_codes(&codes);
	int			i;

	if (b.data == NULL)
		return false;

	gw_metrics_counter(&b, "bothy_gateway_frames_in_total",
					   "Complete client messages received.",
					   gw_stats.frames_in);
	gw_metrics_counter(&b, "bothy_gateway_frames_out_total",
					   "Messages written to clients.",
					   gw_stats.frames_out);
	gw_metrics_header(&b, "bothy_gateway_closes_total", "counter",
					  "Connections closed, by close code.");
	for (i = 0; i < ncodes; i++)
		gw_metrics_put(&b, "bothy_gateway_closes_total{code=\"%d\"} %llu\n", codes[i],
					   (unsigned long long) gw_stats.closes[i]);
	gw_metrics_put(&b, "bothy_gateway_closes_total{code=\"other\"} %llu\n",
				   (unsigned long long) gw_stats.closes[GW_MAX_CLOSE_CODES]);
	gw_metrics_counter(&b, "bothy_gateway_send_queue_overflows_total",
					   "Clients closed because their send queue was full.",
					   gw_stats.send_queue_overflows);

	gw_metrics_header(&b, "bothy_gateway_db_calls_total", "counter", "Database calls by result.");
	for (i = 0; i < GW_DB_RESULT_COUNT; i++)
	{
		gw_metrics_put(&b, "bothy_gateway_db_calls_total{result=\"%s\"} %llu\n",
					   db_result_names[i], (unsigned long long) gw_stats.db_calls[i]);
		count += gw_stats.db_calls[i];
	}
	gw_metrics_header(&b, "bothy_gateway_db_call_duration_seconds", "histogram",
					  "Latency of database calls, queue wait included.");
	for (i = 0; i < GW_N_DB_BUCKETS; i++)
	{
		cumulative += gw_stats.db_bucket[i];
		gw_metrics_put(&b, "bothy_gateway_db_call_duration_seconds_bucket{le=\"%g\"} %llu\n",
					   db_buckets[i], (unsigned long long) cumulative);
	}
	gw_metrics_put(&b, "bothy_gateway_db_call_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
				   (unsigned long long) count);
	gw_metrics_put(&b, "bothy_gateway_db_call_duration_seconds_sum %.6f\n", gw_stats.db_seconds_sum);
	gw_metrics_put(&b, "bothy_gateway_db_call_duration_seconds_count %llu\n",
				   (unsigned long long) count);
	gw_metrics_counter(&b, "bothy_gateway_db_background_refused_total",
					   "Database calls a signal caused, refused at once: their queue was full.",
					   gw_stats.db_background_refused);
	gw_metrics_gauge(&b, "bothy_gateway_db_up",
					 "1 while a query connection to the database is open.", db_up);
	gw_metrics_gauge(&b, "bothy_gateway_ready", "1 while /readyz answers 200.", ready);
	gw_dbread_metrics(&b);

	gw_metrics_gauge(&b, "bothy_gateway_listener_up", "1 while LISTEN ephemeral holds.",
					 gw_stats.listener_up);
	gw_metrics_counter(&b, "bothy_gateway_listener_losses_total",
					   "Listening connections lost.",
					   gw_stats.listener_losses);
	gw_metrics_counter(&b, "bothy_gateway_listener_reconnects_total",
					   "LISTEN ephemeral succeeded again after a loss.",
					   gw_stats.listener_reconnects);
	gw_metrics_header(&b, "bothy_gateway_route_reconciles_total", "counter",
					  "Reconciliations run by the listener's routes after a reconnect, by route.");
	for (i = 0; i < gw_route_count(); i++)
		if (gw_route_at(i)->reconcile != NULL)
			gw_metrics_put(&b, "bothy_gateway_route_reconciles_total{route=\"%s\"} %llu\n",
						   gw_route_at(i)->name, (unsigned long long) gw_stats.route_reconciles[i]);

	gw_metrics_header(&b, "bothy_gateway_signals_received_total", "counter",
					  "Signals decoded from other producers, by kind.");
	for (i = 1; i < BOTHY_KIND_COUNT; i++)
		gw_metrics_put(&b, "bothy_gateway_signals_received_total{kind=\"%s\"} %llu\n",
					   bothy_kind_name((bothy_kind) i),
					   (unsigned long long) gw_stats.signals_received[i]);
	gw_metrics_counter(&b, "bothy_gateway_signals_own_total",
					   "Signals of this node heard back and ignored.",
					   gw_stats.signals_own);
	gw_metrics_counter(&b, "bothy_gateway_signals_ignored_total",
					   "Payloads of a kind outside gateway., terminal. and wal., ignored.",
					   gw_stats.signals_ignored);
	gw_metrics_header(&b, "bothy_gateway_signals_dropped_total", "counter",
					  "Payloads dropped as malformed, by reason.");
	for (i = 1; i < BOTHY_REASON_COUNT; i++)
		gw_metrics_put(&b, "bothy_gateway_signals_dropped_total{reason=\"%s\"} %llu\n",
					   bothy_reason_code((bothy_reason) i),
					   (unsigned long long) gw_stats.signals_dropped[i]);
	gw_metrics_header(&b, "bothy_gateway_signals_refused_total", "counter",
					  "Payloads on ephemeral not signed with the channel key, refused unread, by reason.");
	for (i = GW_CHANNEL_UNSIGNED; i < GW_CHANNEL_VERDICT_COUNT; i++)
		gw_metrics_put(&b, "bothy_gateway_signals_refused_total{reason=\"%s\"} %llu\n",
					   gw_channel_verdict_code((gw_channel_verdict) i),
					   (unsigned long long) gw_stats.signals_refused[i]);
	gw_metrics_counter(&b, "bothy_gateway_signals_published_total",
					   "Signals this node originated and staged (multi mode).",
					   gw_stats.signals_published);
	gw_metrics_counter(&b, "bothy_gateway_signal_publish_failures_total",
					   "Signals this node could not stage; other nodes missed the event.",
					   gw_stats.publish_failures);

	for (i = 0; i < gw_route_count(); i++)
		if (gw_route_at(i)->metrics != NULL)
			gw_route_at(i)->metrics(&b);

	if (b.failed)
	{
		free(b.data);
		return false;
	}
	*out = b.data;
	*len = b.len;
	return true;
}
