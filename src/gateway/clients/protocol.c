/*
 * clients/protocol.c
 *		Client protocol v1: strict parsing with jansson, and the encoders.
 *
 * The node's own messages here are formatted with snprintf: every value
 * is a UUID, a number, a constant or a token (printable ASCII that needs
 * no escaping, token.h).  Messages that carry text a client or the
 * database chose are encoded with jansson in events.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "clients/protocol.h"

typedef struct op_spec
{
	const char *name;
	gw_op		op;
	const char *fields[4];		/* the members besides "op" that are required */
	const char *optional[2];	/* the members that may be absent */
} op_spec;

static const op_spec ops[] = {
	{"identify", GW_OP_IDENTIFY, {"token"}, {NULL}},
	{"resume", GW_OP_RESUME, {"token"}, {NULL}},
	{"heartbeat", GW_OP_HEARTBEAT, {NULL}, {"state"}},
	{"focus", GW_OP_FOCUS, {"thread"}, {NULL}},
	{"idle", GW_OP_IDLE, {"idle"}, {NULL}},
	{"typing", GW_OP_TYPING, {"thread"}, {NULL}},
	{"ack", GW_OP_ACK, {"event"}, {NULL}},
	{"autocomplete", GW_OP_AUTOCOMPLETE, {"agent", "ref", "query"}, {NULL}},
	{"autocomplete_answer", GW_OP_AUTOCOMPLETE_ANSWER, {"request", "items"}, {NULL}},
};

const char *
gw_op_name(gw_op op)
{
	size_t		i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (ops[i].op == op)
			return ops[i].name;
	return "none";
}

static bool
get_uuid(json_t *v, bothy_uuid *out)
{
	return json_is_string(v) &&
		bothy_uuid_parse(json_string_value(v), json_string_length(v), out);
}

/* A token is printable ASCII (token.h); anything else cannot verify. */
static bool
get_token(json_t *v, gw_msg *m)
{
	size_t		len;
	const char *s;

	if (!json_is_string(v))
		return false;
	s = json_string_value(v);
	len = json_string_length(v);
	if (!bothy_token_text_ok(s, len))
		return false;
	memcpy(m->token, s, len);
	m->token[len] = '\0';
	m->token_len = len;
	return true;
}

static bool
get_text(json_t *v, char *out, size_t min, size_t max)
{
	size_t		len;

	if (!json_is_string(v))
		return false;
	len = json_string_length(v);
	if (len < min || len > max)
		return false;
	/* jansson refuses \u0000 by default, so the text holds no NUL */
	memcpy(out, json_string_value(v), len);
	out[len] = '\0';
	return true;
}

/* At most GW_ITEMS_MAX objects, kept as compact JSON for the person's answer. */
static bool
get_items(json_t *v, gw_msg *m)
{
	size_t		i;
	json_t	   *item;

	if (!json_is_array(v) || json_array_size(v) > GW_ITEMS_MAX)
		return false;
	json_array_foreach(v, i, item)
		if (!json_is_object(item))
		return false;
	m->items = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
	return m->items != NULL;
}

static bool
get_field(const op_spec *spec, const char *name, json_t *v, gw_msg *m)
{
	json_int_t	n;

	switch (spec->op)
	{
		case GW_OP_IDENTIFY:
		case GW_OP_RESUME:
			return get_token(v, m);
		case GW_OP_FOCUS:
			if (json_is_null(v))
			{
				m->has_thread = false;
				return true;
			}
			m->has_thread = true;
			return get_uuid(v, &m->thread);
		case GW_OP_TYPING:
			m->has_thread = true;
			return get_uuid(v, &m->thread);
		case GW_OP_IDLE:
			if (!json_is_boolean(v))
				return false;
			m->idle = json_is_true(v);
			return true;
		case GW_OP_ACK:
			if (!json_is_integer(v))
				return false;
			n = json_integer_value(v);
			if (n < 0 || n > GW_EVENT_MAX)
				return false;
			m->event = (int64_t) n;
			return true;
		case GW_OP_AUTOCOMPLETE:
			if (strcmp(name, "agent") == 0)
				return get_uuid(v, &m->agent);
			if (strcmp(name, "ref") == 0)
				return get_text(v, m->ref, 1, GW_REF_MAX);
			return get_text(v, m->query, 0, GW_QUERY_MAX);
		case GW_OP_HEARTBEAT:
			/* "offline" is not a client's to claim: a silent agent goes offline */
			m->has_state = true;
			if (json_is_string(v) && strcmp(json_string_value(v), "online") == 0)
				m->state = GW_AGENT_ONLINE;
			else if (json_is_string(v) && strcmp(json_string_value(v), "busy") == 0)
				m->state = GW_AGENT_BUSY;
			else
				return false;
			return true;
		case GW_OP_AUTOCOMPLETE_ANSWER:
			if (strcmp(name, "request") == 0)
				return get_uuid(v, &m->request);
			return get_items(v, m);
		case GW_OP_NONE:
			break;
	}
	return false;
}

static size_t
count_names(const char *const *names, size_t max)
{
	size_t		n = 0;

	while (n < max && names[n] != NULL)
		n++;
	return n;
}

static bool
is_member_of(const op_spec *spec, const char *key)
{
	size_t		i;

	if (strcmp(key, "op") == 0)
		return true;
	for (i = 0; i < count_names(spec->fields, 4); i++)
		if (strcmp(key, spec->fields[i]) == 0)
			return true;
	for (i = 0; i < count_names(spec->optional, 2); i++)
		if (strcmp(key, spec->optional[i]) == 0)
			return true;
	return false;
}

gw_parse_status
gw_protocol_parse(const char *buf, size_t len, gw_msg *m)
{
	json_error_t jerr;
	json_t	   *root,
			   *opv;
	const op_spec *spec = NULL;
	gw_parse_status status = GW_PARSE_OK;
	const char *key;
	json_t	   *value;
	size_t		i;

	memset(m, 0, sizeof(*m));
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		return GW_PARSE_NOT_JSON;
	if (!json_is_object(root))
	{
		json_decref(root);
		return GW_PARSE_NOT_OBJECT;
	}
	opv = json_object_get(root, "op");
	if (!json_is_string(opv))
		status = GW_PARSE_NO_OP;
	else
	{
		for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
			if (strcmp(json_string_value(opv), ops[i].name) == 0 &&
				strlen(ops[i].name) == json_string_length(opv))
				spec = &ops[i];
		if (spec == NULL)
			status = GW_PARSE_UNKNOWN_OP;
	}
	if (status == GW_PARSE_OK)
	{
		/* unknown members first: they say more about the client than a bad value */
		json_object_foreach(root, key, value)
		{
			if (!is_member_of(spec, key))
			{
				status = GW_PARSE_UNKNOWN_FIELD;
				break;
			}
		}
	}
	for (i = 0; status == GW_PARSE_OK && i < count_names(spec->fields, 4); i++)
	{
		value = json_object_get(root, spec->fields[i]);
		if (value == NULL)
			status = GW_PARSE_MISSING_FIELD;
		else if (!get_field(spec, spec->fields[i], value, m))
			status = GW_PARSE_BAD_FIELD;
	}
	for (i = 0; status == GW_PARSE_OK && i < count_names(spec->optional, 2); i++)
	{
		value = json_object_get(root, spec->optional[i]);
		if (value != NULL && !get_field(spec, spec->optional[i], value, m))
			status = GW_PARSE_BAD_FIELD;
	}
	json_decref(root);
	if (status != GW_PARSE_OK)
	{
		gw_msg_clear(m);
		memset(m, 0, sizeof(*m));
		return status;
	}
	m->op = spec->op;
	return GW_PARSE_OK;
}

void
gw_msg_clear(gw_msg *m)
{
	free(m->items);
	m->items = NULL;
}

static int
fits(int n, size_t size)
{
	return n < 0 || (size_t) n >= size ? -1 : n;
}

int
gw_encode_ready(char *out, size_t size, const bothy_uuid *session, const bothy_uuid *bind,
				const char *resume, const bothy_uuid *node, int heartbeat_ms,
				bool agent, int64_t acked)
{
	char		s[BOTHY_UUID_STRLEN + 1],
				b[BOTHY_UUID_STRLEN + 1],
				n[BOTHY_UUID_STRLEN + 1];

	bothy_uuid_format(session, s);
	bothy_uuid_format(bind, b);
	bothy_uuid_format(node, n);
	if (agent)
		return fits(snprintf(out, size,
							 "{\"op\":\"ready\",\"session\":\"%s\",\"bind\":\"%s\",\"resume\":\"%s\","
							 "\"node\":\"%s\",\"heartbeat_ms\":%d,\"acked\":%lld}",
							 s, b, resume, n, heartbeat_ms, (long long) acked), size);
	return fits(snprintf(out, size,
						 "{\"op\":\"ready\",\"session\":\"%s\",\"bind\":\"%s\",\"resume\":\"%s\","
						 "\"node\":\"%s\",\"heartbeat_ms\":%d}",
						 s, b, resume, n, heartbeat_ms), size);
}

int
gw_encode_heartbeat_ack(char *out, size_t size)
{
	return fits(snprintf(out, size, "{\"op\":\"heartbeat_ack\"}"), size);
}

int
gw_encode_error(char *out, size_t size, gw_op request, const char *code)
{
	return fits(snprintf(out, size, "{\"op\":\"error\",\"request\":\"%s\",\"code\":\"%s\"}",
						 gw_op_name(request), code), size);
}
