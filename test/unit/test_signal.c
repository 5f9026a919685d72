/*
 * test_signal.c
 *		Unit tests of the signal codec (src/common/signal.c): the corpus of
 *		signal_cases.h, payload lengths, the encoder's refusals and bounds,
 *		names, codes and the sentences of every reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hex.h"
#include "reach.h"
#include "signal.h"
#include "unit.h"
#include "signal_cases.h"
#include "signal_equal.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

static char desc[512];

static const char *
described(const char *what, const char *name)
{
	snprintf(desc, sizeof(desc), "%s: %s", what, name);
	return desc;
}

/* The codes as docs/signals.md lists them, written here independently. */
static const char *const state_codes[] = {"online", "busy", "offline"};
static const char *const billing_codes[] = {"free", "included", "metered"};
static const char *const hint_codes[] = {"mention", "reply", "direct", "run", "invite", "system"};

static int
code_index(const char *const *codes, size_t n, const char *value)
{
	size_t		i;

	for (i = 0; i < n; i++)
		if (strcmp(codes[i], value) == 0)
			return (int) i;
	return -1;
}

/* Set one member of sig from its JSON text form; false if the name is unknown. */
static bool
set_field(bothy_signal *sig, const char *name, const char *value)
{
	struct
	{
		const char *name;
		bothy_uuid *field;
	}			ids[] = {
		{"node", &sig->node}, {"thread", &sig->thread}, {"principal", &sig->principal},
		{"run", &sig->run}, {"agent", &sig->agent}, {"actor", &sig->actor},
		{"device", &sig->device}, {"gateway_session", &sig->gateway_session},
		{"bind_id", &sig->bind_id}, {"recipient", &sig->recipient}, {"nid", &sig->nid},
		{"message", &sig->message}, {"target", &sig->target}, {"host_id", &sig->host_id},
		{"session_id", &sig->session_id}, {"conn_id", &sig->conn_id},
	};
	size_t		i;

	for (i = 0; i < N_ELEMS(ids); i++)
		if (strcmp(ids[i].name, name) == 0)
			return bothy_uuid_parse(value, strlen(value), ids[i].field);
	if (strcmp(name, "version") == 0)
		sig->version = strtoll(value, NULL, 10);
	else if (strcmp(name, "event") == 0)
		sig->event = strtoll(value, NULL, 10);
	else if (strcmp(name, "count") == 0)
		sig->count = strtoll(value, NULL, 10);
	else if (strcmp(name, "seq") == 0)
		sig->seq = strtoll(value, NULL, 10);
	else if (strcmp(name, "lsn") == 0)
		sig->lsn = strtoll(value, NULL, 10);
	else if (strcmp(name, "reach") == 0)
	{
		size_t		n = strlen(value) / 32;

		for (sig->nreach = 0; (size_t) sig->nreach < n; sig->nreach++)
			if (!bothy_hex_decode(value + 32 * sig->nreach, 16, sig->reach[sig->nreach].b))
				return false;
	}
	else if (strcmp(name, "quiet") == 0)
		sig->quiet = strcmp(value, "true") == 0;
	else if (strcmp(name, "state") == 0)
		sig->state = (bothy_agent_state) code_index(state_codes, N_ELEMS(state_codes), value);
	else if (strcmp(name, "billing_mode") == 0)
		sig->billing_mode = (bothy_billing_mode) code_index(billing_codes, N_ELEMS(billing_codes), value);
	else if (strcmp(name, "hint_kind") == 0)
		sig->hint_kind = (bothy_hint_kind) code_index(hint_codes, N_ELEMS(hint_codes), value);
	else
		return false;
	return true;
}

static bool
build_example(const signal_example *ex, bothy_signal *sig)
{
	size_t		i;

	memset(sig, 0, sizeof(*sig));
	sig->kind = ex->kind;
	sig->optional = ex->optional;
	for (i = 0; i < N_ELEMS(ex->fields) && ex->fields[i].name != NULL; i++)
		if (!set_field(sig, ex->fields[i].name, ex->fields[i].value))
			return false;
	return true;
}

/* Decode from a heap copy of exactly len bytes, so ASan sees any over-read. */
static bothy_decode_status
decode_exact(const char *payload, size_t len, bothy_signal *out, bothy_decode_error *err)
{
	char	   *copy = unit_exact_copy(payload, len);
	bothy_decode_status status;

	status = bothy_signal_decode(len > 0 ? copy : NULL, len, out, err);
	free(copy);
	return status;
}

/* Encode sig, decode the text again: OK and the same signal. */
static bool
round_trips(const bothy_signal *sig)
{
	char		buf[BOTHY_SIGNAL_MAX_BYTES + 1];
	bothy_signal back;
	bothy_decode_error err;
	int			n = bothy_signal_encode(sig, buf, sizeof(buf));

	return n > 0 && (size_t) n == strlen(buf) &&
		decode_exact(buf, (size_t) n, &back, &err) == BOTHY_DECODE_OK &&
		bothy_test_signal_equal(sig, &back);
}

static void
test_examples(void)
{
	size_t		i;

	for (i = 0; i < N_ELEMS(signal_examples); i++)
	{
		const signal_example *ex = &signal_examples[i];
		bothy_signal sig;
		bothy_signal got;
		bothy_decode_error err;
		char		buf[BOTHY_SIGNAL_MAX_BYTES + 1];
		int			n;
		bool		built = build_example(ex, &sig);

		n = built ? bothy_signal_encode(&sig, buf, sizeof(buf)) : -1;
		UNIT_OK(n >= 0 && strcmp(buf, ex->compact) == 0 && (size_t) n == strlen(ex->compact),
				described("encode writes exactly the compact form", ex->name));
		if (n < 0 || strcmp(buf, ex->compact) != 0)
		{
			unit_diag(n >= 0 ? buf : "(encode failed)");
			unit_diag(ex->compact);
		}
		UNIT_OK(decode_exact(ex->compact, strlen(ex->compact), &got, &err) == BOTHY_DECODE_OK &&
				err.reason == BOTHY_REASON_NONE && err.member[0] == '\0' &&
				bothy_test_signal_equal(&sig, &got),
				described("decode gives the example's signal", ex->name));
		UNIT_OK(round_trips(&sig), described("encode then decode is the same signal", ex->name));
	}
}

static void
test_absent_members_zero(void)
{
	bothy_signal sig;
	const char *p = signal_examples[0].compact;	/* gateway.typing */
	static const bothy_uuid zero;

	memset(&sig, 0x5a, sizeof(sig));
	UNIT_OK(bothy_signal_decode(p, strlen(p), &sig, NULL) == BOTHY_DECODE_OK &&
			sig.version == 0 && sig.count == 0 && sig.optional == 0 && !sig.quiet &&
			memcmp(&sig.run, &zero, sizeof(zero)) == 0 &&
			memcmp(&sig.conn_id, &zero, sizeof(zero)) == 0,
			"decode: members the kind does not have are zero");
}

static void
test_decode_cases(void)
{
	size_t		i;

	for (i = 0; i < N_ELEMS(decode_cases); i++)
	{
		const decode_case *c = &decode_cases[i];
		size_t		len = c->len ? c->len : strlen(c->payload);
		bothy_signal sig;
		bothy_decode_error err;
		bothy_decode_status status;
		bool		pass;

		memset(&err, 0x5a, sizeof(err));
		status = decode_exact(c->payload, len, &sig, &err);
		pass = status == c->status && err.reason == c->reason &&
			strcmp(err.member, c->member) == 0;
		if (pass && status == BOTHY_DECODE_OK)
			pass = round_trips(&sig);
		UNIT_OK(pass, described("decode case", c->name));
		if (!pass)
		{
			snprintf(desc, sizeof(desc), "got status %d reason %s member \"%.32s\"",
					 (int) status, bothy_reason_code(err.reason), err.member);
			unit_diag(desc);
		}
	}
}

/* A valid gateway.typing padded with spaces to exactly len bytes. */
static char *
padded_payload(const char *payload, size_t len)
{
	size_t		n = strlen(payload);
	char	   *p = malloc(len);

	if (p == NULL || len < n)
	{
		fprintf(stderr, "bad padded_payload\n");
		exit(2);
	}
	memcpy(p, payload, n - 1);
	memset(p + n - 1, ' ', len - n);
	p[len - 1] = '}';
	return p;
}

static void
check_length(const char *payload, size_t len, bothy_decode_status want,
			 bothy_reason reason, const char *what)
{
	char	   *p = padded_payload(payload, len);
	bothy_decode_error err;
	bothy_signal sig;

	UNIT_OK(bothy_signal_decode(p, len, &sig, &err) == want && err.reason == reason, what);
	free(p);
}

static void
test_lengths(void)
{
	const char *typing = signal_examples[0].compact;
	char	   *junk = malloc(BOTHY_SIGNAL_MAX_BYTES + 1);
	bothy_decode_error err;

	/*
	 * NOTIFY refuses 8000 bytes and more (D-M2-47-19), and every payload
	 * travels in an envelope of BOTHY_ENVELOPE_OVERHEAD (41) bytes: so the
	 * codec refuses more than 7958
	 */
	UNIT_OK(BOTHY_SIGNAL_MAX_BYTES == 7958 && BOTHY_CHANNEL_MAX_BYTES == 7999,
			"length: the limit is 7958 bytes, NOTIFY's 7999 less the envelope");
	check_length(typing, 7958, BOTHY_DECODE_OK, BOTHY_REASON_NONE,
				 "length: 7958 bytes is accepted");
	check_length(typing, 7959, BOTHY_DECODE_MALFORMED, BOTHY_REASON_TOO_LONG,
				 "length: 7959 bytes is too_long");
	check_length("{\"kind\":\"other.x\"}", 7958, BOTHY_DECODE_IGNORED, BOTHY_REASON_NONE,
				 "length: a foreign payload of 7958 bytes is ignored");
	check_length("{\"kind\":\"other.x\"}", 7959, BOTHY_DECODE_MALFORMED, BOTHY_REASON_TOO_LONG,
				 "length: a foreign payload of 7959 bytes is too_long");

	if (junk == NULL)
		exit(2);
	memset(junk, '[', BOTHY_SIGNAL_MAX_BYTES + 1);
	UNIT_OK(bothy_signal_decode(junk, BOTHY_SIGNAL_MAX_BYTES + 1, NULL, &err) ==
			BOTHY_DECODE_MALFORMED && err.reason == BOTHY_REASON_TOO_LONG,
			"precedence: too_long before not_json");
	UNIT_OK(bothy_signal_decode(junk, BOTHY_SIGNAL_MAX_BYTES, NULL, &err) ==
			BOTHY_DECODE_MALFORMED && err.reason == BOTHY_REASON_NOT_JSON,
			"length: 7958 bytes of deep nesting is not_json, without a deep stack");
	free(junk);

	UNIT_OK(bothy_signal_decode(NULL, 0, NULL, &err) == BOTHY_DECODE_MALFORMED &&
			err.reason == BOTHY_REASON_NOT_JSON, "decode: NULL buffer of length 0 is not_json");
	UNIT_OK(bothy_signal_decode(typing, 5, NULL, NULL) == BOTHY_DECODE_MALFORMED,
			"decode: reads only len bytes (a prefix is not JSON), err may be NULL");
}

/* Each mutation makes the valid signal of an example unencodable. */
typedef struct invalid_case
{
	const char *name;
	size_t		example;		/* index into signal_examples */
	void		(*mutate) (bothy_signal *sig);
} invalid_case;

static void
kind_none(bothy_signal *s)
{
	s->kind = BOTHY_KIND_NONE;
}
static void
kind_count(bothy_signal *s)
{
	s->kind = BOTHY_KIND_COUNT;
}
static void
kind_negative(bothy_signal *s)
{
	s->kind = (bothy_kind) -1;
}
static void
state_count(bothy_signal *s)
{
	s->state = BOTHY_AGENT_STATE_COUNT;
}
static void
billing_count(bothy_signal *s)
{
	s->billing_mode = BOTHY_BILLING_MODE_COUNT;
}
static void
hint_count(bothy_signal *s)
{
	s->hint_kind = BOTHY_HINT_KIND_COUNT;
}
static void
hint_negative(bothy_signal *s)
{
	s->hint_kind = (bothy_hint_kind) -1;
}
static void
version_negative(bothy_signal *s)
{
	s->version = -1;
}
static void
version_too_big(bothy_signal *s)
{
	s->version = BOTHY_SIGNAL_VERSION_MAX + 1;
}
static void
count_negative(bothy_signal *s)
{
	s->count = -1;
}
static void
count_too_big(bothy_signal *s)
{
	s->count = BOTHY_SIGNAL_COUNT_MAX + 1;
}
static void
stray_thread_bit(bothy_signal *s)
{
	s->optional |= BOTHY_OPT_THREAD;
}
static void
unknown_bit(bothy_signal *s)
{
	s->optional |= 0x100u;
}
static void
node_not_v7(bothy_signal *s)
{
	s->node.b[6] = 0x40;
}
static void
bind_not_v7(bothy_signal *s)
{
	s->bind_id.b[8] = 0x40;
}
static void
conn_not_v7(bothy_signal *s)
{
	s->conn_id.b[6] = 0x80;
}
static void
seq_negative(bothy_signal *s)
{
	s->seq = -1;
}
static void
seq_too_big(bothy_signal *s)
{
	s->seq = BOTHY_SIGNAL_VERSION_MAX + 1;
}
static void
event_too_big(bothy_signal *s)
{
	s->event = BOTHY_SIGNAL_VERSION_MAX + 1;
}

static void
test_encode_invalid(void)
{
	/*
	 * Example indexes: 0 typing, 1 run, 5 presence+billing, 9 device, 11 hint,
	 * 19 host_present, 22 agent_event, 24 terminal.log.
	 */
	static const invalid_case cases[] = {
		{"kind NONE", 0, kind_none},
		{"kind COUNT", 0, kind_count},
		{"kind negative", 0, kind_negative},
		{"state out of range", 5, state_count},
		{"billing_mode out of range while present", 5, billing_count},
		{"hint_kind out of range", 11, hint_count},
		{"hint_kind negative", 11, hint_negative},
		{"version negative", 1, version_negative},
		{"version above 2^53 - 1", 1, version_too_big},
		{"count negative", 11, count_negative},
		{"count above 2^31 - 1", 11, count_too_big},
		{"an optional bit the kind does not have", 0, stray_thread_bit},
		{"a bit no kind has", 11, unknown_bit},
		{"node not a UUIDv7", 0, node_not_v7},
		{"bind_id not a UUIDv7", 9, bind_not_v7},
		{"conn_id not a UUIDv7", 19, conn_not_v7},
		{"event above 2^53 - 1", 22, event_too_big},
		{"seq negative", 24, seq_negative},
		{"seq above 2^53 - 1", 24, seq_too_big},
	};
	size_t		i;
	bothy_signal sig;
	char		buf[BOTHY_SIGNAL_MAX_BYTES + 1];

	for (i = 0; i < N_ELEMS(cases); i++)
	{
		(void) build_example(&signal_examples[cases[i].example], &sig);
		cases[i].mutate(&sig);
		memset(buf, 'x', sizeof(buf));
		UNIT_OK(bothy_signal_encode(&sig, buf, sizeof(buf)) == -1 && buf[0] == '\0',
				described("encode refuses", cases[i].name));
	}

	/* An absent optional member is not looked at. */
	(void) build_example(&signal_examples[4], &sig);	/* presence, no options */
	sig.billing_mode = BOTHY_BILLING_MODE_COUNT;
	UNIT_OK(bothy_signal_encode(&sig, buf, sizeof(buf)) > 0,
			"encode ignores the value of an absent optional member");
	UNIT_OK(bothy_signal_encode(NULL, buf, sizeof(buf)) == -1 && buf[0] == '\0',
			"encode refuses a NULL signal");
	UNIT_OK(bothy_signal_encode(&sig, NULL, 100) == -1, "encode refuses a NULL buffer");
}

/* Every size short of the text: -1, an empty string, nothing written past size. */
static void
test_encode_small_buffer(void)
{
	size_t		i;

	for (i = 0; i < N_ELEMS(signal_examples); i++)
	{
		bothy_signal sig;
		char		buf[BOTHY_SIGNAL_MAX_BYTES + 2];
		size_t		need = strlen(signal_examples[i].compact) + 1;
		size_t		size;
		bool		pass = true;

		(void) build_example(&signal_examples[i], &sig);
		for (size = 0; size < need && size + 1 < sizeof(buf); size++)
		{
			size_t		j;

			memset(buf, '#', sizeof(buf));
			if (bothy_signal_encode(&sig, buf, size) != -1)
				pass = false;
			if (size > 0 && buf[0] != '\0')
				pass = false;
			for (j = size; j < sizeof(buf); j++)
				if (buf[j] != '#')
					pass = false;
		}
		memset(buf, '#', sizeof(buf));
		if (bothy_signal_encode(&sig, buf, need) != (int) need - 1 || buf[need - 1] != '\0' ||
			buf[need] != '#')
			pass = false;
		UNIT_OK(pass, described("encode into every too-small buffer fails cleanly",
								signal_examples[i].name));
	}
}

/* Every code value of every closed set, through the encoder and back. */
static void
test_every_code(void)
{
	bothy_signal sig;
	int			i;
	bool		pass = true;

	(void) build_example(&signal_examples[7], &sig);	/* presence with both */
	for (i = 0; i < BOTHY_AGENT_STATE_COUNT; i++)
	{
		sig.state = (bothy_agent_state) i;
		pass = pass && round_trips(&sig);
	}
	for (i = 0; i < BOTHY_BILLING_MODE_COUNT; i++)
	{
		sig.billing_mode = (bothy_billing_mode) i;
		pass = pass && round_trips(&sig);
	}
	(void) build_example(&signal_examples[15], &sig);	/* hint with all */
	for (i = 0; i < BOTHY_HINT_KIND_COUNT; i++)
	{
		sig.hint_kind = (bothy_hint_kind) i;
		sig.quiet = (i % 2) == 0;
		pass = pass && round_trips(&sig);
	}
	UNIT_OK(pass, "every state, billing_mode and hint_kind code round-trips");
}

static void
test_names(void)
{
	static const char *const kinds[BOTHY_KIND_COUNT] = {
		NULL, "gateway.typing", "gateway.run", "gateway.agent_presence", "gateway.device",
		"gateway.consumer", "gateway.hint", "gateway.agent_event", "terminal.session_open",
		"terminal.host_close",
		"terminal.host_present", "terminal.host_gone", "terminal.session_paired",
		"terminal.log", "wal.fence",
	};
	static const char *const reasons[BOTHY_REASON_COUNT] = {
		"none", "too_long", "not_json", "not_object", "no_kind", "kind_not_string",
		"unknown_kind", "unknown_member", "duplicate_member", "missing_member", "not_uuid",
		"not_uuidv7", "not_code", "unknown_code", "not_integer", "out_of_range", "not_boolean",
	};
	bool		pass = true;
	int			i;

	for (i = 1; i < BOTHY_KIND_COUNT; i++)
		pass = pass && bothy_kind_name((bothy_kind) i) != NULL &&
			strcmp(bothy_kind_name((bothy_kind) i), kinds[i]) == 0;
	UNIT_OK(pass, "kind names");
	UNIT_OK(bothy_kind_name(BOTHY_KIND_NONE) == NULL && bothy_kind_name(BOTHY_KIND_COUNT) == NULL &&
			bothy_kind_name((bothy_kind) -1) == NULL, "kind name of NONE and out of range is NULL");

	pass = true;
	for (i = 0; i < BOTHY_REASON_COUNT; i++)
		pass = pass && bothy_reason_code((bothy_reason) i) != NULL &&
			strcmp(bothy_reason_code((bothy_reason) i), reasons[i]) == 0;
	UNIT_OK(pass, "reason codes");
	UNIT_OK(bothy_reason_code(BOTHY_REASON_COUNT) == NULL &&
			bothy_reason_code((bothy_reason) -1) == NULL, "reason code out of range is NULL");

	pass = true;
	for (i = 0; i < BOTHY_AGENT_STATE_COUNT; i++)
		pass = pass && strcmp(bothy_agent_state_code((bothy_agent_state) i), state_codes[i]) == 0;
	for (i = 0; i < BOTHY_BILLING_MODE_COUNT; i++)
		pass = pass && strcmp(bothy_billing_mode_code((bothy_billing_mode) i), billing_codes[i]) == 0;
	for (i = 0; i < BOTHY_HINT_KIND_COUNT; i++)
		pass = pass && strcmp(bothy_hint_kind_code((bothy_hint_kind) i), hint_codes[i]) == 0;
	UNIT_OK(pass, "state, billing_mode and hint_kind codes");
	UNIT_OK(bothy_agent_state_code(BOTHY_AGENT_STATE_COUNT) == NULL &&
			bothy_billing_mode_code(BOTHY_BILLING_MODE_COUNT) == NULL &&
			bothy_hint_kind_code(BOTHY_HINT_KIND_COUNT) == NULL &&
			bothy_hint_kind_code((bothy_hint_kind) -1) == NULL, "codes out of range are NULL");
}

typedef struct describe_case
{
	bothy_reason reason;
	const char *member;
	const char *sentence;
} describe_case;

static void
test_describe(void)
{
	static const describe_case cases[] = {
		{BOTHY_REASON_NONE, "", "no error"},
		{BOTHY_REASON_TOO_LONG, "", "payload is longer than 7958 bytes"},
		{BOTHY_REASON_NOT_JSON, "", "payload is not valid JSON"},
		{BOTHY_REASON_NOT_OBJECT, "", "payload is not a JSON object"},
		{BOTHY_REASON_NO_KIND, "kind", "payload has no member \"kind\""},
		{BOTHY_REASON_KIND_NOT_STRING, "kind", "member \"kind\" is not a string"},
		{BOTHY_REASON_UNKNOWN_KIND, "gateway.nope", "unknown kind \"gateway.nope\""},
		{BOTHY_REASON_UNKNOWN_MEMBER, "foo", "unknown member \"foo\""},
		{BOTHY_REASON_DUPLICATE_MEMBER, "node", "duplicate member \"node\""},
		{BOTHY_REASON_MISSING_MEMBER, "bind_id", "missing member \"bind_id\""},
		{BOTHY_REASON_NOT_UUID, "thread", "member \"thread\" is not a canonical lower-case UUID"},
		{BOTHY_REASON_NOT_UUIDV7, "node", "member \"node\" is not a UUIDv7"},
		{BOTHY_REASON_NOT_CODE, "state", "member \"state\" is not a code string"},
		{BOTHY_REASON_UNKNOWN_CODE, "hint_kind", "member \"hint_kind\" has an unknown code"},
		{BOTHY_REASON_NOT_INTEGER, "version", "member \"version\" is not a JSON integer"},
		{BOTHY_REASON_OUT_OF_RANGE, "version",
		"member \"version\" is out of range (0 to 9007199254740991)"},
		{BOTHY_REASON_OUT_OF_RANGE, "count", "member \"count\" is out of range (0 to 2147483647)"},
		{BOTHY_REASON_OUT_OF_RANGE, "seq", "member \"seq\" is out of range (0 to 9007199254740991)"},
		{BOTHY_REASON_OUT_OF_RANGE, "event", "member \"event\" is out of range (0 to 9007199254740991)"},
		{BOTHY_REASON_OUT_OF_RANGE, "other", "member \"other\" is out of range"},
		{BOTHY_REASON_NOT_BOOLEAN, "quiet", "member \"quiet\" is not a boolean"},
		{BOTHY_REASON_COUNT, "", "unknown reason"},
	};
	size_t		i;
	bothy_decode_error err;
	char		buf[200];
	char		small[8];

	for (i = 0; i < N_ELEMS(cases); i++)
	{
		err.reason = cases[i].reason;
		snprintf(err.member, sizeof(err.member), "%s", cases[i].member);
		bothy_decode_error_describe(&err, buf, sizeof(buf));
		UNIT_OK(strcmp(buf, cases[i].sentence) == 0, described("describe", cases[i].sentence));
	}

	err.reason = BOTHY_REASON_UNKNOWN_MEMBER;
	snprintf(err.member, sizeof(err.member), "%s", "abcdefghij");
	memset(small, '#', sizeof(small));
	bothy_decode_error_describe(&err, small, sizeof(small));
	UNIT_OK(memcmp(small, "unknown", 8) == 0, "describe truncates and NUL-terminates");
	small[0] = '#';
	bothy_decode_error_describe(&err, small, 0);
	UNIT_OK(small[0] == '#', "describe writes nothing into a buffer of size 0");
	memset(err.member, 'a', sizeof(err.member));	/* no terminator */
	bothy_decode_error_describe(&err, buf, sizeof(buf));
	UNIT_OK(strlen(buf) == strlen("unknown member \"\"") + 32,
			"describe never reads past the member field");

	/* The decoder's own error, described. */
	(void) bothy_signal_decode("{\"kind\":\"gateway.nope\"}", 23, NULL, &err);
	bothy_decode_error_describe(&err, buf, sizeof(buf));
	UNIT_OK(strcmp(buf, "unknown kind \"gateway.nope\"") == 0, "describe of a decoded fault");
}

/* Whether a reach names a node (reach.h). */
static void
test_reach_includes(void)
{
	bothy_signal sig;
	bothy_uuid	a,
				b;

	memset(&sig, 0, sizeof(sig));
	(void) bothy_uuid_parse("01890a5d-ac96-774b-bcce-b302099a8057", 36, &a);
	(void) bothy_uuid_parse("01890a5d-ac96-7aaa-8bbb-000000000002", 36, &b);
	UNIT_OK(bothy_reach_includes(&sig, &a), "no reach: every node");
	sig.optional = BOTHY_OPT_REACH;
	UNIT_OK(!bothy_reach_includes(&sig, &a), "an empty reach: no node");
	sig.reach[0] = b;
	sig.nreach = 1;
	UNIT_OK(!bothy_reach_includes(&sig, &a) && bothy_reach_includes(&sig, &b),
			"a reach names its nodes only");
	sig.reach[BOTHY_REACH_MAX - 1] = a;
	sig.nreach = BOTHY_REACH_MAX;
	UNIT_OK(bothy_reach_includes(&sig, &a), "the last of the most nodes a reach names");
}

int
main(void)
{
	unit_diag("examples: exact compact form, decode, round trip");
	test_examples();
	test_absent_members_zero();
	unit_diag("decode corpus");
	test_decode_cases();
	unit_diag("lengths and buffers");
	test_lengths();
	unit_diag("encoder");
	test_encode_invalid();
	test_encode_small_buffer();
	test_every_code();
	unit_diag("names, codes and sentences");
	test_names();
	test_describe();
	test_reach_includes();
	return unit_done();
}
