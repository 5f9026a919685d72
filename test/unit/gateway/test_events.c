/*
 * test_events.c
 *		The encoders of the events a node sends (src/gateway/clients/events.c) and
 *		the UUID lists of its database calls (src/gateway/core/uuidlist.c).
 *
 * Every message is read back with jansson and compared member by member:
 * the oracle is the JSON, never the encoder's own string.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "clients/events.h"
#include "unit.h"
#include "unit_json.h"
#include "core/uuidlist.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

#define U1 "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b"
#define U2 "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
#define U3 "c0ffee00-1234-4abc-9def-0123456789ab"
#define U4 "d1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6"

/* The message as JSON; NULL (and a diagnostic) when it is not one object. */
static json_t *
load(const gw_text *t)
{
	json_t	   *v = unit_load_object(t->data, (long) t->len);

	if (v == NULL || strlen(t->data) != t->len)
	{
		unit_diag("not one JSON object of its length");
		json_decref(v);
		return NULL;
	}
	return v;
}

/* {"op":"event","type":type,"data":{...}}: the data, or NULL. */
static json_t *
event_data(json_t *msg, const char *type)
{
	if (msg == NULL || json_object_size(msg) != 3 || !unit_member_is(msg, "op", "event") ||
		!unit_member_is(msg, "type", type))
		return NULL;
	return json_object_get(msg, "data");
}

static void
test_time(void)
{
	char		out[25];

	gw_format_time_ms(0, out);
	UNIT_OK(strcmp(out, "1970-01-01T00:00:00.000Z") == 0, "time: the epoch");
	gw_format_time_ms(INT64_C(1796306250123), out);
	UNIT_OK(strcmp(out, "2026-12-03T13:57:30.123Z") == 0, "time: milliseconds kept, UTC");
	gw_format_time_ms(-1, out);
	UNIT_OK(strcmp(out, "1969-12-31T23:59:59.999Z") == 0, "time: one ms before the epoch");
}

static void
test_typing(void)
{
	bothy_uuid	thread = unit_uuid(U1),
				place = unit_uuid(U2),
				who = unit_uuid(U3);
	gw_text		t;
	json_t	   *msg,
			   *d;

	UNIT_OK(gw_event_typing(&t, &thread, &place, &who, INT64_C(1796306250123)), "typing: encodes");
	msg = load(&t);
	d = event_data(msg, "typing.started");
	UNIT_OK(d != NULL && json_object_size(d) == 4 && unit_member_is(d, "thread", U1) &&
			unit_member_is(d, "place", U2) && unit_member_is(d, "principal", U3) &&
			unit_member_is(d, "expires_at", "2026-12-03T13:57:30.123Z"),
			"typing.started: thread, place, principal, expires_at");
	json_decref(msg);
	gw_text_free(&t);

	UNIT_OK(gw_event_typing(&t, &thread, NULL, &who, 0), "typing without a place: encodes");
	msg = load(&t);
	d = event_data(msg, "typing.started");
	UNIT_OK(d != NULL && json_is_null(json_object_get(d, "place")),
			"typing.started: an unknown thread's place is null");
	json_decref(msg);
	gw_text_free(&t);
	UNIT_OK(t.data == NULL && t.len == 0, "gw_text_free leaves an empty text");
}

static void
test_run(void)
{
	static const char doc[] =
		"{\"run\":\"" U1 "\",\"version\":7,\"title\":\"quote \\\" and \\u00e9\",\"n\":[1,2]}";
	static const char *const not_objects[] = {"[1]", "\"s\"", "7", "null", "{", "{\"a\":1,\"a\":2}", ""};
	gw_text		t;
	json_t	   *msg,
			   *d;
	size_t		i;
	bool		pass = true;

	UNIT_OK(gw_event_run(&t, doc, strlen(doc)), "run.updated: a document encodes");
	msg = load(&t);
	d = event_data(msg, "run.updated");
	UNIT_OK(d != NULL && unit_member_is(d, "run", U1) && json_integer_value(json_object_get(d, "version")) == 7 &&
			unit_member_is(d, "title", "quote \" and \xc3\xa9") &&
			json_array_size(json_object_get(d, "n")) == 2,
			"run.updated: the document is the data, re-encoded member for member");
	json_decref(msg);
	gw_text_free(&t);
	for (i = 0; i < N_ELEMS(not_objects); i++)
		pass = unit_case(!gw_event_run(&t, not_objects[i], strlen(not_objects[i])) && t.data == NULL,
						 not_objects[i]) && pass;
	UNIT_OK(pass, "run.updated: an array, a scalar, broken JSON or a duplicate member is refused");
	UNIT_OK(!gw_event_run(&t, doc, strlen(doc) - 1), "run.updated: the length bounds the read");
}

static void
test_agent_presence(void)
{
	bothy_signal sig;
	gw_text		t;
	json_t	   *msg,
			   *d;

	memset(&sig, 0, sizeof(sig));
	sig.kind = BOTHY_KIND_GATEWAY_AGENT_PRESENCE;
	sig.agent = unit_uuid(U1);
	sig.state = BOTHY_AGENT_BUSY;
	UNIT_OK(gw_event_agent_presence(&t, &sig), "agent presence: encodes");
	msg = load(&t);
	d = event_data(msg, "agent.presence_changed");
	UNIT_OK(d != NULL && json_object_size(d) == 2 && unit_member_is(d, "agent", U1) && unit_member_is(d, "state", "busy"),
			"agent.presence_changed: agent and state, no optional member unless set");
	json_decref(msg);
	gw_text_free(&t);

	sig.optional = BOTHY_OPT_BILLING_MODE | BOTHY_OPT_ACTOR;
	sig.billing_mode = BOTHY_BILLING_METERED;
	sig.actor = unit_uuid(U2);
	sig.state = BOTHY_AGENT_OFFLINE;
	UNIT_OK(gw_event_agent_presence(&t, &sig), "agent presence with options: encodes");
	msg = load(&t);
	d = event_data(msg, "agent.presence_changed");
	UNIT_OK(d != NULL && json_object_size(d) == 4 && unit_member_is(d, "state", "offline") &&
			unit_member_is(d, "billing_mode", "metered") && unit_member_is(d, "actor", U2),
			"agent.presence_changed: billing_mode and actor when set");
	json_decref(msg);
	gw_text_free(&t);
	sig.state = BOTHY_AGENT_STATE_COUNT;
	UNIT_OK(!gw_event_agent_presence(&t, &sig), "agent presence: a state out of range is refused");
}

static void
test_notification(void)
{
	bothy_signal hint;
	bothy_uuid	place = unit_uuid(U4);
	gw_text		t;
	json_t	   *msg,
			   *d;

	memset(&hint, 0, sizeof(hint));
	hint.kind = BOTHY_KIND_GATEWAY_HINT;
	hint.recipient = unit_uuid(U1);
	hint.nid = unit_uuid(U2);
	hint.hint_kind = BOTHY_HINT_REPLY;
	hint.quiet = true;
	hint.count = 2147483647;
	UNIT_OK(gw_event_notification(&t, &hint, NULL), "notification: encodes");
	msg = load(&t);
	d = event_data(msg, "notification.created");
	UNIT_OK(d != NULL && json_object_size(d) == 5 && unit_member_is(d, "nid", U2) && unit_member_is(d, "recipient", U1) &&
			unit_member_is(d, "hint_kind", "reply") && json_is_true(json_object_get(d, "quiet")) &&
			json_integer_value(json_object_get(d, "count")) == 2147483647,
			"notification.created: nid, recipient, hint_kind, quiet, count");
	json_decref(msg);
	gw_text_free(&t);

	hint.optional = BOTHY_OPT_THREAD | BOTHY_OPT_MESSAGE | BOTHY_OPT_TARGET;
	hint.thread = unit_uuid(U3);
	hint.message = unit_uuid(U4);
	hint.target = unit_uuid(U1);
	UNIT_OK(gw_event_notification(&t, &hint, &place), "notification with a thread: encodes");
	msg = load(&t);
	d = event_data(msg, "notification.created");
	UNIT_OK(d != NULL && json_object_size(d) == 9 && unit_member_is(d, "thread", U3) && unit_member_is(d, "place", U4) &&
			unit_member_is(d, "message", U4) && unit_member_is(d, "target", U1),
			"notification.created: thread with its place, message, target when given");
	json_decref(msg);
	gw_text_free(&t);
}

static void
test_agent_event_and_poll(void)
{
	gw_text		t;
	json_t	   *msg,
			   *d,
			   *events;
	gw_poll_body *b;
	bothy_uuid	holder = unit_uuid(U3);

	UNIT_OK(gw_event_agent_event(&t, 42, "run.requested", "{\"run\":\"" U1 "\"}", 0), "agent.event: encodes");
	msg = load(&t);
	d = event_data(msg, "agent.event");
	UNIT_OK(d != NULL && json_object_size(d) == 4 && json_integer_value(json_object_get(d, "id")) == 42 &&
			unit_member_is(d, "type", "run.requested") &&
			unit_member_is(json_object_get(d, "data"), "run", U1) &&
			unit_member_is(d, "created_at", "1970-01-01T00:00:00.000Z"),
			"agent.event: id, type, data as JSON, created_at");
	json_decref(msg);
	gw_text_free(&t);
	UNIT_OK(gw_event_agent_event(&t, 1, "x", "7", 0), "agent.event: data may be any JSON value");
	gw_text_free(&t);
	UNIT_OK(!gw_event_agent_event(&t, 1, "x", "{", 0) && t.data == NULL,
			"agent.event: data that is not JSON is refused");

	b = gw_poll_body_new();
	UNIT_OK(b != NULL && gw_poll_body_add(b, 5, "a.b", "{}", 0) && gw_poll_body_add(b, 6, "a.c", "[1]", 1000),
			"poll body: events are added");
	UNIT_OK(gw_poll_body_finish(&t, b, 4, &holder), "poll body: encodes");
	msg = load(&t);
	events = json_object_get(msg, "events");
	UNIT_OK(msg != NULL && json_object_size(msg) == 3 && json_array_size(events) == 2 &&
			json_integer_value(json_object_get(json_array_get(events, 1), "id")) == 6 &&
			json_integer_value(json_object_get(msg, "acked")) == 4 && unit_member_is(msg, "holder", U3),
			"poll body: events in order, acked and the window's holder");
	json_decref(msg);
	gw_text_free(&t);

	b = gw_poll_body_new();
	UNIT_OK(b != NULL && !gw_poll_body_add(b, 5, "a.b", "not json", 0), "poll body: a bad event is refused");
	UNIT_OK(!gw_poll_body_finish(&t, b, 4, &holder) && t.data == NULL,
			"poll body: a body with a refused event is not encoded");
	b = gw_poll_body_new();
	UNIT_OK(gw_poll_body_finish(&t, b, 0, &holder) && strstr(t.data, "\"events\":[]") != NULL,
			"poll body: no event is an empty list");
	gw_text_free(&t);
}

static void
test_autocomplete(void)
{
	static const struct
	{
		const char *name;
		const char *ref;
	}			refs[] = {
		{"one letter", "r"},
		{"quote, backslash and slash", "a\"b\\c/d"},
		{"newline, tab and control bytes", "line\nbreak\ttab\x01\x1f"},
		{"markup", "</script>"},
		{"two-, three- and four-byte UTF-8", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"},
	};
	bothy_uuid	request = unit_uuid(U1),
				who = unit_uuid(U2);
	gw_text		t;
	json_t	   *msg,
			   *d;
	size_t		i;
	bool		pass = true;

	for (i = 0; i < N_ELEMS(refs); i++)
	{
		bool		ok = gw_encode_autocomplete_items(&t, refs[i].ref, "[{\"label\":\"x\"}]");

		msg = ok ? load(&t) : NULL;
		pass = unit_case(msg != NULL && json_object_size(msg) == 3 &&
						 unit_member_is(msg, "op", "autocomplete_result") && unit_member_is(msg, "ref", refs[i].ref) &&
						 json_array_size(json_object_get(msg, "items")) == 1, refs[i].name) && pass;
		json_decref(msg);
		gw_text_free(&t);
	}
	UNIT_OK(pass, "autocomplete_result: the ref back exactly (quotes, controls, markup, UTF-8) and the items");
	UNIT_OK(gw_encode_autocomplete_items(&t, "r", "[]") && strstr(t.data, "\"items\":[]") != NULL,
			"autocomplete_result: empty items");
	gw_text_free(&t);
	UNIT_OK(!gw_encode_autocomplete_items(&t, "r", "{}") && !gw_encode_autocomplete_items(&t, "r", "[") &&
			!gw_encode_autocomplete_items(&t, "\xff", "[]"),
			"autocomplete_result: items not an array, broken JSON, or a ref not UTF-8 is refused");

	UNIT_OK(gw_event_autocomplete_requested(&t, &request, &who, "he\"llo"), "autocomplete request: encodes");
	msg = load(&t);
	d = event_data(msg, "command.autocomplete_requested");
	UNIT_OK(d != NULL && json_object_size(d) == 3 && unit_member_is(d, "request", U1) && unit_member_is(d, "principal", U2) &&
			unit_member_is(d, "query", "he\"llo"),
			"command.autocomplete_requested: request, principal, query");
	json_decref(msg);
	gw_text_free(&t);
}

static void
test_uuid_lists(void)
{
	bothy_uuid	ids[3] = {unit_uuid(U1), unit_uuid(U2), unit_uuid(U3)};
	bothy_uuid *back;
	size_t		n;
	char	   *text = gw_uuid_array_literal(ids, 3);
	static const char *const bad[] = {
		U1 ",", "," U1, U1 ";" U2, U1 "," "not-a-uuid-at-all-but-36-chars-long!", "3F2B8C1E-4D5A-4E6F-9A7B-8C9D0E1F2A3B",
		U1 U2, "x",
	};
	size_t		i;
	bool		pass = true;

	UNIT_OK(text != NULL && strcmp(text, "{" U1 "," U2 "," U3 "}") == 0, "array literal: {a,b,c}");
	free(text);
	text = gw_uuid_array_literal(ids, 0);
	UNIT_OK(text != NULL && strcmp(text, "{}") == 0, "array literal: an empty list is {}");
	free(text);

	UNIT_OK(gw_parse_uuid_list(U1 "," U2 "," U3, &back, &n) && n == 3 &&
			bothy_uuid_compare(&back[2], &ids[2]) == 0, "list: three UUIDs read back in order");
	free(back);
	UNIT_OK(gw_parse_uuid_list("", &back, &n) && n == 0 && back == NULL, "list: empty text is none");
	for (i = 0; i < N_ELEMS(bad); i++)
	{
		back = (bothy_uuid *) 1;
		pass = unit_case(!gw_parse_uuid_list(bad[i], &back, &n) && back == NULL, bad[i]) && pass;
	}
	UNIT_OK(pass, "list: a trailing or leading comma, another separator, a non-UUID, upper case, "
			"two UUIDs run together are refused");
}

int
main(void)
{
	test_time();
	test_typing();
	test_run();
	test_agent_presence();
	test_notification();
	test_agent_event_and_poll();
	test_autocomplete();
	test_uuid_lists();
	return unit_done();
}
