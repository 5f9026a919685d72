/*
 * signal.c
 *		The member table of every signal kind, the strict decoder, the
 *		compact encoder and the reasons (see signal.h, docs/signals.md).
 *
 * The tables below are the one description of the format: the decoder, the
 * encoder and the checks of the encoder all walk them, so adding a member
 * is one line here and a line in the docs.
 */
#include "signal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hex.h"
#include "json_scan.h"

/* ---------------------------------------------------------------------
 * Tables
 * ---------------------------------------------------------------------
 */

typedef enum bothy_form
{
	BOTHY_FORM_UUID,
	BOTHY_FORM_UUIDV7,
	BOTHY_FORM_STATE,
	BOTHY_FORM_BILLING_MODE,
	BOTHY_FORM_HINT_KIND,
	BOTHY_FORM_INTEGER,			/* 0 .. the member's max, into its int64_t field */
	BOTHY_FORM_BOOL,
	BOTHY_FORM_NODES			/* node IDs of 32 hex digits each, into reach */
} bothy_form;

typedef enum bothy_member_id
{
	BOTHY_M_NODE,
	BOTHY_M_THREAD,
	BOTHY_M_PRINCIPAL,
	BOTHY_M_RUN,
	BOTHY_M_VERSION,
	BOTHY_M_AGENT,
	BOTHY_M_STATE,
	BOTHY_M_BILLING_MODE,
	BOTHY_M_ACTOR,
	BOTHY_M_DEVICE,
	BOTHY_M_GATEWAY_SESSION,
	BOTHY_M_BIND_ID,
	BOTHY_M_RECIPIENT,
	BOTHY_M_NID,
	BOTHY_M_HINT_KIND,
	BOTHY_M_QUIET,
	BOTHY_M_COUNT,
	BOTHY_M_MESSAGE,
	BOTHY_M_TARGET,
	BOTHY_M_HOST_ID,
	BOTHY_M_SESSION_ID,
	BOTHY_M_CONN_ID,
	BOTHY_M_EVENT,
	BOTHY_M_SEQ,
	BOTHY_M_LSN,
	BOTHY_M_REACH,
	BOTHY_M__COUNT
} bothy_member_id;

typedef struct bothy_member_def
{
	const char *name;
	bothy_form	form;
	size_t		offset;			/* in bothy_signal: the UUID or the integer field */
	int64_t		max;			/* the largest value of an integer member */
} bothy_member_def;

#define BOTHY_ID(field, form) {#field, form, offsetof(bothy_signal, field), 0}
#define BOTHY_INT(field, max) {#field, BOTHY_FORM_INTEGER, offsetof(bothy_signal, field), max}
#define BOTHY_SCALAR(field, form) {#field, form, 0, 0}

static const bothy_member_def bothy_members[BOTHY_M__COUNT] = {
	[BOTHY_M_NODE] = BOTHY_ID(node, BOTHY_FORM_UUIDV7),
	[BOTHY_M_THREAD] = BOTHY_ID(thread, BOTHY_FORM_UUID),
	[BOTHY_M_PRINCIPAL] = BOTHY_ID(principal, BOTHY_FORM_UUID),
	[BOTHY_M_RUN] = BOTHY_ID(run, BOTHY_FORM_UUID),
	[BOTHY_M_VERSION] = BOTHY_INT(version, BOTHY_SIGNAL_VERSION_MAX),
	[BOTHY_M_AGENT] = BOTHY_ID(agent, BOTHY_FORM_UUID),
	[BOTHY_M_STATE] = BOTHY_SCALAR(state, BOTHY_FORM_STATE),
	[BOTHY_M_BILLING_MODE] = BOTHY_SCALAR(billing_mode, BOTHY_FORM_BILLING_MODE),
	[BOTHY_M_ACTOR] = BOTHY_ID(actor, BOTHY_FORM_UUID),
	[BOTHY_M_DEVICE] = BOTHY_ID(device, BOTHY_FORM_UUID),
	[BOTHY_M_GATEWAY_SESSION] = BOTHY_ID(gateway_session, BOTHY_FORM_UUID),
	[BOTHY_M_BIND_ID] = BOTHY_ID(bind_id, BOTHY_FORM_UUIDV7),
	[BOTHY_M_RECIPIENT] = BOTHY_ID(recipient, BOTHY_FORM_UUID),
	[BOTHY_M_NID] = BOTHY_ID(nid, BOTHY_FORM_UUID),
	[BOTHY_M_HINT_KIND] = BOTHY_SCALAR(hint_kind, BOTHY_FORM_HINT_KIND),
	[BOTHY_M_QUIET] = BOTHY_SCALAR(quiet, BOTHY_FORM_BOOL),
	[BOTHY_M_COUNT] = BOTHY_INT(count, BOTHY_SIGNAL_COUNT_MAX),
	[BOTHY_M_MESSAGE] = BOTHY_ID(message, BOTHY_FORM_UUID),
	[BOTHY_M_TARGET] = BOTHY_ID(target, BOTHY_FORM_UUID),
	[BOTHY_M_HOST_ID] = BOTHY_ID(host_id, BOTHY_FORM_UUID),
	[BOTHY_M_SESSION_ID] = BOTHY_ID(session_id, BOTHY_FORM_UUID),
	[BOTHY_M_CONN_ID] = BOTHY_ID(conn_id, BOTHY_FORM_UUIDV7),
	[BOTHY_M_EVENT] = BOTHY_INT(event, BOTHY_SIGNAL_VERSION_MAX),
	[BOTHY_M_SEQ] = BOTHY_INT(seq, BOTHY_SIGNAL_VERSION_MAX),
	[BOTHY_M_LSN] = BOTHY_INT(lsn, BOTHY_SIGNAL_LSN_MAX),
	[BOTHY_M_REACH] = BOTHY_SCALAR(reach, BOTHY_FORM_NODES),
};

#define BOTHY_KIND_MAX_MEMBERS 9

typedef struct bothy_kind_member
{
	unsigned char member;		/* a bothy_member_id */
	unsigned char opt;			/* its BOTHY_OPT_* bit; 0 when required */
} bothy_kind_member;

typedef struct bothy_kind_def
{
	const char *name;
	size_t		n;
	bothy_kind_member m[BOTHY_KIND_MAX_MEMBERS];	/* in encoding order */
} bothy_kind_def;

#define BOTHY_REQ(id) {BOTHY_M_##id, 0}
#define BOTHY_OPT(id) {BOTHY_M_##id, BOTHY_OPT_##id}

static const bothy_kind_def bothy_kinds[BOTHY_KIND_COUNT] = {
	[BOTHY_KIND_NONE] = {NULL, 0, {{0, 0}}},
	[BOTHY_KIND_GATEWAY_TYPING] = {"gateway.typing", 4, {
			BOTHY_REQ(NODE), BOTHY_REQ(THREAD), BOTHY_REQ(PRINCIPAL), BOTHY_OPT(REACH)}},
	[BOTHY_KIND_GATEWAY_RUN] = {"gateway.run", 5, {
			BOTHY_REQ(NODE), BOTHY_REQ(RUN), BOTHY_REQ(THREAD), BOTHY_REQ(VERSION),
			BOTHY_OPT(REACH)}},
	[BOTHY_KIND_GATEWAY_AGENT_PRESENCE] = {"gateway.agent_presence", 5, {
			BOTHY_REQ(NODE), BOTHY_REQ(AGENT), BOTHY_REQ(STATE),
			BOTHY_OPT(BILLING_MODE), BOTHY_OPT(ACTOR)}},
	[BOTHY_KIND_GATEWAY_DEVICE] = {"gateway.device", 4, {
			BOTHY_REQ(NODE), BOTHY_REQ(DEVICE), BOTHY_REQ(GATEWAY_SESSION),
			BOTHY_REQ(BIND_ID)}},
	[BOTHY_KIND_GATEWAY_CONSUMER] = {"gateway.consumer", 3, {
			BOTHY_REQ(NODE), BOTHY_REQ(AGENT), BOTHY_REQ(GATEWAY_SESSION)}},
	[BOTHY_KIND_GATEWAY_HINT] = {"gateway.hint", 9, {
			BOTHY_REQ(NODE), BOTHY_REQ(RECIPIENT), BOTHY_REQ(NID),
			BOTHY_REQ(HINT_KIND), BOTHY_REQ(QUIET), BOTHY_REQ(COUNT),
			BOTHY_OPT(THREAD), BOTHY_OPT(MESSAGE), BOTHY_OPT(TARGET)}},
	[BOTHY_KIND_GATEWAY_AGENT_EVENT] = {"gateway.agent_event", 3, {
			BOTHY_REQ(NODE), BOTHY_REQ(AGENT), BOTHY_REQ(EVENT)}},
	[BOTHY_KIND_TERMINAL_SESSION_OPEN] = {"terminal.session_open", 2, {
			BOTHY_REQ(HOST_ID), BOTHY_REQ(SESSION_ID)}},
	[BOTHY_KIND_TERMINAL_HOST_CLOSE] = {"terminal.host_close", 1, {
			BOTHY_REQ(HOST_ID)}},
	[BOTHY_KIND_TERMINAL_HOST_PRESENT] = {"terminal.host_present", 2, {
			BOTHY_REQ(HOST_ID), BOTHY_REQ(CONN_ID)}},
	[BOTHY_KIND_TERMINAL_HOST_GONE] = {"terminal.host_gone", 2, {
			BOTHY_REQ(HOST_ID), BOTHY_REQ(CONN_ID)}},
	[BOTHY_KIND_TERMINAL_SESSION_PAIRED] = {"terminal.session_paired", 2, {
			BOTHY_REQ(HOST_ID), BOTHY_REQ(SESSION_ID)}},
	[BOTHY_KIND_TERMINAL_LOG] = {"terminal.log", 1, {
			BOTHY_REQ(SEQ)}},
	[BOTHY_KIND_WAL_FENCE] = {"wal.fence", 1, {
			BOTHY_REQ(LSN)}},
};

static const char *const bothy_agent_state_codes[BOTHY_AGENT_STATE_COUNT] = {
	"online", "busy", "offline"
};
static const char *const bothy_billing_mode_codes[BOTHY_BILLING_MODE_COUNT] = {
	"free", "included", "metered"
};
static const char *const bothy_hint_kind_codes[BOTHY_HINT_KIND_COUNT] = {
	"mention", "reply", "direct", "run", "invite", "system"
};

#define BOTHY_STR_(x) #x
#define BOTHY_STR(x) BOTHY_STR_(x)

/* A reason's code and its sentence: before, the member, after. */
typedef struct bothy_reason_def
{
	const char *code;
	const char *before;
	const char *after;			/* NULL: the sentence names no member */
} bothy_reason_def;

static const bothy_reason_def bothy_reasons[BOTHY_REASON_COUNT] = {
	[BOTHY_REASON_NONE] = {"none", "no error", NULL},
	[BOTHY_REASON_TOO_LONG] = {"too_long",
		"payload is longer than " BOTHY_STR(BOTHY_SIGNAL_MAX_BYTES) " bytes", NULL},
	[BOTHY_REASON_NOT_JSON] = {"not_json", "payload is not valid JSON", NULL},
	[BOTHY_REASON_NOT_OBJECT] = {"not_object", "payload is not a JSON object", NULL},
	[BOTHY_REASON_NO_KIND] = {"no_kind", "payload has no member \"kind\"", NULL},
	[BOTHY_REASON_KIND_NOT_STRING] = {"kind_not_string",
		"member \"kind\" is not a string", NULL},
	[BOTHY_REASON_UNKNOWN_KIND] = {"unknown_kind", "unknown kind \"", "\""},
	[BOTHY_REASON_UNKNOWN_MEMBER] = {"unknown_member", "unknown member \"", "\""},
	[BOTHY_REASON_DUPLICATE_MEMBER] = {"duplicate_member", "duplicate member \"", "\""},
	[BOTHY_REASON_MISSING_MEMBER] = {"missing_member", "missing member \"", "\""},
	[BOTHY_REASON_NOT_UUID] = {"not_uuid", "member \"",
		"\" is not a canonical lower-case UUID"},
	[BOTHY_REASON_NOT_UUIDV7] = {"not_uuidv7", "member \"", "\" is not a UUIDv7"},
	[BOTHY_REASON_NOT_CODE] = {"not_code", "member \"", "\" is not a code string"},
	[BOTHY_REASON_UNKNOWN_CODE] = {"unknown_code", "member \"", "\" has an unknown code"},
	[BOTHY_REASON_NOT_INTEGER] = {"not_integer", "member \"", "\" is not a JSON integer"},
	[BOTHY_REASON_OUT_OF_RANGE] = {"out_of_range", "member \"", "\" is out of range"},
	[BOTHY_REASON_NOT_BOOLEAN] = {"not_boolean", "member \"", "\" is not a boolean"},
};

/* ---------------------------------------------------------------------
 * Names and codes
 * ---------------------------------------------------------------------
 */

static const char *
bothy_code_at(const char *const *codes, int count, int i)
{
	return i >= 0 && i < count ? codes[i] : NULL;
}

const char *
bothy_agent_state_code(bothy_agent_state s)
{
	return bothy_code_at(bothy_agent_state_codes, BOTHY_AGENT_STATE_COUNT, (int) s);
}

const char *
bothy_billing_mode_code(bothy_billing_mode m)
{
	return bothy_code_at(bothy_billing_mode_codes, BOTHY_BILLING_MODE_COUNT, (int) m);
}

const char *
bothy_hint_kind_code(bothy_hint_kind k)
{
	return bothy_code_at(bothy_hint_kind_codes, BOTHY_HINT_KIND_COUNT, (int) k);
}

static const bothy_kind_def *
bothy_kind_def_of(bothy_kind kind)
{
	int			k = (int) kind;

	return k > BOTHY_KIND_NONE && k < BOTHY_KIND_COUNT ? &bothy_kinds[k] : NULL;
}

const char *
bothy_kind_name(bothy_kind kind)
{
	const bothy_kind_def *def = bothy_kind_def_of(kind);

	return def ? def->name : NULL;
}

static const bothy_reason_def *
bothy_reason_def_of(bothy_reason reason)
{
	int			r = (int) reason;

	return r >= 0 && r < BOTHY_REASON_COUNT ? &bothy_reasons[r] : NULL;
}

const char *
bothy_reason_code(bothy_reason reason)
{
	const bothy_reason_def *def = bothy_reason_def_of(reason);

	return def ? def->code : NULL;
}

/* The value of a code or integer member of sig, by its form. */
static const char *
bothy_member_code(bothy_form form, const bothy_signal *sig)
{
	switch (form)
	{
		case BOTHY_FORM_STATE:
			return bothy_agent_state_code(sig->state);
		case BOTHY_FORM_BILLING_MODE:
			return bothy_billing_mode_code(sig->billing_mode);
		case BOTHY_FORM_HINT_KIND:
			return bothy_hint_kind_code(sig->hint_kind);
		default:
			return NULL;
	}
}

static const bothy_uuid *
bothy_member_uuid(const bothy_member_def *def, const bothy_signal *sig)
{
	return (const bothy_uuid *) ((const char *) sig + def->offset);
}

static int64_t
bothy_member_integer(const bothy_member_def *def, const bothy_signal *sig)
{
	return *(const int64_t *) ((const char *) sig + def->offset);
}

/* ---------------------------------------------------------------------
 * Decoding
 * ---------------------------------------------------------------------
 */

/* Longer names are unknown without looking further. */
#define BOTHY_NAME_CAP 64

typedef struct bothy_name
{
	char		s[BOTHY_NAME_CAP];
	size_t		len;
	bool		too_long;
} bothy_name;

static void
bothy_name_decode(const char *raw, size_t raw_len, bothy_name *out)
{
	out->len = bothy_json_unescape(raw, raw_len, out->s, sizeof(out->s),
								   &out->too_long);
}

/* One walk, no strlen: lit is read up to its NUL, never past it. */
static bool
bothy_name_is(const bothy_name *n, const char *lit)
{
	size_t		i;

	if (n->too_long)
		return false;
	for (i = 0; i < n->len; i++)
		if (lit[i] == '\0' || lit[i] != n->s[i])
			return false;
	return lit[n->len] == '\0';
}

static bool
bothy_name_has_prefix(const bothy_name *n, const char *prefix)
{
	size_t		plen = strlen(prefix);

	return n->len >= plen && memcmp(n->s, prefix, plen) == 0;
}

static bool
bothy_is_log_safe(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/*
 * Fill err; s[0..n) is what the payload said, so only characters that
 * cannot forge a log line or carry content survive.
 */
static bothy_decode_status
bothy_fail(bothy_decode_error *err, bothy_reason reason, const char *s, size_t n)
{
	size_t		i;
	size_t		kept = 0;

	err->reason = reason;
	for (i = 0; i < n && kept < sizeof(err->member) - 1; i++)
		if (bothy_is_log_safe(s[i]))
			err->member[kept++] = s[i];
	err->member[kept] = '\0';
	return BOTHY_DECODE_MALFORMED;
}

static bothy_decode_status
bothy_fail_member(bothy_decode_error *err, bothy_reason reason, const char *name)
{
	return bothy_fail(err, reason, name, strlen(name));
}

/* A kind with one of our prefixes is ours to judge; any other is not. */
static bothy_decode_status
bothy_classify_kind(const bothy_json_member *m, bothy_kind *kind,
					bothy_decode_error *err)
{
	bothy_name	value;
	int			k;

	bothy_name_decode(m->value, m->value_len, &value);
	if (!bothy_name_has_prefix(&value, "gateway.") &&
		!bothy_name_has_prefix(&value, "terminal.") &&
		!bothy_name_has_prefix(&value, "wal."))
		return BOTHY_DECODE_IGNORED;
	for (k = BOTHY_KIND_NONE + 1; k < BOTHY_KIND_COUNT; k++)
	{
		if (bothy_name_is(&value, bothy_kinds[k].name))
		{
			*kind = (bothy_kind) k;
			return BOTHY_DECODE_OK;
		}
	}
	return bothy_fail(err, BOTHY_REASON_UNKNOWN_KIND, value.s, value.len);
}

/* The next member named "kind" in r, into *m; false at the end of r. */
static bool
bothy_next_kind(bothy_json_reader *r, bothy_json_member *m)
{
	bothy_name	name;

	while (bothy_json_reader_next(r, m))
	{
		bothy_name_decode(m->name, m->name_len, &name);
		if (bothy_name_is(&name, "kind"))
			return true;
	}
	return false;
}

static bothy_decode_status
bothy_find_kind(const char *buf, size_t len, bothy_kind *kind,
				bothy_decode_error *err)
{
	bothy_json_reader r;
	bothy_json_member kind_member;
	bothy_json_member other;

	bothy_json_reader_init(&r, buf, len);
	if (!bothy_next_kind(&r, &kind_member))
		return bothy_fail_member(err, BOTHY_REASON_NO_KIND, "kind");
	/* Two kinds would let two readers disagree about whose it is. */
	if (bothy_next_kind(&r, &other))
		return bothy_fail_member(err, BOTHY_REASON_DUPLICATE_MEMBER, "kind");
	if (kind_member.type != BOTHY_JSON_STRING)
		return bothy_fail_member(err, BOTHY_REASON_KIND_NOT_STRING, "kind");
	return bothy_classify_kind(&kind_member, kind, err);
}

static bothy_reason
bothy_read_uuid(const bothy_json_member *m, bool v7, bothy_uuid *out)
{
	/* An escape fails the parse too: a canonical UUID never needs one. */
	if (m->type != BOTHY_JSON_STRING || !bothy_uuid_parse(m->value, m->value_len, out))
		return BOTHY_REASON_NOT_UUID;
	if (v7 && !bothy_uuid_is_v7(out))
		return BOTHY_REASON_NOT_UUIDV7;
	return BOTHY_REASON_NONE;
}

static bothy_reason
bothy_read_code(const bothy_json_member *m, const char *const *codes, int count,
				int *out)
{
	int			i;

	/* A code never needs an escape, so one is a wrong form, not a spelling. */
	if (m->type != BOTHY_JSON_STRING || memchr(m->value, '\\', m->value_len) != NULL)
		return BOTHY_REASON_NOT_CODE;
	for (i = 0; i < count; i++)
	{
		if (strlen(codes[i]) == m->value_len &&
			memcmp(codes[i], m->value, m->value_len) == 0)
		{
			*out = i;
			return BOTHY_REASON_NONE;
		}
	}
	return BOTHY_REASON_UNKNOWN_CODE;
}

/* A JSON integer: no fraction and no exponent, even when they are zero. */
static bothy_reason
bothy_read_integer(const bothy_json_member *m, int64_t max, int64_t *out)
{
	uint64_t	v = 0;
	size_t		i;

	if (m->type != BOTHY_JSON_NUMBER)
		return BOTHY_REASON_NOT_INTEGER;
	for (i = 0; i < m->value_len; i++)
		if (m->value[i] == '.' || m->value[i] == 'e' || m->value[i] == 'E')
			return BOTHY_REASON_NOT_INTEGER;
	/* Every range starts at 0, and "-0" is no form a producer writes. */
	if (m->value[0] == '-')
		return BOTHY_REASON_OUT_OF_RANGE;
	for (i = 0; i < m->value_len; i++)
	{
		unsigned	d = (unsigned) (m->value[i] - '0');

		if (v > ((uint64_t) max - d) / 10)
			return BOTHY_REASON_OUT_OF_RANGE;
		v = v * 10 + d;
	}
	*out = (int64_t) v;
	return BOTHY_REASON_NONE;
}

static bothy_reason
bothy_read_bool(const bothy_json_member *m, bool *out)
{
	if (m->type != BOTHY_JSON_TRUE && m->type != BOTHY_JSON_FALSE)
		return BOTHY_REASON_NOT_BOOLEAN;
	*out = m->type == BOTHY_JSON_TRUE;
	return BOTHY_REASON_NONE;
}

/*
 * A string of 0 to BOTHY_REACH_MAX node IDs, each the 32 lower-case hex
 * digits of its 16 bytes (no dashes: the form is a list, not a UUID's
 * text), one after the other.  Any other string is not_uuid.
 */
static bothy_reason
bothy_read_nodes(const bothy_json_member *m, bothy_signal *out)
{
	size_t		i,
				n = m->value_len / 32;

	if (m->type != BOTHY_JSON_STRING || m->value_len % 32 != 0 || n > BOTHY_REACH_MAX)
		return BOTHY_REASON_NOT_UUID;
	for (i = 0; i < n; i++)
		if (!bothy_hex_decode(m->value + 32 * i, 16, out->reach[i].b))
			return BOTHY_REASON_NOT_UUID;
	out->nreach = (int) n;
	return BOTHY_REASON_NONE;
}

static bothy_reason
bothy_read_member(const bothy_json_member *m, const bothy_member_def *def,
				  bothy_signal *out)
{
	bothy_reason r;
	int			code = 0;

	switch (def->form)
	{
		case BOTHY_FORM_UUID:
		case BOTHY_FORM_UUIDV7:
			return bothy_read_uuid(m, def->form == BOTHY_FORM_UUIDV7,
								   (bothy_uuid *) ((char *) out + def->offset));
		case BOTHY_FORM_STATE:
			r = bothy_read_code(m, bothy_agent_state_codes, BOTHY_AGENT_STATE_COUNT, &code);
			out->state = (bothy_agent_state) code;
			return r;
		case BOTHY_FORM_BILLING_MODE:
			r = bothy_read_code(m, bothy_billing_mode_codes, BOTHY_BILLING_MODE_COUNT, &code);
			out->billing_mode = (bothy_billing_mode) code;
			return r;
		case BOTHY_FORM_HINT_KIND:
			r = bothy_read_code(m, bothy_hint_kind_codes, BOTHY_HINT_KIND_COUNT, &code);
			out->hint_kind = (bothy_hint_kind) code;
			return r;
		case BOTHY_FORM_INTEGER:
			return bothy_read_integer(m, def->max, (int64_t *) ((char *) out + def->offset));
		case BOTHY_FORM_BOOL:
			return bothy_read_bool(m, &out->quiet);
		case BOTHY_FORM_NODES:
			return bothy_read_nodes(m, out);
	}
	return BOTHY_REASON_NOT_JSON;	/* not reached: every form is handled */
}

/* The position of name in the kind's table, or -1. */
static int
bothy_kind_member_index(const bothy_kind_def *def, const bothy_name *name)
{
	size_t		i;

	for (i = 0; i < def->n; i++)
		if (bothy_name_is(name, bothy_members[def->m[i].member].name))
			return (int) i;
	return -1;
}

/*
 * Members in payload order from r, then the required ones missing in table
 * order.  kind_read: r starts after a first member "kind" that nothing
 * else judged, so a second "kind" is this pass's to report, and it comes
 * before any other fault, as when the kind is looked for in a pass of its
 * own; otherwise that pass ran and every "kind" is skipped.
 */
static bothy_decode_status
bothy_decode_members(bothy_json_reader *r, const bothy_kind_def *def, bool kind_read,
					 bothy_signal *out, bothy_decode_error *err)
{
	bothy_json_member m;
	bothy_name	name;
	unsigned	seen = 0;
	size_t		i;

	while (bothy_json_reader_next(r, &m))
	{
		bothy_reason reason;
		int			at;

		bothy_name_decode(m.name, m.name_len, &name);
		if (bothy_name_is(&name, "kind"))
		{
			if (kind_read)
				return bothy_fail_member(err, BOTHY_REASON_DUPLICATE_MEMBER, "kind");
			continue;
		}
		at = bothy_kind_member_index(def, &name);
		if (at < 0)
			reason = BOTHY_REASON_UNKNOWN_MEMBER;
		else if (seen & (1u << at))
			reason = BOTHY_REASON_DUPLICATE_MEMBER;
		else
			reason = bothy_read_member(&m, &bothy_members[def->m[at].member], out);
		if (reason != BOTHY_REASON_NONE)
		{
			if (kind_read && bothy_next_kind(r, &m))
				return bothy_fail_member(err, BOTHY_REASON_DUPLICATE_MEMBER, "kind");
			if (at < 0)
				return bothy_fail(err, reason, name.s, name.len);
			return bothy_fail_member(err, reason, bothy_members[def->m[at].member].name);
		}
		seen |= 1u << at;
		out->optional |= def->m[at].opt;
	}
	for (i = 0; i < def->n; i++)
		if (def->m[i].opt == 0 && !(seen & (1u << i)))
			return bothy_fail_member(err, BOTHY_REASON_MISSING_MEMBER,
									 bothy_members[def->m[i].member].name);
	return BOTHY_DECODE_OK;
}

/*
 * A first member "kind" of one of our kinds, as every encoder writes it:
 * *kind set, and r left after it.  Anything else (no kind first, not a
 * string, another producer's kind, an unknown one) is for the pass that
 * looks at every member.
 */
static bool
bothy_kind_first(bothy_json_reader *r, bothy_kind *kind)
{
	bothy_json_member m;
	bothy_name	name;
	bothy_decode_error ignored;

	if (!bothy_json_reader_next(r, &m))
		return false;
	bothy_name_decode(m.name, m.name_len, &name);
	return bothy_name_is(&name, "kind") && m.type == BOTHY_JSON_STRING &&
		bothy_classify_kind(&m, kind, &ignored) == BOTHY_DECODE_OK;
}

bothy_decode_status
bothy_signal_decode(const char *buf, size_t len, bothy_signal *out,
					bothy_decode_error *err)
{
	bothy_decode_error scratch_err;
	bothy_signal scratch_sig;
	bothy_json_type top;
	bothy_json_reader r;
	bothy_kind	kind = BOTHY_KIND_NONE;
	bool		kind_read;
	bothy_decode_status status;

	if (err == NULL)
		err = &scratch_err;
	if (out == NULL)
		out = &scratch_sig;
	err->reason = BOTHY_REASON_NONE;
	err->member[0] = '\0';

	if (len > BOTHY_SIGNAL_MAX_BYTES)
		return bothy_fail(err, BOTHY_REASON_TOO_LONG, NULL, 0);
	/* The validator refuses NUL bytes: JSON has no place for one. */
	top = bothy_json_validate(buf, len);
	if (top == BOTHY_JSON_INVALID)
		return bothy_fail(err, BOTHY_REASON_NOT_JSON, NULL, 0);
	if (top != BOTHY_JSON_OBJECT)
		return bothy_fail(err, BOTHY_REASON_NOT_OBJECT, NULL, 0);

	/* One pass over the members when the kind comes first, else two. */
	bothy_json_reader_init(&r, buf, len);
	kind_read = bothy_kind_first(&r, &kind);
	if (!kind_read)
	{
		status = bothy_find_kind(buf, len, &kind, err);
		if (status != BOTHY_DECODE_OK)
			return status;
		bothy_json_reader_init(&r, buf, len);
	}
	memset(out, 0, sizeof(*out));
	out->kind = kind;
	return bothy_decode_members(&r, &bothy_kinds[kind], kind_read, out, err);
}

/* ---------------------------------------------------------------------
 * Encoding
 * ---------------------------------------------------------------------
 */

typedef struct bothy_writer
{
	char	   *buf;
	size_t		size;
	size_t		pos;			/* always < size while ok: room for the NUL */
	bool		ok;
} bothy_writer;

static void
bothy_put(bothy_writer *w, const char *s, size_t n)
{
	if (!w->ok)
		return;
	if (n >= w->size - w->pos)
	{
		w->ok = false;
		return;
	}
	memcpy(w->buf + w->pos, s, n);
	w->pos += n;
}

static void
bothy_put_str(bothy_writer *w, const char *s)
{
	bothy_put(w, s, strlen(s));
}

static void
bothy_put_quoted(bothy_writer *w, const char *s)
{
	bothy_put(w, "\"", 1);
	bothy_put_str(w, s);
	bothy_put(w, "\"", 1);
}

/* v >= 0, checked by bothy_encodable. */
static void
bothy_put_int(bothy_writer *w, int64_t v)
{
	char		digits[20];
	size_t		n = sizeof(digits);
	uint64_t	u = (uint64_t) v;

	do
	{
		digits[--n] = (char) ('0' + u % 10);
		u /= 10;
	} while (u != 0);
	bothy_put(w, digits + n, sizeof(digits) - n);
}

static void
bothy_put_nodes(bothy_writer *w, const bothy_signal *sig)
{
	char		hex[32];
	int			i;

	bothy_put(w, "\"", 1);
	for (i = 0; i < sig->nreach; i++)
	{
		bothy_hex_encode(sig->reach[i].b, 16, hex);
		bothy_put(w, hex, sizeof(hex));
	}
	bothy_put(w, "\"", 1);
}

static void
bothy_put_value(bothy_writer *w, const bothy_member_def *def, const bothy_signal *sig)
{
	char		text[BOTHY_UUID_STRLEN + 1];

	switch (def->form)
	{
		case BOTHY_FORM_UUID:
		case BOTHY_FORM_UUIDV7:
			bothy_uuid_format(bothy_member_uuid(def, sig), text);
			bothy_put_quoted(w, text);
			return;
		case BOTHY_FORM_STATE:
		case BOTHY_FORM_BILLING_MODE:
		case BOTHY_FORM_HINT_KIND:
			bothy_put_quoted(w, bothy_member_code(def->form, sig));
			return;
		case BOTHY_FORM_INTEGER:
			bothy_put_int(w, bothy_member_integer(def, sig));
			return;
		case BOTHY_FORM_BOOL:
			bothy_put_str(w, sig->quiet ? "true" : "false");
			return;
		case BOTHY_FORM_NODES:
			bothy_put_nodes(w, sig);
			return;
	}
}

static bool
bothy_member_encodable(const bothy_member_def *def, const bothy_signal *sig)
{
	int64_t		v;

	switch (def->form)
	{
		case BOTHY_FORM_UUID:
		case BOTHY_FORM_BOOL:
			return true;
		case BOTHY_FORM_UUIDV7:
			return bothy_uuid_is_v7(bothy_member_uuid(def, sig));
		case BOTHY_FORM_STATE:
		case BOTHY_FORM_BILLING_MODE:
		case BOTHY_FORM_HINT_KIND:
			return bothy_member_code(def->form, sig) != NULL;
		case BOTHY_FORM_INTEGER:
			v = bothy_member_integer(def, sig);
			return v >= 0 && v <= def->max;
		case BOTHY_FORM_NODES:
			return sig->nreach >= 0 && sig->nreach <= BOTHY_REACH_MAX;
	}
	return false;
}

static bool
bothy_member_present(const bothy_kind_member *km, const bothy_signal *sig)
{
	return km->opt == 0 || (sig->optional & km->opt) != 0;
}

/* Exactly what the decoder would accept, so a staged signal never bounces. */
static bool
bothy_encodable(const bothy_kind_def *def, const bothy_signal *sig)
{
	unsigned	allowed = 0;
	size_t		i;

	for (i = 0; i < def->n; i++)
		allowed |= def->m[i].opt;
	if ((sig->optional & ~allowed) != 0)
		return false;
	for (i = 0; i < def->n; i++)
		if (bothy_member_present(&def->m[i], sig) &&
			!bothy_member_encodable(&bothy_members[def->m[i].member], sig))
			return false;
	return true;
}

int
bothy_signal_encode(const bothy_signal *sig, char *buf, size_t size)
{
	const bothy_kind_def *def;
	bothy_writer w;
	size_t		i;

	if (buf == NULL || size == 0)
		return -1;
	buf[0] = '\0';
	def = sig ? bothy_kind_def_of(sig->kind) : NULL;
	if (def == NULL || !bothy_encodable(def, sig))
		return -1;

	w.buf = buf;
	w.size = size;
	w.pos = 0;
	w.ok = true;
	bothy_put_str(&w, "{\"kind\":");
	bothy_put_quoted(&w, def->name);
	for (i = 0; i < def->n; i++)
	{
		const bothy_member_def *mdef = &bothy_members[def->m[i].member];

		if (!bothy_member_present(&def->m[i], sig))
			continue;
		bothy_put(&w, ",", 1);
		bothy_put_quoted(&w, mdef->name);
		bothy_put(&w, ":", 1);
		bothy_put_value(&w, mdef, sig);
	}
	bothy_put(&w, "}", 1);
	if (!w.ok || w.pos > BOTHY_SIGNAL_MAX_BYTES)
	{
		buf[0] = '\0';
		return -1;
	}
	buf[w.pos] = '\0';
	return (int) w.pos;
}

/* ---------------------------------------------------------------------
 * Describing a fault
 * ---------------------------------------------------------------------
 */

/* A member by name, for the range in an out_of_range sentence; NULL if none. */
static const bothy_member_def *
bothy_member_by_name(const char *name)
{
	int			i;

	for (i = 0; i < BOTHY_M__COUNT; i++)
		if (strcmp(bothy_members[i].name, name) == 0)
			return &bothy_members[i];
	return NULL;
}

void
bothy_decode_error_describe(const bothy_decode_error *err, char *buf, size_t size)
{
	const bothy_reason_def *def;
	char		member[sizeof(err->member)];
	const bothy_member_def *mdef;

	if (buf == NULL || size == 0)
		return;
	def = err ? bothy_reason_def_of(err->reason) : NULL;
	if (def == NULL)
	{
		snprintf(buf, size, "unknown reason");
		return;
	}
	if (def->after == NULL)
	{
		snprintf(buf, size, "%s", def->before);
		return;
	}
	/* The caller may have filled err itself; never trust its terminator. */
	memcpy(member, err->member, sizeof(member) - 1);
	member[sizeof(member) - 1] = '\0';
	mdef = bothy_member_by_name(member);
	if (err->reason == BOTHY_REASON_OUT_OF_RANGE && mdef != NULL &&
		mdef->form == BOTHY_FORM_INTEGER)
		snprintf(buf, size, "%s%s%s (0 to %" PRId64 ")",
				 def->before, member, def->after, mdef->max);
	else
		snprintf(buf, size, "%s%s%s", def->before, member, def->after);
}
