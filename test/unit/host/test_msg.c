/*
 * test_msg.c
 *		Unit tests of src/host/msg.c: every op the server sends parsed, the
 *		strict parser's refusals (members, types, forms, duplicates, size),
 *		unknown ops told apart, and the host's messages byte for byte.
 */
#include <stdio.h>
#include <string.h>

#include "host/msg.h"
#include "unit.h"

#define U1 "01890a5d-ac96-774b-bcce-b302099a8057"
#define U2 "01890a5d-ac96-7aaa-8bbb-000000000002"
#define U3 "01890a5d-ac96-7ccc-9ddd-000000000003"
#define NONCE "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

static host_msg_result
parse(const char *text, host_msg *m)
{
	char	   *copy = unit_exact_copy(text, strlen(text));
	host_msg_result r = host_msg_parse(copy, strlen(text), m);

	free(copy);
	return r;
}

static bool
malformed(const char *text)
{
	host_msg	m;

	return unit_case(parse(text, &m) == HOST_MSG_MALFORMED, text);
}

int
main(void)
{
	host_msg	m;
	bothy_uuid	u1;
	bothy_uuid	u2;
	bothy_uuid	u3;
	bothy_uuid	list[2];
	char		out[HOST_MSG_MAX];
	char		big[HOST_MSG_MAX + 64];
	bool		ok;

	unit_diag("the JSON ops (src/host/msg.c)");

	bothy_uuid_parse(U1, 36, &u1);
	bothy_uuid_parse(U2, 36, &u2);
	bothy_uuid_parse(U3, 36, &u3);

	/* every op */
	UNIT_OK(parse("{\"op\":\"challenge\",\"nonce\":\"" NONCE "\"}", &m) == HOST_MSG_OK &&
			m.op == HOST_OP_CHALLENGE && strcmp(m.nonce, NONCE) == 0, "challenge");
	UNIT_OK(parse("{\"op\":\"ready\",\"conn\":\"" U1 "\",\"state\":\"active\",\"heartbeat_ms\":15000}",
				  &m) == HOST_MSG_OK && m.op == HOST_OP_READY &&
			bothy_uuid_compare(&m.conn, &u1) == 0 && m.state == HOST_STATE_ACTIVE &&
			m.heartbeat_ms == 15000, "ready");
	UNIT_OK(parse(" {\"state\":\"confirming\", \"heartbeat_ms\":1000,\"conn\":\"" U1 "\","
				  "\"op\":\"ready\"}\n", &m) == HOST_MSG_OK && m.state == HOST_STATE_CONFIRMING &&
			m.heartbeat_ms == 1000, "ready in any member order and with whitespace");
	UNIT_OK(parse("{\"op\":\"heartbeat_ack\"}", &m) == HOST_MSG_OK &&
			m.op == HOST_OP_HEARTBEAT_ACK, "heartbeat_ack");
	UNIT_OK(parse("{\"op\":\"session.open\",\"session\":\"" U1 "\",\"grant\":\"" U2
				  "\",\"device\":\"" U3 "\"}", &m) == HOST_MSG_OK &&
			m.op == HOST_OP_SESSION_OPEN && bothy_uuid_compare(&m.session, &u1) == 0 &&
			bothy_uuid_compare(&m.grant, &u2) == 0 && bothy_uuid_compare(&m.device, &u3) == 0,
			"session.open");
	UNIT_OK(parse("{\"op\":\"session.close\",\"session\":\"" U1 "\"}", &m) == HOST_MSG_OK &&
			m.op == HOST_OP_SESSION_CLOSE && bothy_uuid_compare(&m.session, &u1) == 0,
			"session.close");
	UNIT_OK(parse("{\"op\":\"probe\",\"nonce\":\"" NONCE "\"}", &m) == HOST_MSG_OK &&
			m.op == HOST_OP_PROBE && strcmp(m.nonce, NONCE) == 0, "probe");
	UNIT_OK(parse("{\"op\":\"waiting\"}", &m) == HOST_MSG_OK && m.op == HOST_OP_WAITING,
			"waiting");
	UNIT_OK(parse("{\"op\":\"paired\"}", &m) == HOST_MSG_OK && m.op == HOST_OP_PAIRED, "paired");

	/* unknown ops */
	UNIT_OK(parse("{\"op\":\"session.resize\",\"session\":\"" U1 "\"}", &m) == HOST_MSG_UNKNOWN_OP,
			"an op the host does not know is told apart");
	UNIT_OK(parse("{\"op\":\"Ready\"}", &m) == HOST_MSG_UNKNOWN_OP &&
			parse("{\"op\":\"hello\"}", &m) == HOST_MSG_UNKNOWN_OP,
			"ops are case-sensitive, and the host's own ops are not the server's");

	/* refusals */
	ok = malformed("") && malformed("{") && malformed("[]") && malformed("\"op\"") &&
		malformed("null") && malformed("{}") && malformed("{\"op\":1}") &&
		malformed("{\"op\":null}") && malformed("{\"op\":\"paired\"} {}") &&
		malformed("{\"op\":\"paired\"}x");
	UNIT_OK(ok, "not one object with a string op");
	ok = malformed("{\"op\":\"heartbeat_ack\",\"op\":\"heartbeat_ack\"}") &&
		malformed("{\"op\":\"paired\",\"x\":1,\"x\":2}") &&
		malformed("{\"op\":\"session.close\"}") &&
		malformed("{\"op\":\"session.open\",\"session\":\"" U1 "\",\"grant\":\"" U2 "\"}");
	UNIT_OK(ok, "a member less, or a duplicate member");
	UNIT_OK(parse("{\"op\":\"paired\",\"extra\":1}", &m) == HOST_MSG_OK && m.op == HOST_OP_PAIRED &&
			parse("{\"op\":\"session.close\",\"session\":\"" U1 "\",\"why\":{\"a\":[1]}}", &m) ==
			HOST_MSG_OK && m.op == HOST_OP_SESSION_CLOSE && bothy_uuid_compare(&m.session, &u1) == 0,
			"a member the host does not know is the node's to add: ignored (protocol.md)");
	ok = malformed("{\"op\":\"session.close\",\"session\":\"01890A5D-AC96-774B-BCCE-B302099A8057\"}") &&
		malformed("{\"op\":\"session.close\",\"session\":\"{" U1 "}\"}") &&
		malformed("{\"op\":\"session.close\",\"session\":\"01890a5dac96774bbcceb302099a8057\"}") &&
		malformed("{\"op\":\"session.close\",\"session\":null}") &&
		malformed("{\"op\":\"session.close\",\"session\":\"" U1 "\\u0000\"}");
	UNIT_OK(ok, "a UUID only in canonical lower case, as a string, without a NUL");
	ok = malformed("{\"op\":\"challenge\",\"nonce\":\"" NONCE "=\"}") &&
		malformed("{\"op\":\"challenge\",\"nonce\":\"AAAA\"}") &&
		malformed("{\"op\":\"probe\",\"nonce\":\"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+\"}") &&
		malformed("{\"op\":\"probe\",\"nonce\":32}");
	UNIT_OK(ok, "a nonce only canonical, 16 to 128 bytes");
	ok = malformed("{\"op\":\"ready\",\"conn\":\"" U1 "\",\"state\":\"pairing\",\"heartbeat_ms\":15000}") &&
		malformed("{\"op\":\"ready\",\"conn\":\"" U1 "\",\"state\":\"disabled\",\"heartbeat_ms\":15000}") &&
		malformed("{\"op\":\"ready\",\"conn\":\"" U1 "\",\"state\":\"active \",\"heartbeat_ms\":15000}") &&
		malformed("{\"op\":\"ready\",\"conn\":\"" U1 "\",\"state\":\"active\\u0000x\",\"heartbeat_ms\":15000}");
	UNIT_OK(ok, "a state only confirming or active");
	ok = malformed("{\"op\":\"ready\",\"conn\":\"" U1 "\",\"state\":\"active\",\"heartbeat_ms\":999}") &&
		malformed("{\"op\":\"ready\",\"conn\":\"" U1 "\",\"state\":\"active\",\"heartbeat_ms\":600001}") &&
		malformed("{\"op\":\"ready\",\"conn\":\"" U1 "\",\"state\":\"active\",\"heartbeat_ms\":1000.0}") &&
		malformed("{\"op\":\"ready\",\"conn\":\"" U1 "\",\"state\":\"active\",\"heartbeat_ms\":1e3}") &&
		malformed("{\"op\":\"ready\",\"conn\":\"" U1 "\",\"state\":\"active\",\"heartbeat_ms\":\"1000\"}") &&
		malformed("{\"op\":\"ready\",\"conn\":\"" U1 "\",\"state\":\"active\",\"heartbeat_ms\":-15000}");
	UNIT_OK(ok, "heartbeat_ms only an integer from 1000 to 600000");
	UNIT_OK(parse("{\"op\":\"ready\",\"conn\":\"" U1 "\",\"state\":\"active\",\"heartbeat_ms\":600000}",
				  &m) == HOST_MSG_OK, "heartbeat_ms 600000, the most");
	memset(big, ' ', sizeof(big));
	memcpy(big, "{\"op\":\"paired\"}", 15);
	big[HOST_MSG_MAX] = '\0';
	UNIT_OK(parse(big, &m) == HOST_MSG_OK, "a message of exactly the most bytes");
	big[HOST_MSG_MAX] = ' ';
	big[HOST_MSG_MAX + 1] = '\0';
	UNIT_OK(malformed(big), "a message over the most is refused before parsing");

	/* the host's messages */
	UNIT_OK(host_msg_hello(out, sizeof(out), U1, "SIG", "bothy-host/0.3.0") > 0 &&
			strcmp(out, "{\"op\":\"hello\",\"host\":\"" U1 "\",\"sig\":\"SIG\","
				   "\"version\":\"bothy-host/0.3.0\"}") == 0, "hello");
	UNIT_OK(host_msg_pair(out, sizeof(out), U1, "0123456789abcdef", "PK", "SIG") > 0 &&
			strcmp(out, "{\"op\":\"pair\",\"host\":\"" U1 "\",\"code\":\"0123456789abcdef\","
				   "\"public_key\":\"PK\",\"sig\":\"SIG\"}") == 0, "pair");
	UNIT_OK(host_msg_report(out, sizeof(out), NULL, 0) > 0 &&
			strcmp(out, "{\"op\":\"report\",\"sessions\":[]}") == 0, "report without sessions");
	list[0] = u1;
	list[1] = u2;
	UNIT_OK(host_msg_report(out, sizeof(out), list, 2) > 0 &&
			strcmp(out, "{\"op\":\"report\",\"sessions\":[\"" U1 "\",\"" U2 "\"]}") == 0,
			"report with two sessions");
	UNIT_OK(host_msg_heartbeat(out, sizeof(out)) > 0 && strcmp(out, "{\"op\":\"heartbeat\"}") == 0,
			"heartbeat");
	UNIT_OK(host_msg_started(out, sizeof(out), &u1, &u2) > 0 &&
			strcmp(out, "{\"op\":\"session.started\",\"session\":\"" U1 "\",\"grant\":\"" U2 "\"}") == 0,
			"session.started");
	UNIT_OK(host_msg_probe_ack(out, sizeof(out), "SIG") > 0 &&
			strcmp(out, "{\"op\":\"probe_ack\",\"sig\":\"SIG\"}") == 0, "probe_ack");
	UNIT_OK(host_msg_identify(out, sizeof(out), U3, &u1, &u2, "SIG") > 0 &&
			strcmp(out, "{\"op\":\"identify\",\"side\":\"host\",\"host\":\"" U3 "\",\"session\":\""
				   U1 "\",\"grant\":\"" U2 "\",\"sig\":\"SIG\"}") == 0, "identify");
	UNIT_OK(host_msg_heartbeat(out, 10) == 0 && out[0] == '\0',
			"a message that does not fit is refused, not cut");
	return unit_done();
}
