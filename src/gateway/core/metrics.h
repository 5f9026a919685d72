/*
 * core/metrics.h
 *		The core's counters (transport, database, listener, signals) and
 *		the Prometheus text rendering of /metrics, to which every route
 *		appends its own families through its metrics writer (route.h).
 *
 * One process-wide set: the loop is single-threaded, so plain integers
 * suffice.  docs/gateway.md lists every name.
 */
#ifndef BOTHY_GATEWAY_METRICS_H
#define BOTHY_GATEWAY_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/channel.h"
#include "core/route.h"
#include "signal.h"

typedef enum gw_db_result
{
	GW_DB_OK = 0,
	GW_DB_ERROR,				/* the database answered with an error */
	GW_DB_TIMEOUT,				/* no answer within --db-timeout */
	GW_DB_RESULT_COUNT
} gw_db_result;

/* The most close codes counted by name (core/conn.h's GW_CLOSE_CODES and the routes'). */
#define GW_MAX_CLOSE_CODES 32

#define GW_DB_BUCKETS {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0}
#define GW_N_DB_BUCKETS 8

typedef struct gw_metrics
{
	uint64_t	frames_in;		/* complete messages received */
	uint64_t	frames_out;		/* messages written */
	uint64_t	closes[GW_MAX_CLOSE_CODES + 1];	/* by gw_route_close_codes; last: other */
	uint64_t	db_calls[GW_DB_RESULT_COUNT];
	uint64_t	db_background_refused;	/* background calls refused: their queue was full */
	uint64_t	db_bucket[GW_N_DB_BUCKETS];	/* cumulative at render time */
	double		db_seconds_sum;
	uint64_t	listener_losses;
	uint64_t	listener_reconnects;
	int			listener_up;	/* 1 while LISTEN ephemeral holds */
	uint64_t	route_reconciles[GW_MAX_ROUTES];	/* by registration index */
	uint64_t	signals_received[BOTHY_KIND_COUNT];	/* decoded, by kind */
	uint64_t	signals_own;	/* this node's own signals, ignored */
	uint64_t	signals_ignored;	/* kinds outside gateway., terminal. and wal. */
	uint64_t	signals_dropped[BOTHY_REASON_COUNT];	/* malformed, by reason */
	uint64_t	signals_refused[GW_CHANNEL_VERDICT_COUNT];	/* not signed with the channel key, by verdict */
	uint64_t	signals_published;	/* this node's signals staged */
	uint64_t	publish_failures;	/* ... that could not be staged */
	uint64_t	send_queue_overflows;
} gw_metrics;

extern gw_metrics gw_stats;

void		gw_metrics_close(int code);
void		gw_metrics_db_call(gw_db_result result, double seconds);

/*
 * What a route's metrics writer appends to: Prometheus text, one family
 * after another.  Out of memory is remembered and fails the whole render.
 */
typedef struct gw_metrics_out gw_metrics_out;

/* printf into the text. */
void		gw_metrics_put(gw_metrics_out *out, const char *fmt, ...)
			__attribute__((format(printf, 2, 3)));

/* "# HELP name help" and "# TYPE name type". */
void		gw_metrics_header(gw_metrics_out *out, const char *name, const char *type,
							  const char *help);

/* A counter, or a gauge, without labels: its HELP, TYPE and one sample. */
void		gw_metrics_counter(gw_metrics_out *out, const char *name, const char *help,
							   uint64_t value);
void		gw_metrics_gauge(gw_metrics_out *out, const char *name, const char *help,
							 long long value);

/*
 * A counter family with one label: values[0..n) named by names[0..n)
 * (a NULL name is left out), as name{label="names[i]"} values[i].
 */
void		gw_metrics_labelled(gw_metrics_out *out, const char *name, const char *help,
								const char *label, const char *const *names,
								const uint64_t *values, int n);

/*
 * Renders every metric, the core's and then every route's, in Prometheus
 * text format into a malloc'd buffer (*out, *len; the caller frees it).
 * db_up and ready are gauges the caller knows.  Returns false when out of
 * memory.
 */
bool		gw_metrics_render(int db_up, int ready, char **out, size_t *len);

#endif							/* BOTHY_GATEWAY_METRICS_H */
