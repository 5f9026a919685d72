/*
 * clients/events.h
 *		The events a node sends to its clients ({"op":"event","type":...,
 *		"data":{...}}, docs/protocol.md): their encoders, and the delivery of
 *		one encoded event to a set of local connections.
 *
 * An event is encoded once and then queued on every connection it goes
 * to, so a run update for 10,000 subscribers costs one encoding.  The
 * encoders are pure (jansson, no I/O) and unit-tested in
 * test/unit/gateway/test_events.c.
 */
#ifndef BOTHY_GATEWAY_EVENTS_H
#define BOTHY_GATEWAY_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "signal.h"
#include "uuid.h"

/* An encoded message: malloc'd text and its length; free with gw_text_free. */
typedef struct gw_text
{
	char	   *data;
	size_t		len;
} gw_text;

void		gw_text_free(gw_text *t);

/* "2026-12-03T13:45:01.234Z" of Unix milliseconds (out: 25 bytes). */
void		gw_format_time_ms(int64_t ms, char out[25]);

/*
 * typing.started: {"thread","place" (null when unknown),"principal","expires_at"}.
 * False when out of memory.
 */
bool		gw_event_typing(gw_text *out, const bothy_uuid *thread, const bothy_uuid *place,
							const bothy_uuid *principal, int64_t expires_at_ms);

/*
 * run.updated with the run document as the database gave it (JSON text of
 * an object).  False when it is not a JSON object or out of memory.
 */
bool		gw_event_run(gw_text *out, const char *document, size_t len);

/* agent.presence_changed: {"agent","state"} + "billing_mode","actor" when set. */
bool		gw_event_agent_presence(gw_text *out, const bothy_signal *sig);

/*
 * notification.created from a gateway.hint: {"nid","recipient","hint_kind",
 * "quiet","count"} + "thread","place","message","target" when given
 * (place may be NULL).
 */
bool		gw_event_notification(gw_text *out, const bothy_signal *hint,
								  const bothy_uuid *place);

/*
 * agent.event: {"id","type","data","created_at"}; data is the JSON text the
 * database gave.  False when data is not JSON or out of memory.
 */
bool		gw_event_agent_event(gw_text *out, int64_t id, const char *type,
								 const char *data, int64_t created_at_ms);

/*
 * The body of a REST poll: {"events":[agent.event data...],"acked":N,
 * "holder":UUID} (holder: the poll window's holder ID, what the agent's
 * run starts name, bothy.run_start).
 * gw_poll_body_new, one gw_poll_body_add per event, gw_poll_body_finish
 * (which frees the builder whatever it returns).
 */
typedef struct gw_poll_body gw_poll_body;
gw_poll_body *gw_poll_body_new(void);
bool		gw_poll_body_add(gw_poll_body *b, int64_t id, const char *type,
							 const char *data, int64_t created_at_ms);
bool		gw_poll_body_finish(gw_text *out, gw_poll_body *b, int64_t acked,
								const bothy_uuid *holder);

/* command.autocomplete_requested: {"request","principal","query"}. */
bool		gw_event_autocomplete_requested(gw_text *out, const bothy_uuid *request,
											const bothy_uuid *principal, const char *query);

/* {"op":"autocomplete_result","ref":ref,"items":items} (items: a JSON array text). */
bool		gw_encode_autocomplete_items(gw_text *out, const char *ref, const char *items);

#endif							/* BOTHY_GATEWAY_EVENTS_H */
