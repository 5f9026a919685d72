/*
 * test_protocol.c
 *		Unit tests of src/gateway/clients/protocol.c: the strict parser of client
 *		protocol v1 (every op, every way a message is refused, the limits of
 *		tokens, UUIDs, ack events, refs and queries) and the encoders of what
 *		the node sends, read back with jansson.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "clients/protocol.h"
#include "unit.h"
#include "unit_json.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* A UUIDv7, a UUIDv4 and the nil UUID, canonical lower case. */
#define U7 "0190a4a8-2c3e-7d41-8f5a-3b9c2d1e0f4a"
#define U4 "f47ac10b-58cc-4372-a567-0e02b2c3d479"
#define UNIL "00000000-0000-0000-0000-000000000000"

static char desc[512];

/* Parse from a heap copy of exactly len bytes, so ASan sees any over-read. */
static gw_parse_status
parse_exact(const char *text, size_t len, gw_msg *m)
{
	char	   *copy = unit_exact_copy(text, len);
	gw_parse_status status;

	status = gw_protocol_parse(copy, len, m);
	free(copy);
	return status;
}

static gw_parse_status
parse(const char *text, gw_msg *m)
{
	return parse_exact(text, strlen(text), m);
}

static bool
uuid_is(const bothy_uuid *u, const char *text)
{
	char		buf[BOTHY_UUID_STRLEN + 1];

	bothy_uuid_format(u, buf);
	return strcmp(buf, text) == 0;
}

/* A refused message leaves *m all zero: no half-parsed value survives. */
static bool
is_zero(const gw_msg *m)
{
	static const gw_msg zero;

	return memcmp(m, &zero, sizeof(zero)) == 0;
}

/* --- refusals, one line each ----------------------------------------------- */

typedef struct parse_case
{
	const char *name;
	const char *text;
	size_t		len;			/* 0: strlen(text) */
	gw_parse_status want;
} parse_case;

static const parse_case refusals[] = {
	/* not one JSON object text */
	{"empty", "", 0, GW_PARSE_NOT_JSON},
	{"blank", "  ", 0, GW_PARSE_NOT_JSON},
	{"unterminated", "{\"op\":\"heartbeat\"", 0, GW_PARSE_NOT_JSON},
	{"trailing text", "{\"op\":\"heartbeat\"} x", 0, GW_PARSE_NOT_JSON},
	{"two objects", "{\"op\":\"heartbeat\"}{\"op\":\"heartbeat\"}", 0, GW_PARSE_NOT_JSON},
	{"single quotes", "{'op':'heartbeat'}", 0, GW_PARSE_NOT_JSON},
	{"trailing comma", "{\"op\":\"heartbeat\",}", 0, GW_PARSE_NOT_JSON},
	{"a NUL byte after the object", "{\"op\":\"heartbeat\"}\0", 19, GW_PARSE_NOT_JSON},
	{"a NUL byte inside", "{\"op\":\"heart\0beat\"}", 19, GW_PARSE_NOT_JSON},
	{"invalid UTF-8 in a string", "{\"op\":\"identify\",\"token\":\"a\xff\"}", 0, GW_PARSE_NOT_JSON},
	{"\\u0000 in a string", "{\"op\":\"identify\",\"token\":\"a\\u0000b\"}", 0, GW_PARSE_NOT_JSON},
	{"duplicate op", "{\"op\":\"heartbeat\",\"op\":\"heartbeat\"}", 0, GW_PARSE_NOT_JSON},
	{"duplicate token", "{\"op\":\"identify\",\"token\":\"a\",\"token\":\"a\"}", 0, GW_PARSE_NOT_JSON},
	{"duplicate thread", "{\"op\":\"focus\",\"thread\":null,\"thread\":null}", 0, GW_PARSE_NOT_JSON},
	{"duplicate of an unknown member", "{\"op\":\"heartbeat\",\"x\":1,\"x\":1}", 0, GW_PARSE_NOT_JSON},
	/* JSON, but no object */
	{"empty array", "[]", 0, GW_PARSE_NOT_OBJECT},
	{"an object in an array", "[{\"op\":\"heartbeat\"}]", 0, GW_PARSE_NOT_OBJECT},
	/* no op */
	{"empty object", "{}", 0, GW_PARSE_NO_OP},
	{"op a number", "{\"op\":1}", 0, GW_PARSE_NO_OP},
	{"op null", "{\"op\":null}", 0, GW_PARSE_NO_OP},
	{"op an array", "{\"op\":[\"heartbeat\"]}", 0, GW_PARSE_NO_OP},
	{"op upper case key", "{\"OP\":\"heartbeat\"}", 0, GW_PARSE_NO_OP},
	{"no op but a token", "{\"token\":\"abc\"}", 0, GW_PARSE_NO_OP},
	/* unknown op */
	{"op empty", "{\"op\":\"\"}", 0, GW_PARSE_UNKNOWN_OP},
	{"op capitalised", "{\"op\":\"Identify\",\"token\":\"a\"}", 0, GW_PARSE_UNKNOWN_OP},
	{"op with a blank", "{\"op\":\"heartbeat \"}", 0, GW_PARSE_UNKNOWN_OP},
	{"op a prefix", "{\"op\":\"heart\"}", 0, GW_PARSE_UNKNOWN_OP},
	{"op a server op (ready)", "{\"op\":\"ready\"}", 0, GW_PARSE_UNKNOWN_OP},
	{"op a server op (heartbeat_ack)", "{\"op\":\"heartbeat_ack\"}", 0, GW_PARSE_UNKNOWN_OP},
	{"op none", "{\"op\":\"none\"}", 0, GW_PARSE_UNKNOWN_OP},
	/* unknown members */
	{"heartbeat with a member", "{\"op\":\"heartbeat\",\"x\":1}", 0, GW_PARSE_UNKNOWN_FIELD},
	{"identify with thread", "{\"op\":\"identify\",\"token\":\"a\",\"thread\":null}", 0, GW_PARSE_UNKNOWN_FIELD},
	{"focus with token", "{\"op\":\"focus\",\"thread\":null,\"token\":\"a\"}", 0, GW_PARSE_UNKNOWN_FIELD},
	{"ack with extra", "{\"op\":\"ack\",\"event\":1,\"events\":2}", 0, GW_PARSE_UNKNOWN_FIELD},
	{"autocomplete with items", "{\"op\":\"autocomplete\",\"agent\":\"" U7 "\",\"ref\":\"r\",\"query\":\"\",\"items\":[]}",
	0, GW_PARSE_UNKNOWN_FIELD},
	{"member names are case-sensitive", "{\"op\":\"identify\",\"Token\":\"a\"}", 0, GW_PARSE_UNKNOWN_FIELD},
	{"unknown before a bad value", "{\"op\":\"ack\",\"event\":-1,\"x\":1}", 0, GW_PARSE_UNKNOWN_FIELD},
	{"unknown before a missing one", "{\"op\":\"identify\",\"x\":1}", 0, GW_PARSE_UNKNOWN_FIELD},
	/* missing members */
	{"identify without token", "{\"op\":\"identify\"}", 0, GW_PARSE_MISSING_FIELD},
	{"resume without token", "{\"op\":\"resume\"}", 0, GW_PARSE_MISSING_FIELD},
	{"focus without thread", "{\"op\":\"focus\"}", 0, GW_PARSE_MISSING_FIELD},
	{"idle without idle", "{\"op\":\"idle\"}", 0, GW_PARSE_MISSING_FIELD},
	{"typing without thread", "{\"op\":\"typing\"}", 0, GW_PARSE_MISSING_FIELD},
	{"ack without event", "{\"op\":\"ack\"}", 0, GW_PARSE_MISSING_FIELD},
	{"autocomplete without agent", "{\"op\":\"autocomplete\",\"ref\":\"r\",\"query\":\"\"}", 0, GW_PARSE_MISSING_FIELD},
	{"autocomplete without ref", "{\"op\":\"autocomplete\",\"agent\":\"" U7 "\",\"query\":\"\"}", 0, GW_PARSE_MISSING_FIELD},
	{"autocomplete without query", "{\"op\":\"autocomplete\",\"agent\":\"" U7 "\",\"ref\":\"r\"}", 0, GW_PARSE_MISSING_FIELD},
	/* wrong types and forms */
	{"token a number", "{\"op\":\"identify\",\"token\":1}", 0, GW_PARSE_BAD_FIELD},
	{"token null", "{\"op\":\"resume\",\"token\":null}", 0, GW_PARSE_BAD_FIELD},
	{"token an array", "{\"op\":\"identify\",\"token\":[\"a\"]}", 0, GW_PARSE_BAD_FIELD},
	{"focus thread a number", "{\"op\":\"focus\",\"thread\":1}", 0, GW_PARSE_BAD_FIELD},
	{"focus thread false", "{\"op\":\"focus\",\"thread\":false}", 0, GW_PARSE_BAD_FIELD},
	{"focus thread empty", "{\"op\":\"focus\",\"thread\":\"\"}", 0, GW_PARSE_BAD_FIELD},
	{"typing thread null", "{\"op\":\"typing\",\"thread\":null}", 0, GW_PARSE_BAD_FIELD},
	{"typing thread an object", "{\"op\":\"typing\",\"thread\":{}}", 0, GW_PARSE_BAD_FIELD},
	{"idle a string", "{\"op\":\"idle\",\"idle\":\"true\"}", 0, GW_PARSE_BAD_FIELD},
	{"idle a number", "{\"op\":\"idle\",\"idle\":1}", 0, GW_PARSE_BAD_FIELD},
	{"idle null", "{\"op\":\"idle\",\"idle\":null}", 0, GW_PARSE_BAD_FIELD},
	{"event a string", "{\"op\":\"ack\",\"event\":\"1\"}", 0, GW_PARSE_BAD_FIELD},
	{"event a real", "{\"op\":\"ack\",\"event\":1.0}", 0, GW_PARSE_BAD_FIELD},
	{"event an exponent", "{\"op\":\"ack\",\"event\":1e3}", 0, GW_PARSE_BAD_FIELD},
	{"event true", "{\"op\":\"ack\",\"event\":true}", 0, GW_PARSE_BAD_FIELD},
	{"event null", "{\"op\":\"ack\",\"event\":null}", 0, GW_PARSE_BAD_FIELD},
	{"event -1", "{\"op\":\"ack\",\"event\":-1}", 0, GW_PARSE_BAD_FIELD},
	{"event 2^53", "{\"op\":\"ack\",\"event\":9007199254740992}", 0, GW_PARSE_BAD_FIELD},
	{"event 2^63 - 1", "{\"op\":\"ack\",\"event\":9223372036854775807}", 0, GW_PARSE_BAD_FIELD},
	{"event -2^63", "{\"op\":\"ack\",\"event\":-9223372036854775808}", 0, GW_PARSE_BAD_FIELD},
	{"agent null", "{\"op\":\"autocomplete\",\"agent\":null,\"ref\":\"r\",\"query\":\"\"}", 0, GW_PARSE_BAD_FIELD},
	{"ref a number", "{\"op\":\"autocomplete\",\"agent\":\"" U7 "\",\"ref\":1,\"query\":\"\"}", 0, GW_PARSE_BAD_FIELD},
	{"ref empty", "{\"op\":\"autocomplete\",\"agent\":\"" U7 "\",\"ref\":\"\",\"query\":\"\"}", 0, GW_PARSE_BAD_FIELD},
	{"query null", "{\"op\":\"autocomplete\",\"agent\":\"" U7 "\",\"ref\":\"r\",\"query\":null}", 0, GW_PARSE_BAD_FIELD},
	{"query a number", "{\"op\":\"autocomplete\",\"agent\":\"" U7 "\",\"ref\":\"r\",\"query\":0}", 0, GW_PARSE_BAD_FIELD},
};

/* One check per status: every case of the table that expects it. */
static void
test_refusals(void)
{
	static const char *const what[] = {
		NULL,
		"not one JSON text: empty, unterminated, trailing data, NULs, bad UTF-8, \\u0000, duplicates",
		"JSON arrays",
		"no op, op not a string, OP in upper case",
		"op unknown, empty, capitalised, a prefix, a server op",
		"members of no op or of another op; unknown reported before bad or missing",
		"each op without each of its members",
		"each member of the wrong type, form or range",
	};
	gw_parse_status want;
	size_t		i;

	for (want = GW_PARSE_NOT_JSON; want <= GW_PARSE_BAD_FIELD; want++)
	{
		bool		pass = true;
		int			n = 0;

		for (i = 0; i < N_ELEMS(refusals); i++)
		{
			const parse_case *c = &refusals[i];
			gw_msg		m;
			gw_parse_status got;

			if (c->want != want)
				continue;
			n++;
			memset(&m, 0x5a, sizeof(m));
			got = parse_exact(c->text, c->len ? c->len : strlen(c->text), &m);
			snprintf(desc, sizeof(desc), "%s (got %s)", c->name, gw_parse_status_code(got));
			pass = unit_case(got == want && is_zero(&m), desc) && pass;
		}
		snprintf(desc, sizeof(desc), "%s: %d cases, message zeroed: %s",
				 gw_parse_status_code(want), n, what[want]);
		UNIT_OK(pass && n > 0, desc);
	}
}

/* --- valid forms ----------------------------------------------------------- */

static void
test_valid_forms(void)
{
	gw_msg		m;

	UNIT_OK(parse("{\"op\":\"identify\",\"token\":\"bothy1.abc\"}", &m) == GW_PARSE_OK &&
			m.op == GW_OP_IDENTIFY && strcmp(m.token, "bothy1.abc") == 0 && m.token_len == 10,
			"identify: op, token and its length");
	UNIT_OK(parse("{\"op\":\"resume\",\"token\":\"r.e.s\"}", &m) == GW_PARSE_OK &&
			m.op == GW_OP_RESUME && strcmp(m.token, "r.e.s") == 0 && m.token_len == 5,
			"resume: op and token");
	UNIT_OK(parse("{\"op\":\"heartbeat\"}", &m) == GW_PARSE_OK && m.op == GW_OP_HEARTBEAT,
			"heartbeat");
	UNIT_OK(parse("{\"op\":\"focus\",\"thread\":\"" U7 "\"}", &m) == GW_PARSE_OK &&
			m.op == GW_OP_FOCUS && m.has_thread && uuid_is(&m.thread, U7),
			"focus on a thread");
	memset(&m, 0x5a, sizeof(m));
	UNIT_OK(parse("{\"op\":\"focus\",\"thread\":null}", &m) == GW_PARSE_OK &&
			m.op == GW_OP_FOCUS && !m.has_thread && uuid_is(&m.thread, UNIL),
			"focus null: no thread, the thread zero");
	UNIT_OK(parse("{\"op\":\"idle\",\"idle\":true}", &m) == GW_PARSE_OK && m.op == GW_OP_IDLE && m.idle,
			"idle true");
	UNIT_OK(parse("{\"op\":\"idle\",\"idle\":false}", &m) == GW_PARSE_OK && m.op == GW_OP_IDLE && !m.idle,
			"idle false");
	UNIT_OK(parse("{\"op\":\"typing\",\"thread\":\"" U7 "\"}", &m) == GW_PARSE_OK &&
			m.op == GW_OP_TYPING && m.has_thread && uuid_is(&m.thread, U7),
			"typing in a thread");
	UNIT_OK(parse("{\"op\":\"ack\",\"event\":42}", &m) == GW_PARSE_OK && m.op == GW_OP_ACK && m.event == 42,
			"ack");
	UNIT_OK(parse("{\"op\":\"autocomplete\",\"agent\":\"" U7 "\","
				  "\"ref\":\"r-1\",\"query\":\"deploy st\"}", &m) == GW_PARSE_OK &&
			m.op == GW_OP_AUTOCOMPLETE && uuid_is(&m.agent, U7) &&
			strcmp(m.ref, "r-1") == 0 && strcmp(m.query, "deploy st") == 0,
			"autocomplete: agent, ref and query");
	UNIT_OK(parse("{\"query\":\"q\",\"ref\":\"r\",\"agent\":\"" U7 "\",\"op\":\"autocomplete\"}", &m) ==
			GW_PARSE_OK && m.op == GW_OP_AUTOCOMPLETE && strcmp(m.query, "q") == 0,
			"member order does not matter (op last)");
	UNIT_OK(parse(" \n{ \"op\" : \"heartbeat\" }\t\r\n", &m) == GW_PARSE_OK && m.op == GW_OP_HEARTBEAT,
			"JSON whitespace around and inside the object");
	UNIT_OK(parse("{\"op\":\"heart\\u0062eat\"}", &m) == GW_PARSE_OK && m.op == GW_OP_HEARTBEAT,
			"an escaped letter in op is the same op");
	UNIT_OK(parse_exact("{\"op\":\"heartbeat\"}garbage", 18, &m) == GW_PARSE_OK && m.op == GW_OP_HEARTBEAT,
			"only len bytes are read");
}

/* --- tokens ------------------------------------------------------------------ */

/* {"op":"identify","token":"<body>"} with body as given (already escaped). */
static gw_parse_status
parse_token(const char *body, gw_msg *m)
{
	size_t		n = strlen(body) + 64;
	char	   *text = malloc(n);
	gw_parse_status status;

	if (text == NULL)
		exit(2);
	snprintf(text, n, "{\"op\":\"identify\",\"token\":\"%s\"}", body);
	status = parse(text, m);
	free(text);
	return status;
}

static void
test_tokens(void)
{
	static const char *const bad[] = {
		"", "a b", "a\\tb", "a\\nb", "\\u007f", "a\\u0001", "\\u00e9", "\xc3\xa9", "\xe2\x82\xac", " a", "a ",
	};
	char		body[BOTHY_TOKEN_MAX + 2];
	char		printable[256];
	char		want[128];
	size_t		i,
				n = 0;
	gw_msg		m;
	bool		pass = true;

	memset(body, 'a', BOTHY_TOKEN_MAX);
	body[BOTHY_TOKEN_MAX] = '\0';
	UNIT_OK(parse_token(body, &m) == GW_PARSE_OK && m.token_len == BOTHY_TOKEN_MAX &&
			strlen(m.token) == BOTHY_TOKEN_MAX, "token: 1024 bytes accepted");
	body[BOTHY_TOKEN_MAX] = 'a';
	body[BOTHY_TOKEN_MAX + 1] = '\0';
	UNIT_OK(parse_token(body, &m) == GW_PARSE_BAD_FIELD && is_zero(&m), "token: 1025 bytes refused");
	UNIT_OK(parse_token("x", &m) == GW_PARSE_OK && m.token_len == 1, "token: 1 byte accepted");
	for (i = 0; i < N_ELEMS(bad); i++)
		pass = pass && parse_token(bad[i], &m) == GW_PARSE_BAD_FIELD;
	UNIT_OK(pass, "token: empty, blanks, control bytes, DEL and non-ASCII refused");

	/* Every printable byte 0x21..0x7e, with '"' and '\' escaped in the JSON. */
	for (i = 0x21; i <= 0x7e; i++)
	{
		if (i == '"' || i == '\\')
			printable[n++] = '\\';
		printable[n++] = (char) i;
		want[i - 0x21] = (char) i;
	}
	printable[n] = '\0';
	want[0x7e - 0x21 + 1] = '\0';
	UNIT_OK(parse_token(printable, &m) == GW_PARSE_OK && strcmp(m.token, want) == 0 &&
			m.token_len == 0x7e - 0x21 + 1, "token: every printable ASCII byte, escapes decoded");
	UNIT_OK(parse_token("\\u0041\\/", &m) == GW_PARSE_OK && strcmp(m.token, "A/") == 0,
			"token: \\u escapes of printable bytes are those bytes");
	UNIT_OK(parse("{\"op\":\"resume\",\"token\":\"a\\u0020b\"}", &m) == GW_PARSE_BAD_FIELD,
			"resume token: an escaped blank refused too");
}

/* --- UUIDs --------------------------------------------------------------------- */

static void
test_uuids(void)
{
	static const char *const bad[] = {
		"0190A4A8-2C3E-7D41-8F5A-3B9C2D1E0F4A",	/* upper case */
		"0190a4a8-2c3e-7d41-8f5a-3b9c2d1e0F4a",	/* one upper-case digit */
		"0190a4a82c3e7d418f5a3b9c2d1e0f4a",	/* no hyphens */
		"{0190a4a8-2c3e-7d41-8f5a-3b9c2d1e0f4a}",	/* braces */
		"urn:uuid:0190a4a8-2c3e-7d41-8f5a-3b9c2d1e0f4a",
		"0190a4a8-2c3e-7d41-8f5a-3b9c2d1e0f4",	/* 35 */
		"0190a4a8-2c3e-7d41-8f5a-3b9c2d1e0f4a0",	/* 37 */
		"0190a4a82-c3e-7d41-8f5a-3b9c2d1e0f4a",	/* hyphen moved */
		"0190a4a8-2c3e-7d41-8f5a-3b9c2d1e0f4g",	/* not hex */
		" 0190a4a8-2c3e-7d41-8f5a-3b9c2d1e0f4",	/* leading blank, 36 long */
	};
	char		text[128];
	size_t		i;
	gw_msg		m;
	bool		pass = true;

	for (i = 0; i < N_ELEMS(bad); i++)
	{
		bool		refused;

		snprintf(text, sizeof(text), "{\"op\":\"typing\",\"thread\":\"%s\"}", bad[i]);
		refused = parse(text, &m) == GW_PARSE_BAD_FIELD;
		snprintf(text, sizeof(text), "{\"op\":\"focus\",\"thread\":\"%s\"}", bad[i]);
		refused = refused && parse(text, &m) == GW_PARSE_BAD_FIELD;
		snprintf(text, sizeof(text),
				 "{\"op\":\"autocomplete\",\"agent\":\"%s\",\"ref\":\"r\",\"query\":\"\"}", bad[i]);
		refused = refused && parse(text, &m) == GW_PARSE_BAD_FIELD && is_zero(&m);
		pass = unit_case(refused, bad[i]) && pass;
	}
	UNIT_OK(pass, "UUID: upper case, no hyphens, braces, urn:, 35 or 37 long, a moved hyphen, "
			"non-hex refused in typing, focus and autocomplete");
	UNIT_OK(parse("{\"op\":\"typing\",\"thread\":\"" U4 "\"}", &m) == GW_PARSE_OK && uuid_is(&m.thread, U4),
			"UUID: a canonical non-v7 UUID is accepted (the form is checked, not the version)");
	UNIT_OK(parse("{\"op\":\"focus\",\"thread\":\"" UNIL "\"}", &m) == GW_PARSE_OK && m.has_thread &&
			uuid_is(&m.thread, UNIL), "UUID: the nil UUID is a thread, unlike null");
	UNIT_OK(parse("{\"op\":\"typing\",\"thread\":\"0190a4a8\\u002d2c3e-7d41-8f5a-3b9c2d1e0f4a\"}", &m) ==
			GW_PARSE_OK && uuid_is(&m.thread, U7), "UUID: an escaped hyphen is the hyphen");
}

/* --- ack, ref and query limits ---------------------------------------------------- */

static void
test_limits(void)
{
	char		text[4096];
	char		s[2048];
	gw_msg		m;
	size_t		i;

	UNIT_OK(parse("{\"op\":\"ack\",\"event\":0}", &m) == GW_PARSE_OK && m.event == 0, "ack: 0");
	UNIT_OK(parse("{\"op\":\"ack\",\"event\":9007199254740991}", &m) == GW_PARSE_OK &&
			m.event == GW_EVENT_MAX && GW_EVENT_MAX == (INT64_C(1) << 53) - 1, "ack: 2^53 - 1");
	UNIT_OK(parse("{\"op\":\"ack\",\"event\":-0}", &m) == GW_PARSE_OK && m.event == 0,
			"ack: -0 is the integer 0");
	UNIT_OK(parse("{\"op\":\"ack\",\"event\":9223372036854775808}", &m) != GW_PARSE_OK && is_zero(&m),
			"ack: beyond 64 bits refused");

#define AUTOCOMPLETE(ref, query) \
	(snprintf(text, sizeof(text), \
			  "{\"op\":\"autocomplete\",\"agent\":\"" U7 "\",\"ref\":\"%s\",\"query\":\"%s\"}", \
			  (ref), (query)), parse(text, &m))

	memset(s, 'r', GW_REF_MAX);
	s[GW_REF_MAX] = '\0';
	UNIT_OK(AUTOCOMPLETE(s, "") == GW_PARSE_OK && strlen(m.ref) == GW_REF_MAX && m.query[0] == '\0',
			"ref: 128 bytes, query empty");
	s[GW_REF_MAX] = 'r';
	s[GW_REF_MAX + 1] = '\0';
	UNIT_OK(AUTOCOMPLETE(s, "") == GW_PARSE_BAD_FIELD, "ref: 129 bytes refused");
	UNIT_OK(AUTOCOMPLETE("r", "") == GW_PARSE_OK && strcmp(m.ref, "r") == 0, "ref: 1 byte");

	/* Bytes, not characters: 64 x U+00E9 is 128 bytes, 43 x U+20AC is 129. */
	s[0] = '\0';
	for (i = 0; i < 64; i++)
		strcat(s, "\xc3\xa9");
	UNIT_OK(AUTOCOMPLETE(s, "") == GW_PARSE_OK && strlen(m.ref) == 128 && strcmp(m.ref, s) == 0,
			"ref: 64 two-byte characters (128 bytes) accepted");
	s[0] = '\0';
	for (i = 0; i < 43; i++)
		strcat(s, "\xe2\x82\xac");
	UNIT_OK(AUTOCOMPLETE(s, "") == GW_PARSE_BAD_FIELD,
			"ref: 43 three-byte characters (129 bytes) refused");
	s[0] = '\0';
	for (i = 0; i < 64; i++)
		strcat(s, "\\u00e9");
	UNIT_OK(AUTOCOMPLETE(s, "") == GW_PARSE_OK && strlen(m.ref) == 128,
			"ref: the length is of the decoded text, not of its escapes");
	UNIT_OK(AUTOCOMPLETE("a\\\"b\\\\c\\n", "") == GW_PARSE_OK && strcmp(m.ref, "a\"b\\c\n") == 0,
			"ref: escapes decoded, control characters allowed");

	memset(s, 'q', GW_QUERY_MAX);
	s[GW_QUERY_MAX] = '\0';
	UNIT_OK(AUTOCOMPLETE("r", s) == GW_PARSE_OK && strlen(m.query) == GW_QUERY_MAX,
			"query: 1024 bytes");
	s[GW_QUERY_MAX] = 'q';
	s[GW_QUERY_MAX + 1] = '\0';
	UNIT_OK(AUTOCOMPLETE("r", s) == GW_PARSE_BAD_FIELD && is_zero(&m),
			"query: 1025 bytes refused, and the agent and ref parsed before are cleared");
	UNIT_OK(AUTOCOMPLETE("r", "two words \\u00e9") == GW_PARSE_OK &&
			strcmp(m.query, "two words \xc3\xa9") == 0, "query: blanks and escapes kept");
#undef AUTOCOMPLETE
}

/* --- names ----------------------------------------------------------------------- */

static void
test_names(void)
{
	static const char *const ops[] = {
		"none", "identify", "resume", "heartbeat", "focus", "idle", "typing", "ack", "autocomplete",
		"autocomplete_answer",
	};
	static const char *const codes[] = {
		"ok", "not_json", "not_object", "no_op", "unknown_op", "unknown_field", "missing_field",
		"bad_field",
	};
	bool		pass = true;
	int			i;

	for (i = 0; i <= GW_OP_AUTOCOMPLETE_ANSWER; i++)
		pass = pass && strcmp(gw_op_name((gw_op) i), ops[i]) == 0;
	UNIT_OK(pass && strcmp(gw_op_name((gw_op) 99), "none") == 0,
			"op names as clients write them; out of range is none");
	pass = true;
	for (i = 0; i <= GW_PARSE_BAD_FIELD; i++)
		pass = pass && strcmp(gw_parse_status_code((gw_parse_status) i), codes[i]) == 0;
	UNIT_OK(pass && strcmp(gw_parse_status_code((gw_parse_status) 99), "unknown") == 0,
			"parse status codes; out of range is unknown");
}

/* --- encoders -------------------------------------------------------------------- */

static bool
member_int(json_t *obj, const char *name, json_int_t value)
{
	json_t	   *v = json_object_get(obj, name);

	return json_is_integer(v) && json_integer_value(v) == value;
}

typedef int (*encode_fn) (char *out, size_t size, const void *arg);

/*
 * Every buffer size short of the message: -1 and nothing written at or past
 * size; then exactly enough: the length.  need is the length without NUL.
 */
static bool
refuses_small(encode_fn fn, const void *arg, int need)
{
	char		buf[2048];
	size_t		size;
	size_t		j;

	if (need < 0 || (size_t) need + 2 > sizeof(buf))
		return false;
	for (size = 0; size <= (size_t) need; size++)
	{
		memset(buf, '#', sizeof(buf));
		if (fn(buf, size, arg) != -1)
			return false;
		for (j = size; j < sizeof(buf); j++)
			if (buf[j] != '#')
				return false;
	}
	return fn(buf, (size_t) need + 1, arg) == need;
}

typedef struct ready_args
{
	bothy_uuid	session,
				bind,
				node;
	const char *resume;
	int			heartbeat_ms;
	bool		agent;
	int64_t		acked;
} ready_args;

static int
encode_ready(char *out, size_t size, const void *arg)
{
	const ready_args *a = arg;

	return gw_encode_ready(out, size, &a->session, &a->bind, a->resume, &a->node,
						   a->heartbeat_ms, a->agent, a->acked);
}

static int
encode_heartbeat_ack(char *out, size_t size, const void *arg)
{
	(void) arg;
	return gw_encode_heartbeat_ack(out, size);
}

static int
encode_error_rejected(char *out, size_t size, const void *arg)
{
	return gw_encode_error(out, size, *(const gw_op *) arg, "rejected");
}

static void
set_uuid(bothy_uuid *u, const char *text)
{
	if (!bothy_uuid_parse(text, strlen(text), u))
		exit(2);
}

static void
test_encode_ready(void)
{
	ready_args	a;
	char		out[1024];
	json_t	   *obj;
	int			n;

	set_uuid(&a.session, U7);
	set_uuid(&a.bind, "0190a4a8-2c3e-7d42-8f5a-3b9c2d1e0f4b");
	set_uuid(&a.node, "0190a4a8-2c3e-7d43-8f5a-3b9c2d1e0f4c");
	a.resume = "bothy1.20250101-000000-000-0a1b2c3d.eyJr.c2ln";
	a.heartbeat_ms = 30000;
	a.agent = false;
	a.acked = 0;

	n = encode_ready(out, sizeof(out), &a);
	obj = unit_load_object(out, n);
	UNIT_OK(obj != NULL && (size_t) n == strlen(out) && json_object_size(obj) == 6 &&
			unit_member_is(obj, "op", "ready") && unit_member_is(obj, "session", U7) &&
			unit_member_is(obj, "bind", "0190a4a8-2c3e-7d42-8f5a-3b9c2d1e0f4b") &&
			unit_member_is(obj, "resume", a.resume) &&
			unit_member_is(obj, "node", "0190a4a8-2c3e-7d43-8f5a-3b9c2d1e0f4c") &&
			member_int(obj, "heartbeat_ms", 30000) && json_object_get(obj, "acked") == NULL,
			"ready for a person: op, session, bind, resume, node, heartbeat_ms and no acked");
	json_decref(obj);
	UNIT_OK(refuses_small(encode_ready, &a, n), "ready for a person: every too-small buffer is -1");

	a.agent = true;
	a.acked = GW_EVENT_MAX;
	a.heartbeat_ms = 1000;
	n = encode_ready(out, sizeof(out), &a);
	obj = unit_load_object(out, n);
	UNIT_OK(obj != NULL && (size_t) n == strlen(out) && json_object_size(obj) == 7 &&
			unit_member_is(obj, "op", "ready") && unit_member_is(obj, "session", U7) &&
			unit_member_is(obj, "resume", a.resume) && member_int(obj, "heartbeat_ms", 1000) &&
			member_int(obj, "acked", GW_EVENT_MAX),
			"ready for an agent: the same members and acked up to 2^53 - 1");
	json_decref(obj);
	a.acked = 0;
	n = encode_ready(out, sizeof(out), &a);
	obj = unit_load_object(out, n);
	UNIT_OK(obj != NULL && member_int(obj, "acked", 0), "ready for an agent: acked 0 is written");
	json_decref(obj);
	UNIT_OK(refuses_small(encode_ready, &a, n), "ready for an agent: every too-small buffer is -1");
}

static void
test_encode_others(void)
{
	char		out[1024];
	json_t	   *obj;
	int			n;
	gw_op		op;
	bool		pass = true;

	n = gw_encode_heartbeat_ack(out, sizeof(out));
	UNIT_OK(n == 22 && strcmp(out, "{\"op\":\"heartbeat_ack\"}") == 0, "heartbeat_ack: exactly its text");
	UNIT_OK(refuses_small(encode_heartbeat_ack, NULL, n), "heartbeat_ack: every too-small buffer is -1");

	for (op = GW_OP_IDENTIFY; op <= GW_OP_AUTOCOMPLETE_ANSWER; op++)
	{
		n = gw_encode_error(out, sizeof(out), op, "timeout");
		obj = unit_load_object(out, n);
		pass = unit_case(obj != NULL && (size_t) n == strlen(out) && json_object_size(obj) == 3 &&
						 unit_member_is(obj, "op", "error") && unit_member_is(obj, "request", gw_op_name(op)) &&
						 unit_member_is(obj, "code", "timeout"), gw_op_name(op)) && pass;
		json_decref(obj);
	}
	UNIT_OK(pass, "error: op, request (each op's name) and code, and nothing else");
	op = GW_OP_AUTOCOMPLETE;
	n = gw_encode_error(out, sizeof(out), op, "rejected");
	UNIT_OK(refuses_small(encode_error_rejected, &op, n), "error: every too-small buffer is -1");

}

int
main(void)
{
	unit_diag("refusals");
	test_refusals();
	unit_diag("valid forms");
	test_valid_forms();
	unit_diag("tokens, UUIDs and limits");
	test_tokens();
	test_uuids();
	test_limits();
	test_names();
	unit_diag("encoders");
	test_encode_ready();
	test_encode_others();
	return unit_done();
}
