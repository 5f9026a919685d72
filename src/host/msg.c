/*
 * host/msg.c
 *		The JSON ops (see msg.h): strict parsing with jansson, building with
 *		jansson too, so no value is ever spliced into JSON by hand.
 */
#include <string.h>

#include <jansson.h>

#include "host/msg.h"

/* Each op the server sends, and the members it carries besides "op". */
typedef struct op_spec
{
	const char *name;
	host_op		op;
	const char *members[4];		/* NULL-terminated */
} op_spec;

static const op_spec ops[] = {
	{"challenge", HOST_OP_CHALLENGE, {"nonce", NULL}},
	{"ready", HOST_OP_READY, {"conn", "state", "heartbeat_ms", NULL}},
	{"heartbeat_ack", HOST_OP_HEARTBEAT_ACK, {NULL}},
	{"session.open", HOST_OP_SESSION_OPEN, {"session", "grant", "device", NULL}},
	{"session.close", HOST_OP_SESSION_CLOSE, {"session", NULL}},
	{"probe", HOST_OP_PROBE, {"nonce", NULL}},
	{"waiting", HOST_OP_WAITING, {NULL}},
	{"paired", HOST_OP_PAIRED, {NULL}},
};

static bool
get_uuid(json_t *obj, const char *name, bothy_uuid *out)
{
	json_t	   *v = json_object_get(obj, name);

	return json_is_string(v) &&
		bothy_uuid_parse(json_string_value(v), json_string_length(v), out);
}

static bool
get_nonce(json_t *obj, char out[HOST_NONCE_TEXT_MAX + 1])
{
	json_t	   *v = json_object_get(obj, "nonce");
	size_t		len;

	if (!json_is_string(v))
		return false;
	len = json_string_length(v);
	if (!host_proof_nonce_ok(json_string_value(v), len))
		return false;
	memcpy(out, json_string_value(v), len);
	out[len] = '\0';
	return true;
}

static bool
get_state(json_t *obj, host_state *out)
{
	json_t	   *v = json_object_get(obj, "state");
	const char *s = json_string_value(v);

	if (s == NULL)
		return false;
	/* a host that is pairing or disabled gets no ready: its connection closes */
	if (strcmp(s, "confirming") == 0)
		*out = HOST_STATE_CONFIRMING;
	else if (strcmp(s, "active") == 0)
		*out = HOST_STATE_ACTIVE;
	else
		return false;
	return json_string_length(v) == strlen(s);
}

static bool
get_heartbeat(json_t *obj, uint32_t *out)
{
	json_t	   *v = json_object_get(obj, "heartbeat_ms");
	json_int_t	n;

	if (!json_is_integer(v))
		return false;
	n = json_integer_value(v);
	if (n < HOST_HEARTBEAT_MIN_MS || n > HOST_HEARTBEAT_MAX_MS)
		return false;
	*out = (uint32_t) n;
	return true;
}

/* The members of the op's spec, each present and well-formed. */
static bool
read_members(json_t *obj, host_msg *m)
{
	switch (m->op)
	{
		case HOST_OP_CHALLENGE:
		case HOST_OP_PROBE:
			return get_nonce(obj, m->nonce);
		case HOST_OP_READY:
			return get_uuid(obj, "conn", &m->conn) && get_state(obj, &m->state) &&
				get_heartbeat(obj, &m->heartbeat_ms);
		case HOST_OP_SESSION_OPEN:
			return get_uuid(obj, "session", &m->session) &&
				get_uuid(obj, "grant", &m->grant) && get_uuid(obj, "device", &m->device);
		case HOST_OP_SESSION_CLOSE:
			return get_uuid(obj, "session", &m->session);
		case HOST_OP_HEARTBEAT_ACK:
		case HOST_OP_WAITING:
		case HOST_OP_PAIRED:
			return true;
	}
	return false;
}

host_msg_result
host_msg_parse(const char *buf, size_t len, host_msg *m)
{
	json_error_t jerr;
	json_t	   *obj;
	json_t	   *op;
	const op_spec *spec = NULL;
	host_msg_result result = HOST_MSG_MALFORMED;
	size_t		i;
	size_t		nmembers = 1;

	memset(m, 0, sizeof(m[0]));
	if (len == 0 || len > HOST_MSG_MAX)
		return HOST_MSG_MALFORMED;
	/* NUL in a string (\u0000) stays refused: JSON_ALLOW_NUL is not given */
	obj = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (obj == NULL)
		return HOST_MSG_MALFORMED;
	op = json_object_get(obj, "op");
	if (!json_is_object(obj) || !json_is_string(op))
		goto done;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
	{
		if (strcmp(json_string_value(op), ops[i].name) == 0 &&
			json_string_length(op) == strlen(ops[i].name))
			spec = &ops[i];
	}
	if (spec == NULL)
	{
		result = HOST_MSG_UNKNOWN_OP;
		goto done;
	}
	m->op = spec->op;
	for (i = 0; spec->members[i] != NULL; i++)
		nmembers++;

	/*
	 * Every member of the op, each once and well-formed; one more is the
	 * node's to add (protocol.md: the node's messages may gain optional
	 * members, which a host service ignores), so a node upgraded before
	 * its hosts does not cut them off.
	 */
	if (json_object_size(obj) >= nmembers && read_members(obj, m))
		result = HOST_MSG_OK;
done:
	json_decref(obj);
	return result;
}

/* Dumps obj (taking it) compactly into out. */
static size_t
dump(json_t *obj, char *out, size_t cap)
{
	size_t		n;

	if (cap > 0)
		out[0] = '\0';
	if (obj == NULL)
		return 0;
	n = json_dumpb(obj, out, cap, JSON_COMPACT);
	json_decref(obj);
	if (n == 0 || n >= cap)
	{
		if (cap > 0)
			out[0] = '\0';
		return 0;
	}
	out[n] = '\0';
	return n;
}

size_t
host_msg_hello(char *out, size_t cap, const char *host, const char *sig, const char *version)
{
	return dump(json_pack("{s:s,s:s,s:s,s:s}", "op", "hello", "host", host, "sig", sig,
						  "version", version), out, cap);
}

size_t
host_msg_pair(char *out, size_t cap, const char *host, const char *code,
			  const char *public_key, const char *sig)
{
	return dump(json_pack("{s:s,s:s,s:s,s:s,s:s}", "op", "pair", "host", host, "code", code,
						  "public_key", public_key, "sig", sig), out, cap);
}

size_t
host_msg_report(char *out, size_t cap, const bothy_uuid *sessions, size_t n)
{
	json_t	   *list = json_array();
	size_t		i;

	for (i = 0; list != NULL && i < n; i++)
	{
		char		text[BOTHY_UUID_STRLEN + 1];

		bothy_uuid_format(&sessions[i], text);
		if (json_array_append_new(list, json_string(text)) != 0)
		{
			json_decref(list);
			list = NULL;
		}
	}
	if (list == NULL)
		return dump(NULL, out, cap);
	return dump(json_pack("{s:s,s:o}", "op", "report", "sessions", list), out, cap);
}

size_t
host_msg_heartbeat(char *out, size_t cap)
{
	return dump(json_pack("{s:s}", "op", "heartbeat"), out, cap);
}

size_t
host_msg_started(char *out, size_t cap, const bothy_uuid *session, const bothy_uuid *grant)
{
	char		s[BOTHY_UUID_STRLEN + 1];
	char		g[BOTHY_UUID_STRLEN + 1];

	bothy_uuid_format(session, s);
	bothy_uuid_format(grant, g);
	return dump(json_pack("{s:s,s:s,s:s}", "op", "session.started", "session", s, "grant", g),
				out, cap);
}

size_t
host_msg_probe_ack(char *out, size_t cap, const char *sig)
{
	return dump(json_pack("{s:s,s:s}", "op", "probe_ack", "sig", sig), out, cap);
}

size_t
host_msg_identify(char *out, size_t cap, const char *host, const bothy_uuid *session,
				  const bothy_uuid *grant, const char *sig)
{
	char		s[BOTHY_UUID_STRLEN + 1];
	char		g[BOTHY_UUID_STRLEN + 1];

	bothy_uuid_format(session, s);
	bothy_uuid_format(grant, g);
	return dump(json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "op", "identify", "side", "host",
						  "host", host, "session", s, "grant", g, "sig", sig), out, cap);
}
