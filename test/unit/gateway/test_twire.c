/*
 * test_twire.c
 *		Unit tests of src/gateway/terminal/wire.c and hostsig.c: the strict
 *		parser of what a host service sends on its control connection
 *		(every op, every way a message is refused, the forms of signatures,
 *		keys, pairing codes, versions and report lists), the encoders read
 *		back with jansson, and the host's Ed25519 signatures over their
 *		pinned context lines, signed here with libsodium.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sodium.h>

#include "base64url.h"
#include "terminal/hostsig.h"
#include "terminal/control/wire.h"
#include "unit.h"
#include "unit_json.h"

#define U7 "0190a4a8-2c3e-7d41-8f5a-3b9c2d1e0f4a"
#define U4 "f47ac10b-58cc-4372-a567-0e02b2c3d479"
#define SIG86 "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
#define KEY43 "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

static char text[4096];

static gw_parse_status
parse(const char *msg, gw_tmsg *m)
{
	char	   *copy = unit_exact_copy(msg, strlen(msg));
	gw_parse_status	status = gw_tmsg_parse(copy, strlen(msg), m);

	free(copy);
	return status;
}

static void
test_accepted(void)
{
	gw_tmsg		m;
	bothy_uuid	u7 = unit_uuid(U7),
				u4 = unit_uuid(U4);

	UNIT_OK(parse("{\"op\":\"hello\",\"host\":\"" U7 "\",\"sig\":\"" SIG86 "\",\"version\":\"bothy-host/1.0 (linux)\"}", &m) == GW_PARSE_OK &&
			m.op == GW_TOP_HELLO && bothy_uuid_compare(&m.host, &u7) == 0,
			"hello: host, a 64-byte signature and a version");
	UNIT_OK(parse("{\"sig\":\"" SIG86 "\",\"code\":\"0123456789abcdef\",\"public_key\":\"" KEY43 "\",\"host\":\"" U4 "\",\"op\":\"pair\"}", &m) == GW_PARSE_OK &&
			m.op == GW_TOP_PAIR && strcmp(m.code, "0123456789abcdef") == 0 &&
			bothy_uuid_compare(&m.host, &u4) == 0, "pair: members in any order, the code kept");
	UNIT_OK(parse("{\"op\":\"report\",\"sessions\":[]}", &m) == GW_PARSE_OK && m.op == GW_TOP_REPORT &&
			m.nsessions == 0, "report: no sessions");
	snprintf(text, sizeof(text), "{\"op\":\"report\",\"sessions\":[");
	for (int i = 0; i < GW_TREPORT_MAX; i++)
		strcat(text, i == 0 ? "\"" U7 "\"" : ",\"" U7 "\"");
	strcat(text, "]}");
	UNIT_OK(parse(text, &m) == GW_PARSE_OK && m.nsessions == GW_TREPORT_MAX &&
			bothy_uuid_compare(&m.sessions[GW_TREPORT_MAX - 1], &u7) == 0, "report: 32 sessions");
	UNIT_OK(parse("{\"op\":\"heartbeat\"}", &m) == GW_PARSE_OK && m.op == GW_TOP_HEARTBEAT, "heartbeat");
	UNIT_OK(parse("{\"op\":\"session.started\",\"session\":\"" U7 "\",\"grant\":\"" U4 "\"}", &m) == GW_PARSE_OK &&
			m.op == GW_TOP_SESSION_STARTED && bothy_uuid_compare(&m.grant, &u4) == 0, "session.started");
	UNIT_OK(parse("{\"op\":\"probe_ack\",\"sig\":\"" SIG86 "\"}", &m) == GW_PARSE_OK && m.op == GW_TOP_PROBE_ACK,
			"probe_ack");
	UNIT_OK(parse("{\"op\":\"hello\",\"host\":\"" U7 "\",\"sig\":\"" SIG86 "\",\"version\":\"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\"}", &m) == GW_PARSE_OK,
			"hello: a version of 64 characters");
}

static void
test_refused(void)
{
	static const struct
	{
		const char *msg;
		gw_parse_status	want;
	}			cases[] = {
		{"", GW_PARSE_NOT_JSON},
		{"{\"op\":\"heartbeat\"", GW_PARSE_NOT_JSON},
		{"{\"op\":\"heartbeat\",\"op\":\"heartbeat\"}", GW_PARSE_NOT_JSON},
		{"[]", GW_PARSE_NOT_OBJECT},
		{"\"heartbeat\"", GW_PARSE_NOT_JSON},	/* jansson: only an object or an array at the top */
		{"{}", GW_PARSE_NO_OP},
		{"{\"op\":1}", GW_PARSE_NO_OP},
		{"{\"op\":\"Heartbeat\"}", GW_PARSE_UNKNOWN_OP},
		{"{\"op\":\"challenge\",\"nonce\":\"x\"}", GW_PARSE_UNKNOWN_OP},
		{"{\"op\":\"heartbeat\\u0000\"}", GW_PARSE_NOT_JSON},
		{"{\"op\":\"heartbeat\",\"x\":1}", GW_PARSE_UNKNOWN_FIELD},
		{"{\"op\":\"hello\",\"host\":\"" U7 "\",\"sig\":\"" SIG86 "\",\"version\":\"v\",\"state\":\"x\"}", GW_PARSE_UNKNOWN_FIELD},
		{"{\"op\":\"hello\",\"host\":\"" U7 "\",\"sig\":\"" SIG86 "\"}", GW_PARSE_MISSING_FIELD},
		{"{\"op\":\"pair\",\"host\":\"" U7 "\",\"code\":\"0123456789abcdef\",\"sig\":\"" SIG86 "\"}", GW_PARSE_MISSING_FIELD},
		{"{\"op\":\"report\"}", GW_PARSE_MISSING_FIELD},
		{"{\"op\":\"session.started\",\"session\":\"" U7 "\"}", GW_PARSE_MISSING_FIELD},
		{"{\"op\":\"hello\",\"host\":\"0190A4A8-2C3E-7D41-8F5A-3B9C2D1E0F4A\",\"sig\":\"" SIG86 "\",\"version\":\"v\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"hello\",\"host\":\"" U7 "\",\"sig\":\"" SIG86 "A\",\"version\":\"v\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"hello\",\"host\":\"" U7 "\",\"sig\":\"" SIG86 "==\",\"version\":\"v\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"hello\",\"host\":\"" U7 "\",\"sig\":\"+" SIG86 "\",\"version\":\"v\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"hello\",\"host\":\"" U7 "\",\"sig\":\"" SIG86 "\",\"version\":\"\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"hello\",\"host\":\"" U7 "\",\"sig\":\"" SIG86 "\",\"version\":\"a\\nb\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"hello\",\"host\":\"" U7 "\",\"sig\":\"" SIG86 "\",\"version\":\"\\u00e9\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"hello\",\"host\":\"" U7 "\",\"sig\":\"" SIG86 "\",\"version\":\"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"hello\",\"host\":\"" U7 "\",\"sig\":\"" SIG86 "\",\"version\":1}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"pair\",\"host\":\"" U7 "\",\"code\":\"0123456789abcdei\",\"public_key\":\"" KEY43 "\",\"sig\":\"" SIG86 "\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"pair\",\"host\":\"" U7 "\",\"code\":\"0123456789ABCDEF\",\"public_key\":\"" KEY43 "\",\"sig\":\"" SIG86 "\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"pair\",\"host\":\"" U7 "\",\"code\":\"0123456789abcde\",\"public_key\":\"" KEY43 "\",\"sig\":\"" SIG86 "\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"pair\",\"host\":\"" U7 "\",\"code\":\"0123456789abcdef\",\"public_key\":\"" KEY43 "A\",\"sig\":\"" SIG86 "\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"pair\",\"host\":\"" U7 "\",\"code\":\"0123456789abcdef\",\"public_key\":\"" SIG86 "\",\"sig\":\"" SIG86 "\"}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"report\",\"sessions\":{}}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"report\",\"sessions\":[\"x\"]}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"report\",\"sessions\":[null]}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"session.started\",\"session\":\"" U7 "\",\"grant\":null}", GW_PARSE_BAD_FIELD},
		{"{\"op\":\"probe_ack\",\"sig\":\"\"}", GW_PARSE_BAD_FIELD},
	};
	gw_tmsg		m;
	bool		pass = true;
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		gw_parse_status	got = parse(cases[i].msg, &m);

		if (got != cases[i].want)
			printf("#   got %s\n", gw_parse_status_code(got));
		pass = unit_case(got == cases[i].want, cases[i].msg) && pass;
	}
	UNIT_OK(pass, "every malformed message is refused with its reason");
	snprintf(text, sizeof(text), "{\"op\":\"report\",\"sessions\":[");
	for (int j = 0; j <= GW_TREPORT_MAX; j++)
		strcat(text, j == 0 ? "\"" U7 "\"" : ",\"" U7 "\"");
	strcat(text, "]}");
	UNIT_OK(parse(text, &m) == GW_PARSE_BAD_FIELD, "report: 33 sessions refused");
	UNIT_OK(strcmp(gw_parse_status_code(GW_PARSE_BAD_FIELD), "bad_field") == 0 &&
			strcmp(gw_parse_status_code((gw_parse_status) 99), "unknown") == 0, "reason codes");
}

/* out as a JSON object whose members are exactly want (NULL-terminated, name then value). */
static bool
is_object(const char *out, int n, const char *const *want)
{
	json_t	   *o = n > 0 ? unit_load_object(out, n) : NULL;
	size_t		count = 0;
	bool		ok = o != NULL;

	for (; ok && want[0] != NULL; want += 2, count++)
	{
		json_t	   *v = json_object_get(o, want[0]);

		ok = v != NULL && (json_is_string(v) ? strcmp(json_string_value(v), want[1]) == 0 :
						   json_is_integer(v) && json_integer_value(v) == atoll(want[1]));
	}
	ok = ok && json_object_size(o) == count;
	json_decref(o);
	return ok;
}

static void
test_encoders(void)
{
	uint8_t		nonce[GW_TNONCE_BYTES];
	char		out[512],
				ntext[GW_TNONCE_TEXT + 1];
	bothy_uuid	u7 = unit_uuid(U7),
				u4 = unit_uuid(U4);
	int			n;

	memset(nonce, 0xfb, sizeof(nonce));
	gw_tnonce_text(nonce, ntext);
	UNIT_OK(strlen(ntext) == GW_TNONCE_TEXT && strchr(ntext, '_') != NULL && strchr(ntext, '=') == NULL,
			"a nonce's text: 43 characters of base64url, no padding");
	n = gw_tenc_challenge(out, sizeof(out), nonce);
	UNIT_OK(is_object(out, n, (const char *const[]) {"op", "challenge", "nonce", ntext, NULL}), "challenge");
	n = gw_tenc_probe(out, sizeof(out), nonce);
	UNIT_OK(is_object(out, n, (const char *const[]) {"op", "probe", "nonce", ntext, NULL}), "probe");
	n = gw_tenc_ready(out, sizeof(out), &u7, GW_THOST_CONFIRMING, 15000);
	UNIT_OK(is_object(out, n, (const char *const[]) {"op", "ready", "conn", U7, "state", "confirming",
										  "heartbeat_ms", "15000", NULL}), "ready");
	UNIT_OK(gw_tenc_ready(out, sizeof(out), &u7, (gw_thost) 0, 1) == -1, "ready: no state outside the set");
	n = gw_tenc_heartbeat_ack(out, sizeof(out));
	UNIT_OK(is_object(out, n, (const char *const[]) {"op", "heartbeat_ack", NULL}), "heartbeat_ack");
	n = gw_tenc_session_open(out, sizeof(out), &u7, &u4, &u7);
	UNIT_OK(is_object(out, n, (const char *const[]) {"op", "session.open", "session", U7, "grant", U4,
										  "device", U7, NULL}), "session.open");
	n = gw_tenc_session_close(out, sizeof(out), &u4);
	UNIT_OK(is_object(out, n, (const char *const[]) {"op", "session.close", "session", U4, NULL}),
			"session.close");
	UNIT_OK(gw_tenc_session_open(out, 100, &u7, &u4, &u7) == -1, "an encoder refuses a short buffer");
}

/* RFC 8032 test 1's secret key (the seed). */
static const uint8_t seed[32] = {
	0x9d, 0x61, 0xb1, 0x9d, 0xef, 0xfd, 0x5a, 0x60, 0xba, 0x84, 0x4a, 0xf4, 0x92, 0xec, 0x2c, 0xc4,
	0x44, 0x49, 0xc5, 0x69, 0x7b, 0x32, 0x69, 0x19, 0x70, 0x3b, 0xac, 0x03, 0x1c, 0xae, 0x7f, 0x60
};

static void
sign(const uint8_t sk[64], const char *msg, uint8_t sig[64])
{
	crypto_sign_detached(sig, NULL, (const unsigned char *) msg, strlen(msg), sk);
}

static void
test_signatures(void)
{
	uint8_t		pk[32],
				sk[64],
				sig[64],
				nonce[GW_TNONCE_BYTES];
	char		ntext[GW_TNONCE_TEXT + 1],
				msg[256];
	bothy_uuid	host = unit_uuid(U7),
				other = unit_uuid(U4);

	if (sodium_init() < 0 || crypto_sign_seed_keypair(pk, sk, seed) != 0)
		exit(2);
	randombytes_buf(nonce, sizeof(nonce));
	gw_tnonce_text(nonce, ntext);

	snprintf(msg, sizeof(msg), "bothy-host-hello-v1\n%s\n%s", U7, ntext);
	sign(sk, msg, sig);
	UNIT_OK(gw_hsig_verify_nonce(GW_HSIG_HELLO, pk, &host, nonce, sig),
			"hello: the context, the host and the nonce's text, joined by newlines");
	UNIT_OK(!gw_hsig_verify_nonce(GW_HSIG_PAIR, pk, &host, nonce, sig) &&
			!gw_hsig_verify_nonce(GW_HSIG_PROBE, pk, &host, nonce, sig),
			"a hello signature is no pair or probe signature");
	UNIT_OK(!gw_hsig_verify_nonce(GW_HSIG_HELLO, pk, &other, nonce, sig), "another host refused");
	sig[10] ^= 1;
	UNIT_OK(!gw_hsig_verify_nonce(GW_HSIG_HELLO, pk, &host, nonce, sig), "a flipped bit refused");

	snprintf(msg, sizeof(msg), "bothy-host-hello-v1\n%s\n%s\n", U7, ntext);
	sign(sk, msg, sig);
	UNIT_OK(!gw_hsig_verify_nonce(GW_HSIG_HELLO, pk, &host, nonce, sig), "a trailing newline refused");

	snprintf(msg, sizeof(msg), "bothy-host-pair-v1\n%s\n%s", U7, ntext);
	sign(sk, msg, sig);
	UNIT_OK(gw_hsig_verify_nonce(GW_HSIG_PAIR, pk, &host, nonce, sig), "pair");
	snprintf(msg, sizeof(msg), "bothy-host-probe-v1\n%s\n%s", U7, ntext);
	sign(sk, msg, sig);
	UNIT_OK(gw_hsig_verify_nonce(GW_HSIG_PROBE, pk, &host, nonce, sig), "probe_ack");
	snprintf(msg, sizeof(msg), "bothy-host-data-v1\n%s\n%s", U7, U4);
	sign(sk, msg, sig);
	UNIT_OK(gw_hsig_verify_data(pk, &host, &other, sig) && !gw_hsig_verify_data(pk, &other, &host, sig),
			"identify: the session, then the grant");
	UNIT_OK(!gw_hsig_verify(GW_HSIG_DATA + 1, pk, &host, U4, sig), "no context outside the set");
}

int
main(void)
{
	unit_diag("the control connection's messages and the host's signatures");
	test_accepted();
	test_refused();
	test_encoders();
	test_signatures();
	return unit_done();
}
