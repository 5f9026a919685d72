/*
 * clients/stats.h
 *		The gateway route's counters, its families of /metrics and its
 *		members of /status.json (the writers it registers, route.h).
 *
 * One process-wide set, beside the core's gw_stats (core/metrics.h):
 * the loop is single-threaded, so plain integers suffice.
 * docs/gateway.md lists every name.
 */
#ifndef BOTHY_GATEWAY_STATS_H
#define BOTHY_GATEWAY_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "core/metrics.h"

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

typedef struct gw_clients_metrics
{
	int64_t		connections[GW_CONN_KIND_COUNT];	/* open now */
	uint64_t	tokens_refused;
	uint64_t	heartbeats_missed;	/* closed with 4009 */
	uint64_t	presence_flushes[2];	/* applied: [0] delta, [1] full */
	uint64_t	presence_write_failures;	/* flushes failed or not sent */
	int64_t		presence_rows;	/* sessions of ready person connections */

	/* cross-node delivery (issue 5) */
	uint64_t	events_delivered[GW_EV_TYPE_COUNT];	/* messages queued, by type */
	uint64_t	audience_queries;	/* thread audience calls */
	uint64_t	signals_unreached;	/* typing and run signals whose reach left this node out */
	uint64_t	audience_failures;	/* ... that failed: their event was not delivered */
	uint64_t	typing_dropped;		/* typing ops within --typing-interval */
	uint64_t	typing_rejected;	/* typing ops of a sender who may not see the thread */
	uint64_t	run_snapshots;		/* run.updated snapshots delivered (per run read) */
	uint64_t	runs_coalesced;		/* gateway.run signals folded into another read */
	uint64_t	device_checks;		/* gateway.device signals checked against the database */
	uint64_t	runs_contradicted;	/* reads whose document's thread or version the signal misstated */
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
} gw_clients_metrics;

extern gw_clients_metrics gw_clients_stats;

/* "typing.started", ...: an event type as clients read it. */
const char *gw_event_type_name(gw_event_type type);

void		gw_metrics_rest(gw_rest_endpoint endpoint, unsigned status);

/* The route's metrics writer: its families of /metrics. */
void		gw_clients_metrics_write(gw_metrics_out *out);

/* The route's members of /status.json; false when out of memory. */
bool		gw_clients_status(json_t *status);

#endif							/* BOTHY_GATEWAY_STATS_H */
