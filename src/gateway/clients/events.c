/*
 * clients/events.c
 *		Encoders of the events a node sends (see events.h).
 *
 * Built with jansson so that every text that did not come from us (a run
 * document, an agent event's data, an autocomplete query or answer) is
 * parsed and re-encoded, never pasted: a client always receives one valid
 * JSON object, whatever a replaced seam function returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "clients/events.h"

void
gw_text_free(gw_text *t)
{
	free(t->data);
	t->data = NULL;
	t->len = 0;
}

void
gw_format_time_ms(int64_t ms, char out[25])
{
	time_t		secs = (time_t) (ms / 1000);
	int			millis = (int) (ms % 1000);
	struct tm	tm;

	if (millis < 0)
	{
		millis += 1000;
		secs -= 1;
	}
	char		text[64];

	gmtime_r(&secs, &tm);
	/* a year past 9999 cannot come from a clock; the text stays 24 bytes */
	snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
			 (tm.tm_year + 1900) % 10000, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
	memcpy(out, text, 24);
	out[24] = '\0';
}

static json_t *
uuid_value(const bothy_uuid *u)
{
	char		text[BOTHY_UUID_STRLEN + 1];

	bothy_uuid_format(u, text);
	return json_stringn(text, BOTHY_UUID_STRLEN);
}

/* Sets key to the UUID; false when out of memory. */
static bool
set_uuid(json_t *obj, const char *key, const bothy_uuid *u)
{
	return json_object_set_new(obj, key, uuid_value(u)) == 0;
}

static bool
set_time(json_t *obj, const char *key, int64_t ms)
{
	char		text[25];

	gw_format_time_ms(ms, text);
	return json_object_set_new(obj, key, json_string(text)) == 0;
}

/* Encodes msg into out and drops msg; false when msg is NULL or on failure. */
static bool
finish(gw_text *out, json_t *msg)
{
	out->data = NULL;
	out->len = 0;
	if (msg == NULL)
		return false;
	out->data = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(msg);
	if (out->data == NULL)
		return false;
	out->len = strlen(out->data);
	return true;
}

/* {"op":"event","type":type,"data":data}, taking data; NULL on failure. */
static json_t *
event(const char *type, json_t *data)
{
	json_t	   *msg;

	if (data == NULL)
		return NULL;
	msg = json_object();
	if (msg == NULL || json_object_set_new(msg, "op", json_string("event")) != 0 ||
		json_object_set_new(msg, "type", json_string(type)) != 0 ||
		json_object_set_new(msg, "data", data) != 0)
	{
		json_decref(msg);
		return NULL;
	}
	return msg;
}

bool
gw_event_typing(gw_text *out, const bothy_uuid *thread, const bothy_uuid *place,
				const bothy_uuid *principal, int64_t expires_at_ms)
{
	json_t	   *d = json_object();

	if (d == NULL || !set_uuid(d, "thread", thread) ||
		json_object_set_new(d, "place", place != NULL ? uuid_value(place) : json_null()) != 0 ||
		!set_uuid(d, "principal", principal) || !set_time(d, "expires_at", expires_at_ms))
	{
		json_decref(d);
		return finish(out, NULL);
	}
	return finish(out, event("typing.started", d));
}

bool
gw_event_run(gw_text *out, const char *document, size_t len)
{
	json_t	   *d = json_loadb(document, len, JSON_REJECT_DUPLICATES, NULL);

	if (d != NULL && !json_is_object(d))
	{
		json_decref(d);
		d = NULL;
	}
	return finish(out, event("run.updated", d));
}

bool
gw_event_agent_presence(gw_text *out, const bothy_signal *sig)
{
	json_t	   *d = json_object();
	bool		ok = d != NULL && set_uuid(d, "agent", &sig->agent) &&
		json_object_set_new(d, "state", json_string(bothy_agent_state_code(sig->state))) == 0;

	if (ok && (sig->optional & BOTHY_OPT_BILLING_MODE))
		ok = json_object_set_new(d, "billing_mode",
								 json_string(bothy_billing_mode_code(sig->billing_mode))) == 0;
	if (ok && (sig->optional & BOTHY_OPT_ACTOR))
		ok = set_uuid(d, "actor", &sig->actor);
	if (!ok)
	{
		json_decref(d);
		return finish(out, NULL);
	}
	return finish(out, event("agent.presence_changed", d));
}

bool
gw_event_notification(gw_text *out, const bothy_signal *hint, const bothy_uuid *place)
{
	json_t	   *d = json_object();
	bool		ok = d != NULL && set_uuid(d, "nid", &hint->nid) &&
		set_uuid(d, "recipient", &hint->recipient) &&
		json_object_set_new(d, "hint_kind", json_string(bothy_hint_kind_code(hint->hint_kind))) == 0 &&
		json_object_set_new(d, "quiet", json_boolean(hint->quiet)) == 0 &&
		json_object_set_new(d, "count", json_integer(hint->count)) == 0;

	if (ok && (hint->optional & BOTHY_OPT_THREAD))
		ok = set_uuid(d, "thread", &hint->thread) &&
			(place == NULL || set_uuid(d, "place", place));
	if (ok && (hint->optional & BOTHY_OPT_MESSAGE))
		ok = set_uuid(d, "message", &hint->message);
	if (ok && (hint->optional & BOTHY_OPT_TARGET))
		ok = set_uuid(d, "target", &hint->target);
	if (!ok)
	{
		json_decref(d);
		return finish(out, NULL);
	}
	return finish(out, event("notification.created", d));
}

/* The data of agent.event; NULL when data is not JSON or out of memory. */
static json_t *
agent_event_data(int64_t id, const char *type, const char *data, int64_t created_at_ms)
{
	json_t	   *d = json_object();
	json_t	   *payload = json_loads(data, JSON_DECODE_ANY, NULL);

	if (d == NULL || payload == NULL ||
		json_object_set_new(d, "id", json_integer(id)) != 0 ||
		json_object_set_new(d, "type", json_string(type)) != 0 ||
		json_object_set(d, "data", payload) != 0 || !set_time(d, "created_at", created_at_ms))
	{
		json_decref(d);
		d = NULL;
	}
	json_decref(payload);
	return d;
}

bool
gw_event_agent_event(gw_text *out, int64_t id, const char *type, const char *data,
					 int64_t created_at_ms)
{
	return finish(out, event("agent.event", agent_event_data(id, type, data, created_at_ms)));
}

struct gw_poll_body
{
	json_t	   *events;
	bool		failed;
};

gw_poll_body *
gw_poll_body_new(void)
{
	gw_poll_body *b = calloc(1, sizeof(*b));

	if (b != NULL && (b->events = json_array()) == NULL)
	{
		free(b);
		b = NULL;
	}
	return b;
}

bool
gw_poll_body_add(gw_poll_body *b, int64_t id, const char *type, const char *data,
				 int64_t created_at_ms)
{
	json_t	   *d = agent_event_data(id, type, data, created_at_ms);

	if (d == NULL || json_array_append_new(b->events, d) != 0)
		b->failed = true;
	return !b->failed;
}

bool
gw_poll_body_finish(gw_text *out, gw_poll_body *b, int64_t acked, const bothy_uuid *holder)
{
	json_t	   *msg = NULL;

	if (!b->failed)
		msg = json_pack("{s:O, s:I, s:o}", "events", b->events, "acked", (json_int_t) acked,
						"holder", uuid_value(holder));
	json_decref(b->events);
	free(b);
	return finish(out, msg);
}

bool
gw_event_autocomplete_requested(gw_text *out, const bothy_uuid *request,
								const bothy_uuid *principal, const char *query)
{
	json_t	   *d = json_object();

	if (d == NULL || !set_uuid(d, "request", request) || !set_uuid(d, "principal", principal) ||
		json_object_set_new(d, "query", json_string(query)) != 0)
	{
		json_decref(d);
		return finish(out, NULL);
	}
	return finish(out, event("command.autocomplete_requested", d));
}

bool
gw_encode_autocomplete_items(gw_text *out, const char *ref, const char *items)
{
	json_t	   *list = json_loads(items, 0, NULL);
	json_t	   *msg;

	if (list == NULL || !json_is_array(list))
	{
		json_decref(list);
		return finish(out, NULL);
	}
	msg = json_pack("{s:s, s:s, s:o}", "op", "autocomplete_result", "ref", ref, "items", list);
	return finish(out, msg);
}
