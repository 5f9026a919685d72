/*
 * terminal/relay/wire.c
 *		The stream's text messages (see wire.h).
 */
#include <string.h>

#include <jansson.h>

#include "base64url.h"
#include "terminal/relay/slot.h"
#include "terminal/relay/wire.h"

const char	gw_rwire_waiting[] = "{\"op\":\"waiting\"}";
const char	gw_rwire_paired[] = "{\"op\":\"paired\"}";

bool
gw_rwire_session_path(const char *rest, bothy_uuid *session)
{
	return strlen(rest) == BOTHY_UUID_STRLEN && bothy_uuid_parse(rest, BOTHY_UUID_STRLEN, session);
}

static bool
get_uuid(json_t *root, const char *name, bothy_uuid *out)
{
	json_t	   *v = json_object_get(root, name);

	return json_is_string(v) &&
		bothy_uuid_parse(json_string_value(v), json_string_length(v), out);
}

/* A token is printable ASCII (keys/token.h); anything else cannot verify. */
static bool
get_token(json_t *root, gw_ridentify *out)
{
	json_t	   *v = json_object_get(root, "token");

	if (!json_is_string(v) || !bothy_token_text_ok(json_string_value(v), json_string_length(v)))
		return false;
	out->token_len = json_string_length(v);
	memcpy(out->token, json_string_value(v), out->token_len);
	out->token[out->token_len] = '\0';
	return true;
}

static bool
get_sig(json_t *root, gw_ridentify *out)
{
	json_t	   *v = json_object_get(root, "sig");
	size_t		used;

	return json_is_string(v) &&
		bothy_b64url_decode(json_string_value(v), json_string_length(v), out->sig,
							sizeof(out->sig), &used) &&
		used == sizeof(out->sig);
}

static bool
is_string(json_t *root, const char *name, const char *value)
{
	json_t	   *v = json_object_get(root, name);

	return json_is_string(v) && strlen(value) == json_string_length(v) &&
		strcmp(json_string_value(v), value) == 0;
}

static bool
parse(json_t *root, gw_ridentify *out)
{
	if (!json_is_object(root) || !is_string(root, "op", "identify"))
		return false;
	if (is_string(root, "side", "device"))
	{
		out->side = GW_RSIDE_DEVICE;
		return json_object_size(root) == 3 && get_token(root, out);
	}
	if (is_string(root, "side", "host"))
	{
		out->side = GW_RSIDE_HOST;
		return json_object_size(root) == 6 && get_uuid(root, "host", &out->host) &&
			get_uuid(root, "session", &out->session) &&
			get_uuid(root, "grant", &out->grant) && get_sig(root, out);
	}
	return false;
}

bool
gw_rwire_parse_identify(const char *msg, size_t len, gw_ridentify *out)
{
	json_t	   *root = json_loadb(msg, len, JSON_REJECT_DUPLICATES, NULL);
	bool		ok;

	memset(out, 0, sizeof(*out));
	if (root == NULL)
		return false;
	ok = parse(root, out);
	json_decref(root);
	return ok;
}

bool
gw_rwire_parse_ack(const char *payload, size_t len, uint64_t *out)
{
	uint64_t	n = 0;
	size_t		i;

	if (len == 0 || len > 20 || (payload[0] == '0' && len > 1))
		return false;
	for (i = 0; i < len; i++)
	{
		unsigned	d = (unsigned char) payload[i] - '0';

		if (d > 9 || n > (UINT64_MAX - d) / 10)
			return false;
		n = n * 10 + d;
	}
	*out = n;
	return true;
}
