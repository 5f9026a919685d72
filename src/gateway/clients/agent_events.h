/*
 * clients/agent_events.h
 *		Reading an agent's events for its holder (bothy.agent_events_after),
 *		shared by the consumer connection's stream (stream.c) and the REST
 *		poll (rest.c): one statement, one way to read its rows.
 */
#ifndef BOTHY_GATEWAY_AGENT_EVENTS_H
#define BOTHY_GATEWAY_AGENT_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "core/db.h"
#include "uuid.h"

/* bothy.agent_events_after's most events in one call. */
#define GW_AGENT_EVENTS_MAX 1000

/* One row: valid while the result is. */
typedef struct gw_agent_event_row
{
	int64_t		id;
	const char *type;			/* a lower-case code */
	const char *data;			/* JSON text */
	int64_t		created_at_ms;
} gw_agent_event_row;

/*
 * Reads up to max events of agent after `after`, as holder sees them (any
 * other holder reads none).  NULL when the call could not be queued.
 */
gw_db_call *gw_agent_events_read(const bothy_uuid *agent, const bothy_uuid *holder,
								 int64_t after, int max, gw_db_cb cb, void *arg);

/*
 * Row i of the answer; false (and one log record) when it is not what the
 * statement returns or its ID is not above `after`.
 */
bool		gw_agent_event_row_get(const PGresult *res, int i, int64_t after,
								   gw_agent_event_row *row);

#endif							/* BOTHY_GATEWAY_AGENT_EVENTS_H */
