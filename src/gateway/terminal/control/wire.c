/*
 * terminal/control/wire.c
 *		The control connection's messages: strict parsing with jansson,
 *		and the encoders (see wire.h).
 *
 * The node's messages are formatted with snprintf: every value is a
 * UUID, a number, a constant word or base64url, none of which needs
 * escaping in JSON.
 */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base64url.h"
#include "terminal/control/wire.h"

#define MAX_MEMBERS 4

typedef struct op_spec
{
	const char *name;
	gw_top		op;
	const char *members[MAX_MEMBERS];	/* besides "op", every one required */
} op_spec;

static const op_spec ops[] = {
	{"hello", GW_TOP_HELLO, {"host", "sig", "version"}},
	{"pair", GW_TOP_PAIR, {"host", "code", "public_key", "sig"}},
	{"report", GW_TOP_REPORT, {"sessions"}},
	{"heartbeat", GW_TOP_HEARTBEAT, {NULL}},
	{"session.started", GW_TOP_SESSION_STARTED, {"session", "grant"}},
	{"probe_ack", GW_TOP_PROBE_ACK, {"sig"}},
};

/* The lower-case Crockford alphabet of pairing codes (docs/terminal.md). */
static const char code_alphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";

static bool
get_uuid(json_t *v, bothy_uuid *out)
{
	return json_is_string(v) &&
		bothy_uuid_parse(json_string_value(v), json_string_length(v), out);
}

/* Canonical unpadded base64url of exactly n bytes. */
static bool
get_b64(json_t *v, uint8_t *out, size_t n)
{
	uint8_t		buf[GW_TSIG_BYTES];
	size_t		used;

	if (!json_is_string(v) || json_string_length(v) != BOTHY_B64URL_LEN(n) ||
		!bothy_b64url_decode(json_string_value(v), json_string_length(v), buf, sizeof(buf), &used) ||
		used != n)
		return false;
	memcpy(out, buf, n);
	return true;
}

static bool
get_code(json_t *v, char *out)
{
	const char *s;
	size_t		i;

	if (!json_is_string(v) || json_string_length(v) != GW_TCODE_LEN)
		return false;
	s = json_string_value(v);
	for (i = 0; i < GW_TCODE_LEN; i++)
		if (s[i] == '\0' || strchr(code_alphabet, s[i]) == NULL)
			return false;
	memcpy(out, s, GW_TCODE_LEN + 1);
	return true;
}

/* Not kept: the node acts on no client text, so it only checks the form. */
static bool
check_version(json_t *v)
{
	const char *s;
	size_t		len,
				i;

	if (!json_is_string(v))
		return false;
	s = json_string_value(v);
	len = json_string_length(v);
	if (len < 1 || len > GW_TVERSION_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return true;
}

static bool
get_sessions(json_t *v, gw_tmsg *m)
{
	size_t		i;
	json_t	   *item;

	if (!json_is_array(v) || json_array_size(v) > GW_TREPORT_MAX)
		return false;
	json_array_foreach(v, i, item)
		if (!get_uuid(item, &m->sessions[i]))
		return false;
	m->nsessions = json_array_size(v);
	return true;
}

static bool
get_member(const char *name, json_t *v, gw_tmsg *m)
{
	if (strcmp(name, "host") == 0)
		return get_uuid(v, &m->host);
	if (strcmp(name, "sig") == 0)
		return get_b64(v, m->sig, GW_TSIG_BYTES);
	if (strcmp(name, "public_key") == 0)
		return get_b64(v, m->key, GW_TKEY_BYTES);
	if (strcmp(name, "code") == 0)
		return get_code(v, m->code);
	if (strcmp(name, "version") == 0)
		return check_version(v);
	if (strcmp(name, "sessions") == 0)
		return get_sessions(v, m);
	if (strcmp(name, "session") == 0)
		return get_uuid(v, &m->session);
	if (strcmp(name, "grant") == 0)
		return get_uuid(v, &m->grant);
	return false;
}

static bool
is_member(const op_spec *spec, const char *key)
{
	int			i;

	if (strcmp(key, "op") == 0)
		return true;
	for (i = 0; i < MAX_MEMBERS && spec->members[i] != NULL; i++)
		if (strcmp(key, spec->members[i]) == 0)
			return true;
	return false;
}

static const op_spec *
find_op(json_t *opv)
{
	size_t		i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strlen(ops[i].name) == json_string_length(opv) &&
			strcmp(json_string_value(opv), ops[i].name) == 0)
			return &ops[i];
	return NULL;
}

/* The members of root against spec into m: unknown ones first, then each required one. */
static gw_parse_status
read_members(const op_spec *spec, json_t *root, gw_tmsg *m)
{
	const char *key;
	json_t	   *value;
	int			i;

	json_object_foreach(root, key, value)
		if (!is_member(spec, key))
		return GW_PARSE_UNKNOWN_FIELD;
	for (i = 0; i < MAX_MEMBERS && spec->members[i] != NULL; i++)
	{
		value = json_object_get(root, spec->members[i]);
		if (value == NULL)
			return GW_PARSE_MISSING_FIELD;
		if (!get_member(spec->members[i], value, m))
			return GW_PARSE_BAD_FIELD;
	}
	return GW_PARSE_OK;
}

gw_parse_status
gw_tmsg_parse(const char *buf, size_t len, gw_tmsg *out)
{
	json_error_t jerr;
	json_t	   *root,
			   *opv;
	const op_spec *spec;
	gw_tmsg		m;
	gw_parse_status	status;

	memset(&m, 0, sizeof(m));
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL)
		return GW_PARSE_NOT_JSON;
	if (!json_is_object(root))
		status = GW_PARSE_NOT_OBJECT;
	else if (!json_is_string(opv = json_object_get(root, "op")))
		status = GW_PARSE_NO_OP;
	else if ((spec = find_op(opv)) == NULL)
		status = GW_PARSE_UNKNOWN_OP;
	else
	{
		status = read_members(spec, root, &m);
		m.op = spec->op;
	}
	json_decref(root);
	if (status == GW_PARSE_OK)
		*out = m;
	return status;
}

static int
fits(int n, size_t size)
{
	return n < 0 || (size_t) n >= size ? -1 : n;
}

/* {"op":OP,"nonce":...}: a challenge or a probe. */
static int
enc_nonce(char *out, size_t size, const char *op, const uint8_t nonce[GW_TNONCE_BYTES])
{
	char		text[GW_TNONCE_TEXT + 1];

	gw_tnonce_text(nonce, text);
	return fits(snprintf(out, size, "{\"op\":\"%s\",\"nonce\":\"%s\"}", op, text), size);
}

int
gw_tenc_challenge(char *out, size_t size, const uint8_t nonce[GW_TNONCE_BYTES])
{
	return enc_nonce(out, size, "challenge", nonce);
}

int
gw_tenc_probe(char *out, size_t size, const uint8_t nonce[GW_TNONCE_BYTES])
{
	return enc_nonce(out, size, "probe", nonce);
}

int
gw_tenc_ready(char *out, size_t size, const bothy_uuid *conn, gw_thost state,
			  int64_t heartbeat_ms)
{
	char		c[BOTHY_UUID_STRLEN + 1];
	const char *name = gw_thost_name(state);

	if (name == NULL)
		return -1;
	bothy_uuid_format(conn, c);
	return fits(snprintf(out, size, "{\"op\":\"ready\",\"conn\":\"%s\",\"state\":\"%s\",\"heartbeat_ms\":%lld}",
						 c, name, (long long) heartbeat_ms), size);
}

int
gw_tenc_heartbeat_ack(char *out, size_t size)
{
	return fits(snprintf(out, size, "{\"op\":\"heartbeat_ack\"}"), size);
}

int
gw_tenc_session_open(char *out, size_t size, const bothy_uuid *session,
					 const bothy_uuid *grant, const bothy_uuid *device)
{
	char		s[BOTHY_UUID_STRLEN + 1],
				g[BOTHY_UUID_STRLEN + 1],
				d[BOTHY_UUID_STRLEN + 1];

	bothy_uuid_format(session, s);
	bothy_uuid_format(grant, g);
	bothy_uuid_format(device, d);
	return fits(snprintf(out, size, "{\"op\":\"session.open\",\"session\":\"%s\",\"grant\":\"%s\",\"device\":\"%s\"}",
						 s, g, d), size);
}

int
gw_tenc_session_close(char *out, size_t size, const bothy_uuid *session)
{
	char		s[BOTHY_UUID_STRLEN + 1];

	bothy_uuid_format(session, s);
	return fits(snprintf(out, size, "{\"op\":\"session.close\",\"session\":\"%s\"}", s), size);
}
