/*
 * signal_cases.h
 *		The test corpus of the signal codec as two tables: example signals
 *		with the exact compact text the encoder writes for them, and decode
 *		cases (payload, expected status, reason and member).
 *
 * Kept as plain data, apart from the program that runs it, so the same
 * rows can feed other suites (the SQL face of the codec, the gateway's
 * listener) without copying them by hand.
 */
#ifndef BOTHY_SIGNAL_CASES_H
#define BOTHY_SIGNAL_CASES_H

#include <stddef.h>

#include "signal.h"

/* IDs: UUIDv7 where a member requires it, other versions elsewhere. */
#define NODE	"01890a5d-ac96-774b-bcce-b302099a8057"
#define NODE2	"0190f5a8-1c2d-7e3f-8a4b-5c6d7e8f9a0b"
#define BIND	"01890a5d-ac97-7000-8000-000000000001"
#define CONN	"01890a5d-ac98-7fff-bfff-ffffffffffff"
#define U1		"3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b"
#define U2		"5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d"
#define U3		"c0ffee00-1234-4abc-9def-0123456789ab"
#define U4		"d1e2f3a4-b5c6-4d7e-8f90-a1b2c3d4e5f6"
#define U5		"00000000-0000-0000-0000-000000000000"
#define V4		"3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b"	/* not a UUIDv7 */
#define V7_BAD_VARIANT "01890a5d-ac96-774b-7cce-b302099a8057"

/* Building JSON text in C string literals. */
#define Q(s)		"\"" s "\""
#define KV(n, v)	"," Q(n) ":" v
#define KVS(n, s)	KV(n, Q(s))
#define OPEN(k)		"{" Q("kind") ":" Q(k)
#define CLOSE		"}"

#define TYPING_M	KVS("node", NODE) KVS("thread", U1) KVS("principal", U2)
/* reach: node IDs of 32 hex digits each (docs/signals.md, "Reach") */
#define R_A		"01890a5dac96774bbcceb302099a8057"
#define R_B		"01890a5dac967aaa8bbb000000000002"
#define REACH2	R_A R_B
#define REACH8	R_A R_B R_A R_B R_A R_B R_A R_B
#define REACH32	REACH8 REACH8 REACH8 REACH8
#define REACH128	REACH32 REACH32 REACH32 REACH32
#define RUN_M		KVS("node", NODE) KVS("run", U3) KVS("thread", U1)
#define PRESENCE_M	KVS("node", NODE) KVS("agent", U2)
#define DEVICE_M	KVS("node", NODE) KVS("device", U3) KVS("gateway_session", U4)
#define CONSUMER_M	KVS("node", NODE) KVS("agent", U2) KVS("gateway_session", U4)
#define HINT_M		KVS("node", NODE) KVS("recipient", U1) KVS("nid", U2)
#define HINT_TAIL	KVS("hint_kind", "mention") KV("quiet", "false") KV("count", "3")

/* ---------------------------------------------------------------------
 * Examples: a signal by its fields, and exactly what the encoder writes.
 * Field values are in their JSON text form without quotes.
 * ---------------------------------------------------------------------
 */

typedef struct signal_field
{
	const char *name;
	const char *value;
} signal_field;

typedef struct signal_example
{
	const char *name;
	bothy_kind	kind;
	unsigned	optional;
	signal_field fields[10];	/* up to a {NULL, NULL} */
	const char *compact;
} signal_example;

static const signal_example signal_examples[] = {
	{"gateway.typing", BOTHY_KIND_GATEWAY_TYPING, 0,
		{{"node", NODE}, {"thread", U1}, {"principal", U2}},
	OPEN("gateway.typing") TYPING_M CLOSE},
	{"gateway.run", BOTHY_KIND_GATEWAY_RUN, 0,
		{{"node", NODE}, {"run", U3}, {"thread", U1}, {"version", "42"}},
	OPEN("gateway.run") RUN_M KV("version", "42") CLOSE},
	{"gateway.run at version 0", BOTHY_KIND_GATEWAY_RUN, 0,
		{{"node", NODE}, {"run", U3}, {"thread", U1}, {"version", "0"}},
	OPEN("gateway.run") RUN_M KV("version", "0") CLOSE},
	{"gateway.run at the largest version", BOTHY_KIND_GATEWAY_RUN, 0,
		{{"node", NODE}, {"run", U3}, {"thread", U1}, {"version", "9007199254740991"}},
	OPEN("gateway.run") RUN_M KV("version", "9007199254740991") CLOSE},
	{"gateway.agent_presence", BOTHY_KIND_GATEWAY_AGENT_PRESENCE, 0,
		{{"node", NODE}, {"agent", U2}, {"state", "online"}},
	OPEN("gateway.agent_presence") PRESENCE_M KVS("state", "online") CLOSE},
	{"gateway.agent_presence with billing_mode", BOTHY_KIND_GATEWAY_AGENT_PRESENCE,
		BOTHY_OPT_BILLING_MODE,
		{{"node", NODE}, {"agent", U2}, {"state", "busy"}, {"billing_mode", "metered"}},
	OPEN("gateway.agent_presence") PRESENCE_M KVS("state", "busy") KVS("billing_mode", "metered") CLOSE},
	{"gateway.agent_presence with actor", BOTHY_KIND_GATEWAY_AGENT_PRESENCE,
		BOTHY_OPT_ACTOR,
		{{"node", NODE}, {"agent", U2}, {"state", "offline"}, {"actor", U1}},
	OPEN("gateway.agent_presence") PRESENCE_M KVS("state", "offline") KVS("actor", U1) CLOSE},
	{"gateway.agent_presence with both", BOTHY_KIND_GATEWAY_AGENT_PRESENCE,
		BOTHY_OPT_BILLING_MODE | BOTHY_OPT_ACTOR,
		{{"node", NODE}, {"agent", U2}, {"state", "online"}, {"billing_mode", "free"}, {"actor", U1}},
	OPEN("gateway.agent_presence") PRESENCE_M KVS("state", "online") KVS("billing_mode", "free") KVS("actor", U1) CLOSE},
	{"gateway.agent_presence included", BOTHY_KIND_GATEWAY_AGENT_PRESENCE,
		BOTHY_OPT_BILLING_MODE,
		{{"node", NODE}, {"agent", U2}, {"state", "online"}, {"billing_mode", "included"}},
	OPEN("gateway.agent_presence") PRESENCE_M KVS("state", "online") KVS("billing_mode", "included") CLOSE},
	{"gateway.device", BOTHY_KIND_GATEWAY_DEVICE, 0,
		{{"node", NODE}, {"device", U3}, {"gateway_session", U4}, {"bind_id", BIND}},
	OPEN("gateway.device") DEVICE_M KVS("bind_id", BIND) CLOSE},
	{"gateway.consumer", BOTHY_KIND_GATEWAY_CONSUMER, 0,
		{{"node", NODE}, {"agent", U2}, {"gateway_session", U4}},
	OPEN("gateway.consumer") CONSUMER_M CLOSE},
	{"gateway.hint", BOTHY_KIND_GATEWAY_HINT, 0,
		{{"node", NODE}, {"recipient", U1}, {"nid", U2}, {"hint_kind", "mention"},
		{"quiet", "false"}, {"count", "3"}},
	OPEN("gateway.hint") HINT_M HINT_TAIL CLOSE},
	{"gateway.hint with thread", BOTHY_KIND_GATEWAY_HINT, BOTHY_OPT_THREAD,
		{{"node", NODE}, {"recipient", U1}, {"nid", U2}, {"hint_kind", "reply"},
		{"quiet", "true"}, {"count", "0"}, {"thread", U3}},
		OPEN("gateway.hint") HINT_M KVS("hint_kind", "reply") KV("quiet", "true")
	KV("count", "0") KVS("thread", U3) CLOSE},
	{"gateway.hint with message", BOTHY_KIND_GATEWAY_HINT, BOTHY_OPT_MESSAGE,
		{{"node", NODE}, {"recipient", U1}, {"nid", U2}, {"hint_kind", "direct"},
		{"quiet", "false"}, {"count", "2147483647"}, {"message", U4}},
		OPEN("gateway.hint") HINT_M KVS("hint_kind", "direct") KV("quiet", "false")
	KV("count", "2147483647") KVS("message", U4) CLOSE},
	{"gateway.hint with target", BOTHY_KIND_GATEWAY_HINT, BOTHY_OPT_TARGET,
		{{"node", NODE}, {"recipient", U1}, {"nid", U2}, {"hint_kind", "run"},
		{"quiet", "false"}, {"count", "1"}, {"target", U5}},
		OPEN("gateway.hint") HINT_M KVS("hint_kind", "run") KV("quiet", "false")
	KV("count", "1") KVS("target", U5) CLOSE},
	{"gateway.hint with all optional members", BOTHY_KIND_GATEWAY_HINT,
		BOTHY_OPT_THREAD | BOTHY_OPT_MESSAGE | BOTHY_OPT_TARGET,
		{{"node", NODE2}, {"recipient", U1}, {"nid", U2}, {"hint_kind", "invite"},
		{"quiet", "true"}, {"count", "7"}, {"thread", U3}, {"message", U4}, {"target", U5}},
		OPEN("gateway.hint") KVS("node", NODE2) KVS("recipient", U1) KVS("nid", U2)
		KVS("hint_kind", "invite") KV("quiet", "true") KV("count", "7")
	KVS("thread", U3) KVS("message", U4) KVS("target", U5) CLOSE},
	{"gateway.hint system", BOTHY_KIND_GATEWAY_HINT, 0,
		{{"node", NODE}, {"recipient", U1}, {"nid", U2}, {"hint_kind", "system"},
		{"quiet", "true"}, {"count", "12"}},
		OPEN("gateway.hint") HINT_M KVS("hint_kind", "system") KV("quiet", "true")
	KV("count", "12") CLOSE},
	{"terminal.session_open", BOTHY_KIND_TERMINAL_SESSION_OPEN, 0,
		{{"host_id", U1}, {"session_id", U2}},
	OPEN("terminal.session_open") KVS("host_id", U1) KVS("session_id", U2) CLOSE},
	{"terminal.host_close", BOTHY_KIND_TERMINAL_HOST_CLOSE, 0,
		{{"host_id", U1}},
	OPEN("terminal.host_close") KVS("host_id", U1) CLOSE},
	{"terminal.host_present", BOTHY_KIND_TERMINAL_HOST_PRESENT, 0,
		{{"host_id", U1}, {"conn_id", CONN}},
	OPEN("terminal.host_present") KVS("host_id", U1) KVS("conn_id", CONN) CLOSE},
	{"terminal.host_gone", BOTHY_KIND_TERMINAL_HOST_GONE, 0,
		{{"host_id", U1}, {"conn_id", CONN}},
	OPEN("terminal.host_gone") KVS("host_id", U1) KVS("conn_id", CONN) CLOSE},
	{"terminal.session_paired", BOTHY_KIND_TERMINAL_SESSION_PAIRED, 0,
		{{"host_id", U1}, {"session_id", U2}},
	OPEN("terminal.session_paired") KVS("host_id", U1) KVS("session_id", U2) CLOSE},
	{"gateway.agent_event", BOTHY_KIND_GATEWAY_AGENT_EVENT, 0,
		{{"node", NODE}, {"agent", U2}, {"event", "17"}},
	OPEN("gateway.agent_event") KVS("node", NODE) KVS("agent", U2) KV("event", "17") CLOSE},
	{"gateway.agent_event at the largest event", BOTHY_KIND_GATEWAY_AGENT_EVENT, 0,
		{{"node", NODE}, {"agent", U2}, {"event", "9007199254740991"}},
	OPEN("gateway.agent_event") KVS("node", NODE) KVS("agent", U2)
		KV("event", "9007199254740991") CLOSE},
	{"terminal.log", BOTHY_KIND_TERMINAL_LOG, 0,
		{{"seq", "42"}},
	OPEN("terminal.log") KV("seq", "42") CLOSE},
	{"terminal.log at 0", BOTHY_KIND_TERMINAL_LOG, 0,
		{{"seq", "0"}},
	OPEN("terminal.log") KV("seq", "0") CLOSE},
	{"terminal.log at the largest number", BOTHY_KIND_TERMINAL_LOG, 0,
		{{"seq", "9007199254740991"}},
	OPEN("terminal.log") KV("seq", "9007199254740991") CLOSE},
	{"wal.fence", BOTHY_KIND_WAL_FENCE, 0,
		{{"lsn", "28736736"}},
	OPEN("wal.fence") KV("lsn", "28736736") CLOSE},
	{"wal.fence at the largest position", BOTHY_KIND_WAL_FENCE, 0,
		{{"lsn", "9223372036854775807"}},
	OPEN("wal.fence") KV("lsn", "9223372036854775807") CLOSE},
	{"gateway.typing with its reach", BOTHY_KIND_GATEWAY_TYPING, BOTHY_OPT_REACH,
		{{"node", NODE}, {"thread", U1}, {"principal", U2}, {"reach", REACH2}},
	OPEN("gateway.typing") TYPING_M KVS("reach", REACH2) CLOSE},
	{"gateway.run with no node reached", BOTHY_KIND_GATEWAY_RUN, BOTHY_OPT_REACH,
		{{"node", NODE}, {"run", U3}, {"thread", U1}, {"version", "42"}, {"reach", ""}},
	OPEN("gateway.run") RUN_M KV("version", "42") KVS("reach", "") CLOSE},
	{"gateway.run with the most nodes a reach names", BOTHY_KIND_GATEWAY_RUN, BOTHY_OPT_REACH,
		{{"node", NODE}, {"run", U3}, {"thread", U1}, {"version", "42"}, {"reach", REACH128}},
	OPEN("gateway.run") RUN_M KV("version", "42") KVS("reach", REACH128) CLOSE},
};

/* ---------------------------------------------------------------------
 * Decode cases.  len 0 means strlen(payload); an explicit len lets a
 * payload hold a NUL byte.
 * ---------------------------------------------------------------------
 */

typedef struct decode_case
{
	const char *name;
	const char *payload;
	size_t		len;
	bothy_decode_status status;
	bothy_reason reason;
	const char *member;			/* expected err.member */
} decode_case;

#define OK_(name, payload) {name, payload, 0, BOTHY_DECODE_OK, BOTHY_REASON_NONE, ""}
#define IGN(name, payload) {name, payload, 0, BOTHY_DECODE_IGNORED, BOTHY_REASON_NONE, ""}
#define BAD(name, payload, reason, member) \
	{name, payload, 0, BOTHY_DECODE_MALFORMED, BOTHY_REASON_##reason, member}
#define BADN(name, payload, len, reason, member) \
	{name, payload, len, BOTHY_DECODE_MALFORMED, BOTHY_REASON_##reason, member}

#define TYPING		OPEN("gateway.typing") TYPING_M CLOSE
#define FOREIGN		OPEN("other.thing")

static const decode_case decode_cases[] = {
	/* Valid beyond the canonical examples. */
	OK_("kind last", "{" Q("node") ":" Q(NODE) KVS("thread", U1) KVS("principal", U2)
		KVS("kind", "gateway.typing") "}"),
	OK_("members in any order", OPEN("gateway.run") KV("version", "1")
		KVS("thread", U1) KVS("run", U3) KVS("node", NODE) CLOSE),
	OK_("whitespace everywhere", " \t\r\n{ \"kind\" :\t\"gateway.typing\" ,\n \"node\"\r: \""
		NODE "\" , \"thread\" : \"" U1 "\",\"principal\":\"" U2 "\" \n} \n\t"),
	OK_("jsonb text form", "{\"kind\": \"gateway.typing\", \"node\": \"" NODE
		"\", \"thread\": \"" U1 "\", \"principal\": \"" U2 "\"}"),
	OK_("escaped member name", OPEN("gateway.typing") KVS("no\\u0064e", NODE)
		KVS("thread", U1) KVS("\\u0070rincipal", U2) CLOSE),
	OK_("escaped kind name", "{\"k\\u0069nd\":\"gateway.typing\"" TYPING_M "}"),
	OK_("escaped kind value", "{\"kind\":\"gateway.typ\\u0069ng\"" TYPING_M "}"),
	OK_("escaped underscore in kind value", "{\"kind\":\"terminal.host\\u005fclose\""
		KVS("host_id", U1) CLOSE),
	OK_("boolean true", OPEN("gateway.hint") HINT_M KVS("hint_kind", "run")
		KV("quiet", "true") KV("count", "0") CLOSE),
	OK_("node UUIDv7 with variant 8", OPEN("gateway.typing")
		KVS("node", "01890a5d-ac96-774b-8cce-b302099a8057") KVS("thread", U1)
		KVS("principal", U2) CLOSE),
	OK_("any version for a plain ID", OPEN("gateway.typing") KVS("node", NODE)
		KVS("thread", "01890a5d-ac96-174b-bcce-b302099a8057") KVS("principal", U5) CLOSE),

	/* not_json */
	BAD("empty payload", "", NOT_JSON, ""),
	BAD("only whitespace", " \n\t ", NOT_JSON, ""),
	BAD("unterminated object", "{", NOT_JSON, ""),
	BAD("unterminated member", OPEN("gateway.typing"), NOT_JSON, ""),
	BAD("missing value", "{\"kind\":}", NOT_JSON, ""),
	BAD("missing colon", "{\"kind\" \"gateway.typing\"}", NOT_JSON, ""),
	BAD("trailing comma", "{\"kind\":\"other.x\",}", NOT_JSON, ""),
	BAD("trailing comma in array", FOREIGN KV("a", "[1,]") CLOSE, NOT_JSON, ""),
	BAD("leading comma", "{,\"kind\":\"other.x\"}", NOT_JSON, ""),
	BAD("text after the object", TYPING " x", NOT_JSON, ""),
	BAD("two objects", "{} {}", NOT_JSON, ""),
	BAD("single quotes", "{'kind':'other.x'}", NOT_JSON, ""),
	BAD("unquoted name", "{kind:\"other.x\"}", NOT_JSON, ""),
	BAD("comment", "{\"kind\":\"other.x\"/* c */}", NOT_JSON, ""),
	BADN("NUL byte in a string", "{\"kind\":\"other\0x\"}", 18, NOT_JSON, ""),
	BADN("NUL byte after the object", "{\"kind\":\"other.x\"}\0", 19, NOT_JSON, ""),
	BADN("NUL byte as whitespace", "{\0\"kind\":\"other.x\"}", 19, NOT_JSON, ""),
	BAD("raw tab in a string", "{\"kind\":\"other\tx\"}", NOT_JSON, ""),
	BAD("raw newline in a string", "{\"kind\":\"other\nx\"}", NOT_JSON, ""),
	BAD("invalid UTF-8 byte", FOREIGN KVS("a", "\xff") CLOSE, NOT_JSON, ""),
	BAD("lone continuation byte", FOREIGN KVS("a", "\x80") CLOSE, NOT_JSON, ""),
	BAD("overlong UTF-8", FOREIGN KVS("a", "\xc0\xaf") CLOSE, NOT_JSON, ""),
	BAD("overlong 3-byte UTF-8", FOREIGN KVS("a", "\xe0\x80\xaf") CLOSE, NOT_JSON, ""),
	BAD("UTF-8 surrogate", FOREIGN KVS("a", "\xed\xa0\x80") CLOSE, NOT_JSON, ""),
	BAD("UTF-8 above U+10FFFF", FOREIGN KVS("a", "\xf4\x90\x80\x80") CLOSE, NOT_JSON, ""),
	BAD("truncated UTF-8", FOREIGN KVS("a", "\xe2\x82") CLOSE, NOT_JSON, ""),
	BAD("invalid UTF-8 in a name", FOREIGN KVS("\xfe", "x") CLOSE, NOT_JSON, ""),
	BAD("lone high surrogate escape", FOREIGN KVS("a", "\\ud800") CLOSE, NOT_JSON, ""),
	BAD("lone low surrogate escape", FOREIGN KVS("a", "\\udc00") CLOSE, NOT_JSON, ""),
	BAD("high surrogate then a letter", FOREIGN KVS("a", "\\ud800\\u0041") CLOSE, NOT_JSON, ""),
	BAD("high surrogate at the end", FOREIGN KVS("a", "\\ud83d") CLOSE, NOT_JSON, ""),
	BAD("short unicode escape", FOREIGN KVS("a", "\\u12") CLOSE, NOT_JSON, ""),
	BAD("non-hex unicode escape", FOREIGN KVS("a", "\\u12g4") CLOSE, NOT_JSON, ""),
	BAD("unknown escape", FOREIGN KVS("a", "\\x41") CLOSE, NOT_JSON, ""),
	BAD("escaped single quote", FOREIGN KVS("a", "\\'") CLOSE, NOT_JSON, ""),
	BAD("number with leading zero", FOREIGN KV("a", "01") CLOSE, NOT_JSON, ""),
	BAD("number with a bare point", FOREIGN KV("a", "1.") CLOSE, NOT_JSON, ""),
	BAD("number starting with a point", FOREIGN KV("a", ".5") CLOSE, NOT_JSON, ""),
	BAD("bare minus", FOREIGN KV("a", "-") CLOSE, NOT_JSON, ""),
	BAD("plus sign", FOREIGN KV("a", "+1") CLOSE, NOT_JSON, ""),
	BAD("empty exponent", FOREIGN KV("a", "1e") CLOSE, NOT_JSON, ""),
	BAD("signed empty exponent", FOREIGN KV("a", "1e+") CLOSE, NOT_JSON, ""),
	BAD("hex number", FOREIGN KV("a", "0x10") CLOSE, NOT_JSON, ""),
	BAD("NaN", FOREIGN KV("a", "NaN") CLOSE, NOT_JSON, ""),
	BAD("Infinity", FOREIGN KV("a", "-Infinity") CLOSE, NOT_JSON, ""),
	BAD("truncated true", FOREIGN KV("a", "tru") CLOSE, NOT_JSON, ""),
	BAD("capitalised null", FOREIGN KV("a", "Null") CLOSE, NOT_JSON, ""),
	BAD("byte order mark", "\xef\xbb\xbf" TYPING, NOT_JSON, ""),
	BAD("33 levels deep", FOREIGN KV("a",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[" "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]") CLOSE, NOT_JSON, ""),
	BAD("members without an opening brace", TYPING_M "}", NOT_JSON, ""),

	/* Valid JSON that the scanner must accept (in a foreign payload). */
	IGN("32 levels deep", FOREIGN KV("a",
		"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[" "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]") CLOSE),
	IGN("every JSON value type", FOREIGN KV("s", "\"\"") KV("n", "-0.5e-3")
		KV("i", "0") KV("e", "1E+2") KV("t", "true") KV("f", "false") KV("z", "null")
		KV("o", "{}") KV("a", "[]") KV("m", "{\"a\":[1,{\"b\":null}],\"c\":\"d\"}") CLOSE),
	IGN("every escape", FOREIGN KVS("a", "\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\u20AC") CLOSE),
	IGN("surrogate pair escape", FOREIGN KVS("a", "\\ud83d\\ude00") CLOSE),
	IGN("UTF-8 of every length", FOREIGN KVS("a", "\x7f\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"
		"\xf4\x8f\xbf\xbf\xed\x9f\xbf\xee\x80\x80") CLOSE),
	IGN("escaped NUL in a string", FOREIGN KVS("a", "\\u0000") CLOSE),
	IGN("duplicate names elsewhere", FOREIGN KV("a", "1") KV("a", "2") CLOSE),

	/* not_object */
	BAD("array", "[]", NOT_OBJECT, ""),
	BAD("array holding a signal", "[" TYPING "]", NOT_OBJECT, ""),
	BAD("string", "\"gateway.typing\"", NOT_OBJECT, ""),
	BAD("number", "1", NOT_OBJECT, ""),
	BAD("null", "null", NOT_OBJECT, ""),
	BAD("true", " true ", NOT_OBJECT, ""),

	/* The kind. */
	BAD("empty object", "{}", NO_KIND, "kind"),
	BAD("no kind among members", "{\"node\":\"" NODE "\"}", NO_KIND, "kind"),
	BAD("kind is case-sensitive", "{\"Kind\":\"gateway.typing\"}", NO_KIND, "kind"),
	BAD("kind only nested", "{\"x\":{\"kind\":\"gateway.typing\"}}", NO_KIND, "kind"),
	BAD("kind with a NUL in its name", "{\"kind\\u0000\":\"gateway.typing\"}", NO_KIND, "kind"),
	BAD("kind a number", "{\"kind\":1}", KIND_NOT_STRING, "kind"),
	BAD("kind null", "{\"kind\":null}", KIND_NOT_STRING, "kind"),
	BAD("kind true", "{\"kind\":true}", KIND_NOT_STRING, "kind"),
	BAD("kind an array", "{\"kind\":[\"gateway.typing\"]}", KIND_NOT_STRING, "kind"),
	BAD("kind an object", "{\"kind\":{\"a\":1}}", KIND_NOT_STRING, "kind"),
	BAD("duplicate kind", OPEN("gateway.typing") TYPING_M KVS("kind", "gateway.typing") CLOSE,
		DUPLICATE_MEMBER, "kind"),
	BAD("duplicate kind of a foreign producer", FOREIGN KVS("kind", "other.thing") CLOSE,
		DUPLICATE_MEMBER, "kind"),
	BAD("duplicate kind by escaped name", FOREIGN KVS("kin\\u0064", "x") CLOSE,
		DUPLICATE_MEMBER, "kind"),
	BAD("duplicate kind before its type", "{\"kind\":1,\"kind\":\"gateway.typing\"}",
		DUPLICATE_MEMBER, "kind"),

	/* Kinds of other producers. */
	IGN("foreign kind", FOREIGN CLOSE),
	IGN("foreign kind with nested garbage", FOREIGN KV("node", "5")
		KV("junk", "{\"a\":[1,2,{\"b\":null,\"kind\":\"gateway.typing\"}],\"c\":[[[]]]}")
		KV("x", "{\"x\":{\"x\":{}}}") KVS("thread", "NOT A UUID") KV("a", "null") CLOSE),
	IGN("foreign kind with our members", "{\"kind\":\"other\"" TYPING_M "}"),
	IGN("prefix without its dot", "{\"kind\":\"gateway\"}"),
	IGN("prefix without its dot, terminal", "{\"kind\":\"terminaltyping\"}"),
	IGN("prefix in upper case", "{\"kind\":\"Gateway.typing\"}"),
	IGN("empty kind", "{\"kind\":\"\"}"),
	IGN("prefix inside the kind", "{\"kind\":\"x.gateway.typing\"}"),
	IGN("long foreign kind", "{\"kind\":\"other.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}"),

	/* unknown_kind */
	BAD("unknown gateway kind", "{\"kind\":\"gateway.nope\"}", UNKNOWN_KIND, "gateway.nope"),
	BAD("unknown terminal kind", "{\"kind\":\"terminal.host_opened\"}", UNKNOWN_KIND,
		"terminal.host_opened"),
	BAD("bare gateway prefix", "{\"kind\":\"gateway.\"}", UNKNOWN_KIND, "gateway."),
	BAD("bare terminal prefix", "{\"kind\":\"terminal.\"}", UNKNOWN_KIND, "terminal."),
	BAD("unknown wal kind", "{\"kind\":\"wal.position\"}", UNKNOWN_KIND, "wal.position"),
	BAD("kind in wrong case", "{\"kind\":\"gateway.Typing\"}", UNKNOWN_KIND, "gateway.yping"),
	BAD("kind with a trailing space", "{\"kind\":\"gateway.typing \"}", UNKNOWN_KIND,
		"gateway.typing"),
	BAD("kind with an escaped NUL", "{\"kind\":\"terminal.host_close\\u0000\"}", UNKNOWN_KIND,
		"terminal.host_close"),
	BAD("kind of a prefix and a known kind", "{\"kind\":\"gateway.terminal.host_close\"}",
		UNKNOWN_KIND, "gateway.terminal.host_close"),
	BAD("long unknown kind", "{\"kind\":\"terminal.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}",
		UNKNOWN_KIND, "terminal.xxxxxxxxxxxxxxxxxxxxxxx"),
	BAD("kind checked before members", "{\"foo\":1,\"kind\":\"gateway.nope\"}", UNKNOWN_KIND,
		"gateway.nope"),

	/* unknown_member */
	BAD("unknown member", OPEN("gateway.typing") TYPING_M KV("foo", "1") CLOSE,
		UNKNOWN_MEMBER, "foo"),
	BAD("member of another kind", OPEN("gateway.typing") TYPING_M KV("version", "1") CLOSE,
		UNKNOWN_MEMBER, "version"),
	BAD("node on a terminal kind", OPEN("terminal.host_close") KVS("host_id", U1)
		KVS("node", NODE) CLOSE, UNKNOWN_MEMBER, "node"),
	BAD("member name in upper case", OPEN("gateway.typing") KVS("Node", NODE) CLOSE,
		UNKNOWN_MEMBER, "ode"),
	BAD("member name with a NUL escape", OPEN("gateway.typing") KVS("node\\u0000", NODE) CLOSE,
		UNKNOWN_MEMBER, "node"),
	BAD("member name with a newline", OPEN("gateway.typing") KVS("a\\nb", NODE) CLOSE,
		UNKNOWN_MEMBER, "ab"),
	BAD("member name not ASCII", OPEN("gateway.typing") KVS("\\u00e9", NODE) CLOSE,
		UNKNOWN_MEMBER, ""),
	BAD("member name longer than 64 bytes", OPEN("gateway.typing")
		KVS("nodeaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NODE) CLOSE,
		UNKNOWN_MEMBER, "nodeaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
	BAD("empty member name", OPEN("gateway.typing") KVS("", NODE) CLOSE, UNKNOWN_MEMBER, ""),
	BAD("optional member of another kind", OPEN("gateway.typing") TYPING_M KVS("actor", U1) CLOSE,
		UNKNOWN_MEMBER, "actor"),

	/* duplicate_member */
	BAD("duplicate node", OPEN("gateway.typing") TYPING_M KVS("node", NODE) CLOSE,
		DUPLICATE_MEMBER, "node"),
	BAD("duplicate by escaped name", OPEN("gateway.typing") TYPING_M KVS("thre\\u0061d", U1) CLOSE,
		DUPLICATE_MEMBER, "thread"),
	BAD("duplicate optional member", OPEN("gateway.hint") HINT_M HINT_TAIL KVS("target", U1)
		KVS("target", U1) CLOSE, DUPLICATE_MEMBER, "target"),
	BAD("duplicate with a bad second value", OPEN("gateway.typing") TYPING_M KV("node", "1") CLOSE,
		DUPLICATE_MEMBER, "node"),

	/* missing_member */
	BAD("missing principal", OPEN("gateway.typing") KVS("node", NODE) KVS("thread", U1) CLOSE,
		MISSING_MEMBER, "principal"),
	BAD("missing bind_id", OPEN("gateway.device") DEVICE_M CLOSE, MISSING_MEMBER, "bind_id"),
	BAD("missing version", OPEN("gateway.run") RUN_M CLOSE, MISSING_MEMBER, "version"),
	BAD("missing state", OPEN("gateway.agent_presence") PRESENCE_M
		KVS("billing_mode", "free") CLOSE, MISSING_MEMBER, "state"),
	BAD("missing count", OPEN("gateway.hint") HINT_M KVS("hint_kind", "run")
		KV("quiet", "true") CLOSE, MISSING_MEMBER, "count"),
	BAD("missing thread in gateway.run", OPEN("gateway.run") KVS("node", NODE)
		KVS("run", U3) KV("version", "1") CLOSE, MISSING_MEMBER, "thread"),
	BAD("missing host_id", "{\"kind\":\"terminal.host_close\"}", MISSING_MEMBER, "host_id"),
	BAD("missing conn_id", OPEN("terminal.host_gone") KVS("host_id", U1) CLOSE,
		MISSING_MEMBER, "conn_id"),
	BAD("first missing in table order", OPEN("gateway.typing") KVS("principal", U2) CLOSE,
		MISSING_MEMBER, "node"),
	BAD("missing session_id", OPEN("terminal.session_paired") KVS("host_id", U1) CLOSE,
		MISSING_MEMBER, "session_id"),
	BAD("missing gateway_session", OPEN("gateway.consumer") KVS("node", NODE)
		KVS("agent", U2) CLOSE, MISSING_MEMBER, "gateway_session"),

	/* not_uuid */
	BAD("ID in upper case", OPEN("gateway.typing") KVS("node", NODE)
		KVS("thread", "3F2B8C1E-4D5A-4E6F-9A7B-8C9D0E1F2A3B") CLOSE, NOT_UUID, "thread"),
	BAD("ID a number", OPEN("gateway.typing") KVS("node", NODE) KV("thread", "1") CLOSE,
		NOT_UUID, "thread"),
	BAD("ID null", OPEN("gateway.typing") KVS("node", NODE) KV("thread", "null") CLOSE,
		NOT_UUID, "thread"),
	BAD("ID true", OPEN("gateway.typing") KVS("node", NODE) KV("thread", "true") CLOSE,
		NOT_UUID, "thread"),
	BAD("ID an object", OPEN("gateway.typing") KVS("node", NODE)
		KV("thread", "{\"id\":\"" U1 "\"}") CLOSE, NOT_UUID, "thread"),
	BAD("ID an array", OPEN("gateway.typing") KVS("node", NODE) KV("thread", "[\"" U1 "\"]") CLOSE,
		NOT_UUID, "thread"),
	BAD("ID with an escape", OPEN("gateway.typing") KVS("node", NODE)
		KVS("thread", "\\u0033f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b") CLOSE, NOT_UUID, "thread"),
	BAD("ID without hyphens", OPEN("gateway.typing") KVS("node", NODE)
		KVS("thread", "3f2b8c1e4d5a4e6f9a7b8c9d0e1f2a3b") CLOSE, NOT_UUID, "thread"),
	BAD("ID in braces", OPEN("gateway.typing") KVS("node", NODE)
		KVS("thread", "{3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3b}") CLOSE, NOT_UUID, "thread"),
	BAD("ID one digit short", OPEN("gateway.typing") KVS("node", NODE)
		KVS("thread", "3f2b8c1e-4d5a-4e6f-9a7b-8c9d0e1f2a3") CLOSE, NOT_UUID, "thread"),
	BAD("ID with spaces", OPEN("gateway.typing") KVS("node", NODE)
		KVS("thread", " " U1) CLOSE, NOT_UUID, "thread"),
	BAD("empty ID", OPEN("gateway.typing") KVS("node", NODE) KVS("thread", "") CLOSE,
		NOT_UUID, "thread"),
	BAD("node not a UUID", OPEN("gateway.typing") KVS("node", "node-1") CLOSE, NOT_UUID, "node"),
	BAD("host_id null", OPEN("terminal.host_close") KV("host_id", "null") CLOSE,
		NOT_UUID, "host_id"),
	BAD("optional ID null", OPEN("gateway.hint") HINT_M HINT_TAIL KV("message", "null") CLOSE,
		NOT_UUID, "message"),
	BAD("conn_id not a UUID", OPEN("terminal.host_present") KVS("host_id", U1)
		KV("conn_id", "7") CLOSE, NOT_UUID, "conn_id"),

	/* not_uuidv7 */
	BAD("node version 4", OPEN("gateway.typing") KVS("node", V4) CLOSE, NOT_UUIDV7, "node"),
	BAD("node with the wrong variant", OPEN("gateway.typing") KVS("node", V7_BAD_VARIANT) CLOSE,
		NOT_UUIDV7, "node"),
	BAD("node nil", OPEN("gateway.consumer") KVS("node", U5) CLOSE, NOT_UUIDV7, "node"),
	BAD("bind_id version 4", OPEN("gateway.device") DEVICE_M KVS("bind_id", V4) CLOSE,
		NOT_UUIDV7, "bind_id"),
	BAD("conn_id version 4", OPEN("terminal.host_present") KVS("host_id", U1)
		KVS("conn_id", V4) CLOSE, NOT_UUIDV7, "conn_id"),
	BAD("conn_id with the wrong variant", OPEN("terminal.host_gone") KVS("host_id", U1)
		KVS("conn_id", V7_BAD_VARIANT) CLOSE, NOT_UUIDV7, "conn_id"),

	/* not_code and unknown_code */
	BAD("state a number", OPEN("gateway.agent_presence") PRESENCE_M KV("state", "1") CLOSE,
		NOT_CODE, "state"),
	BAD("state null", OPEN("gateway.agent_presence") PRESENCE_M KV("state", "null") CLOSE,
		NOT_CODE, "state"),
	BAD("state with an escape", OPEN("gateway.agent_presence") PRESENCE_M
		KVS("state", "onl\\u0069ne") CLOSE, NOT_CODE, "state"),
	BAD("billing_mode true", OPEN("gateway.agent_presence") PRESENCE_M KVS("state", "busy")
		KV("billing_mode", "true") CLOSE, NOT_CODE, "billing_mode"),
	BAD("hint_kind an array", OPEN("gateway.hint") HINT_M KV("hint_kind", "[\"mention\"]") CLOSE,
		NOT_CODE, "hint_kind"),
	BAD("hint_kind an object", OPEN("gateway.hint") HINT_M KV("hint_kind", "{}") CLOSE,
		NOT_CODE, "hint_kind"),
	BAD("state in upper case", OPEN("gateway.agent_presence") PRESENCE_M
		KVS("state", "Online") CLOSE, UNKNOWN_CODE, "state"),
	BAD("state unknown", OPEN("gateway.agent_presence") PRESENCE_M KVS("state", "away") CLOSE,
		UNKNOWN_CODE, "state"),
	BAD("state empty", OPEN("gateway.agent_presence") PRESENCE_M KVS("state", "") CLOSE,
		UNKNOWN_CODE, "state"),
	BAD("state with a suffix", OPEN("gateway.agent_presence") PRESENCE_M
		KVS("state", "online ") CLOSE, UNKNOWN_CODE, "state"),
	BAD("billing_mode unknown", OPEN("gateway.agent_presence") PRESENCE_M KVS("state", "busy")
		KVS("billing_mode", "paid") CLOSE, UNKNOWN_CODE, "billing_mode"),
	BAD("hint_kind unknown", OPEN("gateway.hint") HINT_M KVS("hint_kind", "mentions") CLOSE,
		UNKNOWN_CODE, "hint_kind"),
	BAD("hint_kind prefix", OPEN("gateway.hint") HINT_M KVS("hint_kind", "men") CLOSE,
		UNKNOWN_CODE, "hint_kind"),

	/* not_integer and out_of_range */
	BAD("version a string", OPEN("gateway.run") RUN_M KVS("version", "1") CLOSE,
		NOT_INTEGER, "version"),
	BAD("version with a zero fraction", OPEN("gateway.run") RUN_M KV("version", "1.0") CLOSE,
		NOT_INTEGER, "version"),
	BAD("version with an exponent", OPEN("gateway.run") RUN_M KV("version", "1e3") CLOSE,
		NOT_INTEGER, "version"),
	BAD("version with an upper-case exponent", OPEN("gateway.run") RUN_M KV("version", "1E3") CLOSE,
		NOT_INTEGER, "version"),
	BAD("version null", OPEN("gateway.run") RUN_M KV("version", "null") CLOSE,
		NOT_INTEGER, "version"),
	BAD("version true", OPEN("gateway.run") RUN_M KV("version", "true") CLOSE,
		NOT_INTEGER, "version"),
	BAD("version an array", OPEN("gateway.run") RUN_M KV("version", "[1]") CLOSE,
		NOT_INTEGER, "version"),
	BAD("count a fraction", OPEN("gateway.hint") HINT_M KVS("hint_kind", "run")
		KV("quiet", "true") KV("count", "0.5") CLOSE, NOT_INTEGER, "count"),
	BAD("negative fraction is not an integer first", OPEN("gateway.hint") HINT_M
		KVS("hint_kind", "run") KV("quiet", "true") KV("count", "-1.5") CLOSE, NOT_INTEGER, "count"),
	BAD("count an object", OPEN("gateway.hint") HINT_M KVS("hint_kind", "run")
		KV("quiet", "true") KV("count", "{\"n\":1}") CLOSE, NOT_INTEGER, "count"),
	BAD("version negative", OPEN("gateway.run") RUN_M KV("version", "-1") CLOSE,
		OUT_OF_RANGE, "version"),
	BAD("reach naming 129 nodes", OPEN("gateway.run") RUN_M KV("version", "1")
		KVS("reach", REACH128 R_A) CLOSE, NOT_UUID, "reach"),
	BAD("reach with a node cut short", OPEN("gateway.typing") TYPING_M
		KVS("reach", R_A "01890a5d") CLOSE, NOT_UUID, "reach"),
	BAD("reach with dashes", OPEN("gateway.typing") TYPING_M KVS("reach", NODE) CLOSE,
		NOT_UUID, "reach"),
	BAD("reach in upper case", OPEN("gateway.typing") TYPING_M
		KVS("reach", "01890A5DAC96774BBCCEB302099A8057") CLOSE, NOT_UUID, "reach"),
	BAD("reach a number", OPEN("gateway.typing") TYPING_M KV("reach", "1") CLOSE,
		NOT_UUID, "reach"),
	BAD("reach in a kind without it", OPEN("gateway.consumer") KVS("node", NODE)
		KVS("agent", U1) KVS("gateway_session", U2) KVS("reach", R_A) CLOSE, UNKNOWN_MEMBER, "reach"),
	BAD("version minus zero", OPEN("gateway.run") RUN_M KV("version", "-0") CLOSE,
		OUT_OF_RANGE, "version"),
	BAD("version 2^53", OPEN("gateway.run") RUN_M KV("version", "9007199254740992") CLOSE,
		OUT_OF_RANGE, "version"),
	BAD("event 2^53", OPEN("gateway.agent_event") KVS("node", NODE) KVS("agent", U2)
		KV("event", "9007199254740992") CLOSE, OUT_OF_RANGE, "event"),
	BAD("event negative", OPEN("gateway.agent_event") KVS("node", NODE) KVS("agent", U2)
		KV("event", "-1") CLOSE, OUT_OF_RANGE, "event"),
	BAD("event a string", OPEN("gateway.agent_event") KVS("node", NODE) KVS("agent", U2)
		KVS("event", "17") CLOSE, NOT_INTEGER, "event"),
	BAD("event missing", OPEN("gateway.agent_event") KVS("node", NODE) KVS("agent", U2) CLOSE,
		MISSING_MEMBER, "event"),
	BAD("version past 2^64", OPEN("gateway.run") RUN_M
		KV("version", "99999999999999999999999999") CLOSE, OUT_OF_RANGE, "version"),
	BAD("count 2^31", OPEN("gateway.hint") HINT_M KVS("hint_kind", "run")
		KV("quiet", "true") KV("count", "2147483648") CLOSE, OUT_OF_RANGE, "count"),
	BAD("count negative", OPEN("gateway.hint") HINT_M KVS("hint_kind", "run")
		KV("quiet", "true") KV("count", "-1") CLOSE, OUT_OF_RANGE, "count"),
	BAD("seq 2^53", OPEN("terminal.log") KV("seq", "9007199254740992") CLOSE,
		OUT_OF_RANGE, "seq"),
	BAD("seq negative", OPEN("terminal.log") KV("seq", "-1") CLOSE, OUT_OF_RANGE, "seq"),
	BAD("seq a string", OPEN("terminal.log") KVS("seq", "42") CLOSE, NOT_INTEGER, "seq"),
	BAD("seq with a zero fraction", OPEN("terminal.log") KV("seq", "42.0") CLOSE,
		NOT_INTEGER, "seq"),
	BAD("seq null", OPEN("terminal.log") KV("seq", "null") CLOSE, NOT_INTEGER, "seq"),
	BAD("seq missing", "{\"kind\":\"terminal.log\"}", MISSING_MEMBER, "seq"),
	BAD("duplicate seq", OPEN("terminal.log") KV("seq", "1") KV("seq", "2") CLOSE,
		DUPLICATE_MEMBER, "seq"),
	BAD("node on terminal.log", OPEN("terminal.log") KV("seq", "1") KVS("node", NODE) CLOSE,
		UNKNOWN_MEMBER, "node"),
	BAD("seq on another kind", OPEN("terminal.host_close") KVS("host_id", U1) KV("seq", "1") CLOSE,
		UNKNOWN_MEMBER, "seq"),
	BAD("lsn 2^63", OPEN("wal.fence") KV("lsn", "9223372036854775808") CLOSE, OUT_OF_RANGE, "lsn"),
	BAD("lsn negative", OPEN("wal.fence") KV("lsn", "-1") CLOSE, OUT_OF_RANGE, "lsn"),
	BAD("lsn as text", OPEN("wal.fence") KVS("lsn", "0/1B67A60") CLOSE, NOT_INTEGER, "lsn"),
	BAD("lsn with an exponent", OPEN("wal.fence") KV("lsn", "1e9") CLOSE, NOT_INTEGER, "lsn"),
	BAD("lsn missing", "{\"kind\":\"wal.fence\"}", MISSING_MEMBER, "lsn"),
	BAD("node on wal.fence", OPEN("wal.fence") KV("lsn", "1") KVS("node", NODE) CLOSE,
		UNKNOWN_MEMBER, "node"),
	BAD("lsn on another kind", OPEN("terminal.log") KV("seq", "1") KV("lsn", "1") CLOSE,
		UNKNOWN_MEMBER, "lsn"),

	/* not_boolean */
	BAD("quiet a string", OPEN("gateway.hint") HINT_M KVS("hint_kind", "run")
		KVS("quiet", "true") CLOSE, NOT_BOOLEAN, "quiet"),
	BAD("quiet a number", OPEN("gateway.hint") HINT_M KVS("hint_kind", "run")
		KV("quiet", "1") CLOSE, NOT_BOOLEAN, "quiet"),
	BAD("quiet null", OPEN("gateway.hint") HINT_M KVS("hint_kind", "run")
		KV("quiet", "null") CLOSE, NOT_BOOLEAN, "quiet"),
	BAD("quiet an array", OPEN("gateway.hint") HINT_M KVS("hint_kind", "run")
		KV("quiet", "[true]") CLOSE, NOT_BOOLEAN, "quiet"),

	/* Precedence. */
	BAD("not_json before the kind", "{\"kind\":\"gateway.nope\",\"x\":[}", NOT_JSON, ""),
	BAD("not_json before a foreign kind", FOREIGN KV("x", "01") CLOSE, NOT_JSON, ""),
	BAD("not_json before members", OPEN("gateway.typing") KV("foo", "1") ",}", NOT_JSON, ""),
	BAD("kind before members", "{\"node\":1,\"kind\":\"gateway.typing\",\"kind\":\"x\"}",
		DUPLICATE_MEMBER, "kind"),
	/* The kind first (one pass over the members): a later kind still comes first. */
	BAD("kind first, unknown member, kind again", OPEN("gateway.typing") KV("foo", "1")
		KVS("kind", "gateway.typing") CLOSE, DUPLICATE_MEMBER, "kind"),
	BAD("kind first, bad form, kind again", OPEN("gateway.typing") KV("thread", "1")
		KVS("node", NODE) KV("kind", "2") CLOSE, DUPLICATE_MEMBER, "kind"),
	BAD("kind first, duplicate member, kind again", OPEN("gateway.typing") KVS("node", NODE)
		KVS("node", NODE) KVS("kin\\u0064", "x") CLOSE, DUPLICATE_MEMBER, "kind"),
	BAD("kind first, missing member, kind again", OPEN("gateway.typing") KVS("node", NODE)
		KVS("kind", "gateway.typing") CLOSE, DUPLICATE_MEMBER, "kind"),
	BAD("kind first, fault, no second kind", OPEN("gateway.typing") KVS("node", NODE)
		KV("thread", "1") KV("zzz", "[1]") CLOSE, NOT_UUID, "thread"),
	BAD("unknown kind first, kind again", OPEN("gateway.nope") KVS("kind", "gateway.typing") CLOSE,
		DUPLICATE_MEMBER, "kind"),
	BAD("unknown kind first, alone", OPEN("gateway.nope") TYPING_M CLOSE, UNKNOWN_KIND, "gateway.nope"),
	BAD("first fault in payload order: form", OPEN("gateway.typing") KV("thread", "1")
		KV("foo", "1") CLOSE, NOT_UUID, "thread"),
	BAD("first fault in payload order: unknown", OPEN("gateway.typing") KV("foo", "1")
		KV("thread", "1") CLOSE, UNKNOWN_MEMBER, "foo"),
	BAD("first fault in payload order: duplicate", OPEN("gateway.typing") KVS("node", NODE)
		KVS("node", NODE) KV("foo", "1") CLOSE, DUPLICATE_MEMBER, "node"),
	BAD("members before missing ones", OPEN("gateway.typing") KV("thread", "1") CLOSE,
		NOT_UUID, "thread"),
	BAD("v7 check after the UUID form", OPEN("gateway.device") DEVICE_M KVS("bind_id", "x") CLOSE,
		NOT_UUID, "bind_id"),
};

#endif							/* BOTHY_SIGNAL_CASES_H */
