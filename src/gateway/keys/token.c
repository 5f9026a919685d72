/*
 * keys/token.c
 *		Signing and strict verification of the gateway's tokens (token.h).
 *
 * The format (docs/tokens.md):
 *		bothy1.<key ID>.<base64url(payload)>.<base64url(signature)>
 * The Ed25519 signature covers the text before the last dot, so the format
 * version and the key ID are signed together with the payload.  The payload
 * is one compact JSON object whose members stand in one fixed order:
 *		{"kind":"person-device","person":U,"device":U,"exp":N}
 *		{"kind":"agent","agent":U,"exp":N}
 *		{"kind":"resume","session":U,"person":U,"device":U,"exp":N}
 *		{"kind":"resume","session":U,"agent":U,"exp":N}
 *		{"kind":"terminal","session":U,"grant":U,"person":U,"device":U,"exp":N}
 * Verification checks the signature before it parses anything in the
 * payload, and then accepts only the exact bytes this file would write for
 * the values read: no other member, order, spacing, escape or spelling of
 * a number, so every token has one text.
 */
#include "keys/token.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "base64url.h"

#define TOKEN_PREFIX "bothy1."
#define TOKEN_PREFIX_LEN (sizeof(TOKEN_PREFIX) - 1)
#define SIG_BYTES 64
/* The longest payload is under 200 bytes; this leaves room and a bound */
#define PAYLOAD_MAX 512
#define UUID_MEMBERS_MAX 4

/*
 * Retirement must outlast every token a retiring key can still have signed:
 * the longest lifetime, plus an hour for the slowest cache
 * (bothy.signing_key_cache_ttl is at most 1 h), plus an hour of clock skew.
 */
typedef char bothy_retirement_covers_token_ttl
			[(BOTHY_KEY_RETIRE_AFTER_S >= BOTHY_TOKEN_TTL_MAX + 2 * 3600) ? 1 : -1];

static const char *
kind_name(bothy_token_kind kind)
{
	switch (kind)
	{
		case BOTHY_TOKEN_PERSON_DEVICE:
			return "person-device";
		case BOTHY_TOKEN_AGENT:
			return "agent";
		case BOTHY_TOKEN_RESUME:
			return "resume";
		case BOTHY_TOKEN_TERMINAL:
			return "terminal";
	}
	return NULL;
}

/* The kind named name[0..len), or 0. */
static bothy_token_kind
kind_from_name(const char *name, size_t len)
{
	bothy_token_kind k;

	for (k = BOTHY_TOKEN_PERSON_DEVICE; k <= BOTHY_TOKEN_TERMINAL; k++)
		if (strlen(kind_name(k)) == len && memcmp(kind_name(k), name, len) == 0)
			return k;
	return (bothy_token_kind) 0;
}

/* The UUID members of t's payload, in their one order; how many. */
static int
uuid_members(bothy_token *t, const char *name[UUID_MEMBERS_MAX],
			 bothy_uuid *val[UUID_MEMBERS_MAX])
{
	int			n = 0;

	if (t->kind == BOTHY_TOKEN_RESUME || t->kind == BOTHY_TOKEN_TERMINAL)
	{
		name[n] = "session";
		val[n++] = &t->session;
	}
	if (t->kind == BOTHY_TOKEN_TERMINAL)
	{
		name[n] = "grant";
		val[n++] = &t->grant;
	}
	if (t->kind == BOTHY_TOKEN_AGENT || (t->kind == BOTHY_TOKEN_RESUME && t->is_agent))
	{
		name[n] = "agent";
		val[n++] = &t->agent;
	}
	else
	{
		name[n] = "person";
		val[n++] = &t->person;
		name[n] = "device";
		val[n++] = &t->device;
	}
	return n;
}

/* Appends formatted text at *len; false when out is full. */
static bool
append(char *out, size_t cap, size_t *len, const char *fmt, const char *a, const char *b)
{
	int			n = snprintf(out + *len, cap - *len, fmt, a, b);

	if (n < 0 || (size_t) n >= cap - *len)
		return false;
	*len += (size_t) n;
	return true;
}

/* The canonical payload of t into out, NUL-terminated; its length, or -1. */
static int
encode_payload(const bothy_token *t, char *out, size_t cap)
{
	bothy_token copy = *t;
	const char *name[UUID_MEMBERS_MAX];
	bothy_uuid *val[UUID_MEMBERS_MAX];
	char		text[BOTHY_UUID_STRLEN + 1];
	char		exp[24];
	const char *kind = kind_name(t->kind);
	size_t		len = 0;
	int			n;
	int			i;

	if (kind == NULL || t->expires_at < 1 || t->expires_at > BOTHY_TOKEN_EXPIRES_MAX)
		return -1;
	n = uuid_members(&copy, name, val);
	if (!append(out, cap, &len, "{\"%s\":\"%s\"", "kind", kind))
		return -1;
	for (i = 0; i < n; i++)
	{
		bothy_uuid_format(val[i], text);
		if (!append(out, cap, &len, ",\"%s\":\"%s\"", name[i], text))
			return -1;
	}
	snprintf(exp, sizeof exp, "%lld", (long long) t->expires_at);
	if (!append(out, cap, &len, ",\"%s\":%s}", "exp", exp))
		return -1;
	return (int) len;
}

/* The UUID member name of obj into *u; false unless a canonical UUID string. */
static bool
get_uuid(json_t *obj, const char *name, bothy_uuid *u)
{
	json_t	   *v = json_object_get(obj, name);

	return json_is_string(v) && bothy_uuid_parse(json_string_value(v), json_string_length(v), u);
}

/* The values of a signed payload into *t; false unless it is canonical. */
static bool
parse_payload(const char *buf, size_t len, bothy_token *t)
{
	json_t	   *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
	json_t	   *kind = json_object_get(root, "kind");
	json_t	   *exp = json_object_get(root, "exp");
	const char *name[UUID_MEMBERS_MAX];
	bothy_uuid *val[UUID_MEMBERS_MAX];
	char		again[PAYLOAD_MAX];
	bothy_token p;
	bool		ok;
	int			alen;
	int			n;
	int			i;

	memset(&p, 0, sizeof p);
	ok = json_is_object(root) && json_is_string(kind) && json_is_integer(exp);
	if (ok)
	{
		p.kind = kind_from_name(json_string_value(kind), json_string_length(kind));
		p.is_agent = p.kind == BOTHY_TOKEN_RESUME && json_object_get(root, "agent") != NULL;
		p.expires_at = (int64_t) json_integer_value(exp);
		ok = p.kind != 0;
	}
	n = ok ? uuid_members(&p, name, val) : 0;
	for (i = 0; ok && i < n; i++)
		ok = get_uuid(root, name[i], val[i]);
	json_decref(root);
	if (!ok)
		return false;
	alen = encode_payload(&p, again, sizeof again);
	if (alen < 0 || (size_t) alen != len || memcmp(again, buf, len) != 0)
		return false;
	*t = p;
	return true;
}

bool
bothy_token_sign(const bothy_keystore *ks, bothy_token *t, char *out, size_t outlen)
{
	char		payload[PAYLOAD_MAX];
	char		text[BOTHY_TOKEN_MAX + 1];
	char		key_id[BOTHY_KEY_ID_MAX + 1];
	uint8_t		sig[SIG_BYTES];
	size_t		len;
	int			plen;

	if (out != NULL && outlen > 0)
		out[0] = '\0';
	if (ks == NULL || t == NULL || out == NULL)
		return false;
	plen = encode_payload(t, payload, sizeof payload);
	if (plen < 0)
		return false;

	/* bothy_keystore_sign signs with the key bothy_keystore_signing_id names */
	len = (size_t) snprintf(text, sizeof text, "%s%s.", TOKEN_PREFIX, bothy_keystore_signing_id(ks));
	if (len >= sizeof text ||
		!bothy_b64url_encode((const uint8_t *) payload, (size_t) plen, text + len, sizeof text - len))
		return false;
	len += strlen(text + len);
	if (!bothy_keystore_sign(ks, (const uint8_t *) text, len, sig, key_id) || len + 1 >= sizeof text)
		return false;
	text[len++] = '.';
	if (!bothy_b64url_encode(sig, sizeof sig, text + len, sizeof text - len))
		return false;
	len += strlen(text + len);
	if (len + 1 > outlen)
		return false;
	memcpy(out, text, len + 1);
	memcpy(t->key_id, key_id, sizeof t->key_id);
	return true;
}

/* Unix seconds as milliseconds, saturating rather than overflowing. */
static int64_t
seconds_to_ms(int64_t s)
{
	if (s > INT64_MAX / 1000)
		return INT64_MAX;
	if (s < INT64_MIN / 1000)
		return INT64_MIN;
	return s * 1000;
}

/* The three dots of a token; false unless there are exactly three. */
static bool
split_token(const char *text, size_t len, const char *dot[3])
{
	const char *end = text + len;
	const char *p = text;
	int			i;

	for (i = 0; i < 3; i++)
	{
		dot[i] = memchr(p, '.', (size_t) (end - p));
		if (dot[i] == NULL)
			return false;
		p = dot[i] + 1;
	}
	return memchr(p, '.', (size_t) (end - p)) == NULL;
}

bothy_token_result
bothy_token_verify(const bothy_keystore *ks, const char *text, size_t len,
				   int64_t now, unsigned accept, bothy_token *out)
{
	const char *dot[3];
	const char *kid = text + TOKEN_PREFIX_LEN;
	char		key_id[BOTHY_KEY_ID_MAX + 1];
	uint8_t		payload[PAYLOAD_MAX];
	uint8_t		sig[SIG_BYTES];
	size_t		plen = 0;
	size_t		siglen = 0;
	int64_t		created_ms;
	bothy_token t;

	if (text == NULL || len <= TOKEN_PREFIX_LEN || len > BOTHY_TOKEN_MAX ||
		memcmp(text, TOKEN_PREFIX, TOKEN_PREFIX_LEN) != 0 ||
		!split_token(text, len, dot) ||
		!bothy_key_id_parse(kid, (size_t) (dot[1] - kid), &created_ms) ||
		!bothy_b64url_decode(dot[1] + 1, (size_t) (dot[2] - dot[1] - 1),
							 payload, sizeof payload, &plen) ||
		!bothy_b64url_decode(dot[2] + 1, (size_t) (text + len - dot[2] - 1),
							 sig, sizeof sig, &siglen) ||
		siglen != SIG_BYTES)
		return BOTHY_TOKEN_MALFORMED;
	memcpy(key_id, kid, (size_t) (dot[1] - kid));
	key_id[dot[1] - kid] = '\0';

	switch (bothy_keystore_check(ks, key_id, (const uint8_t *) text, (size_t) (dot[2] - text),
								 sig, seconds_to_ms(now)))
	{
		case BOTHY_KEY_VERIFIED:
			break;
		case BOTHY_KEY_UNKNOWN:
			return BOTHY_TOKEN_UNKNOWN_KEY;
		case BOTHY_KEY_BAD_SIGNATURE:
			return BOTHY_TOKEN_BAD_SIGNATURE;
	}
	if (!parse_payload((const char *) payload, plen, &t))
		return BOTHY_TOKEN_MALFORMED;
	if (now >= t.expires_at)
		return BOTHY_TOKEN_EXPIRED;
	if ((accept & BOTHY_TOKEN_ACCEPT(t.kind)) == 0)
		return BOTHY_TOKEN_WRONG_KIND;
	memcpy(t.key_id, key_id, sizeof t.key_id);
	if (out != NULL)
		*out = t;
	return BOTHY_TOKEN_OK;
}

bool
bothy_token_mint_resume(const bothy_keystore *ks, const bothy_token *who,
						const bothy_uuid *session, int64_t now, char *out, size_t outlen)
{
	bothy_token r;

	if (out != NULL && outlen > 0)
		out[0] = '\0';
	if (who == NULL || session == NULL || kind_name(who->kind) == NULL ||
		now < 0 || now > BOTHY_TOKEN_EXPIRES_MAX - BOTHY_TOKEN_RESUME_TTL)
		return false;
	memset(&r, 0, sizeof r);
	r.kind = BOTHY_TOKEN_RESUME;
	r.is_agent = who->kind == BOTHY_TOKEN_AGENT ||
		(who->kind == BOTHY_TOKEN_RESUME && who->is_agent);
	if (r.is_agent)
		r.agent = who->agent;
	else
	{
		r.person = who->person;
		r.device = who->device;
	}
	r.session = *session;
	r.expires_at = now + BOTHY_TOKEN_RESUME_TTL;
	return bothy_token_sign(ks, &r, out, outlen);
}

bool
bothy_token_mint_terminal(const bothy_keystore *ks, const bothy_uuid *session,
						  const bothy_uuid *grant, const bothy_uuid *person,
						  const bothy_uuid *device, int64_t expires_at, char *out, size_t outlen)
{
	bothy_token t;

	if (out != NULL && outlen > 0)
		out[0] = '\0';
	if (session == NULL || grant == NULL || person == NULL || device == NULL)
		return false;
	memset(&t, 0, sizeof t);
	t.kind = BOTHY_TOKEN_TERMINAL;
	t.session = *session;
	t.grant = *grant;
	t.person = *person;
	t.device = *device;
	t.expires_at = expires_at;
	return bothy_token_sign(ks, &t, out, outlen);
}

const char *
bothy_token_result_name(bothy_token_result r)
{
	switch (r)
	{
		case BOTHY_TOKEN_OK:
			return "ok";
		case BOTHY_TOKEN_MALFORMED:
			return "malformed";
		case BOTHY_TOKEN_UNKNOWN_KEY:
			return "unknown_key";
		case BOTHY_TOKEN_BAD_SIGNATURE:
			return "bad_signature";
		case BOTHY_TOKEN_EXPIRED:
			return "expired";
		case BOTHY_TOKEN_WRONG_KIND:
			return "wrong_kind";
	}
	return "unknown";
}
