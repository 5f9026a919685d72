/*
 * metrics.h
 *		The node's counters and their Prometheus text rendering (/metrics).
 *
 * One process-wide set: the loop is single-threaded, so plain integers
 * suffice.  docs/gateway.md lists every name.
 */
#ifndef BOTHY_GATEWAY_METRICS_H
#define BOTHY_GATEWAY_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "signal.h"

typedef enum gw_conn_kind
{
	GW_CONN_UNIDENTIFIED = 0,	/* upgraded, no ready yet */
	GW_CONN_PERSON,				/* a person's device */
	GW_CONN_AGENT,				/* an agent consumer */
	GW_CONN_KIND_COUNT
} gw_conn_kind;

/* The event types sent to clients (deliver.h), counted by type. */
typedef enum gw_event_type
{
	GW_EV_TYPING = 0,
	GW_EV_RUN,
	GW_EV_AGENT_PRESENCE,
	GW_EV_NOTIFICATION,
	GW_EV_AGENT_EVENT,
	GW_EV_AUTOCOMPLETE,
	GW_EV_TYPE_COUNT
} gw_event_type;

/* The REST endpoints (rest.c), counted by endpoint and status class. */
typedef enum gw_rest_endpoint
{
	GW_REST_AGENT_EVENTS = 0,
	GW_REST_AGENTS_PRESENCE,
	GW_REST_PRESENCE,
	GW_REST_ENDPOINT_COUNT
} gw_rest_endpoint;

#define GW_REST_STATUSES {200, 400, 401, 403, 409, 503}
#define GW_N_REST_STATUSES 6

typedef enum gw_db_result
{
	GW_DB_OK = 0,
	GW_DB_ERROR,				/* the database answered with an error */
	GW_DB_TIMEOUT,				/* no answer within --db-timeout */
	GW_DB_RESULT_COUNT
} gw_db_result;

/* The close codes counted by name; every other code counts as "other". */
#define GW_CLOSE_CODES {1000, 1001, 1006, 1007, 1009, 1011, 4001, 4002, 4008, 4009, 4015, 4017}
#define GW_N_CLOSE_CODES 12

#define GW_DB_BUCKETS {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0}
#define GW_N_DB_BUCKETS 8

typedef struct gw_metrics
{
	int64_t		connections[GW_CONN_KIND_COUNT];	/* open now */
	uint64_t	frames_in;		/* complete messages received */
	uint64_t	frames_out;		/* messages written */
	uint64_t	closes[GW_N_CLOSE_CODES + 1];	/* last: other codes */
	uint64_t	db_calls[GW_DB_RESULT_COUNT];
	uint64_t	db_bucket[GW_N_DB_BUCKETS];	/* cumulative at render time */
	double		db_seconds_sum;
	uint64_t	listener_losses;
	uint64_t	listener_reconnects;
	int			listener_up;	/* 1 while LISTEN ephemeral holds */
	uint64_t	route_reconciles;
	uint64_t	signals_received[BOTHY_KIND_COUNT];	/* decoded, by kind */
	uint64_t	signals_own;	/* this node's own signals, ignored */
	uint64_t	signals_ignored;	/* kinds outside gateway. and terminal. */
	uint64_t	signals_dropped[BOTHY_REASON_COUNT];	/* malformed, by reason */
	uint64_t	tokens_refused;
	uint64_t	send_queue_overflows;
	uint64_t	heartbeats_missed;	/* closed with 4009 */
	uint64_t	presence_flushes[2];	/* applied: [0] delta, [1] full */
	uint64_t	presence_write_failures;	/* flushes failed or not sent */
	int64_t		presence_rows;	/* sessions of ready person connections */

	/* cross-node delivery (issue 5) */
	uint64_t	events_delivered[GW_EV_TYPE_COUNT];	/* messages queued, by type */
	uint64_t	audience_queries;	/* thread audience calls */
	uint64_t	audience_failures;	/* ... that failed: their event was not delivered */
	uint64_t	signals_published;	/* this node's signals staged */
	uint64_t	publish_failures;	/* ... that could not be staged */
	uint64_t	typing_dropped;		/* typing ops within --typing-interval */
	uint64_t	typing_rejected;	/* typing ops of a sender who may not see the thread */
	uint64_t	run_snapshots;		/* run.updated snapshots delivered (per run read) */
	uint64_t	runs_coalesced;		/* gateway.run signals folded into another read */
	uint64_t	runs_too_large;		/* run documents over half the send queue */
	uint64_t	run_read_failures;
	uint64_t	hints_not_admitted; /* hints of a thread the recipient may not see */
	uint64_t	heartbeats_persisted;	/* agent heartbeats stored */
	uint64_t	heartbeat_persist_failures;
	uint64_t	agent_presence_announced;	/* takeovers and state changes announced */
	uint64_t	agent_event_read_failures;
	uint64_t	consumer_resumes;	/* lapsed leases held again with no takeover */
	uint64_t	autocomplete_forwarded;
	uint64_t	autocomplete_answered;
	uint64_t	autocomplete_timeouts;
	uint64_t	autocomplete_empty; /* no consumer of the agent here */
	uint64_t	autocomplete_late;	/* answers after the deadline, or not the consumer's */
	uint64_t	rest_requests[GW_REST_ENDPOINT_COUNT][GW_N_REST_STATUSES + 1];	/* last: other */
} gw_metrics;

extern gw_metrics gw_stats;

/* "typing.started", ...: an event type as clients read it. */
const char *gw_event_type_name(gw_event_type type);

void		gw_metrics_close(int code);
void		gw_metrics_rest(gw_rest_endpoint endpoint, unsigned status);
void		gw_metrics_db_call(gw_db_result result, double seconds);

/*
 * Renders every metric in Prometheus text format into a malloc'd buffer
 * (*out, *len; the caller frees it).  db_up and ready are gauges the
 * caller knows.  Returns false when out of memory.
 */
bool		gw_metrics_render(int db_up, int ready, char **out, size_t *len);

#endif							/* BOTHY_GATEWAY_METRICS_H */
