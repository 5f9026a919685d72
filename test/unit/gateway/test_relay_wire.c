/*
 * test_relay_wire.c
 *		Unit tests of src/gateway/terminal/relay/wire.c: the session ID of a
 *		stream path, both identify ops and every way each is refused, and
 *		the text a host signs for its data connection.
 */
#include <stdio.h>
#include <string.h>

#include "terminal/relay/slot.h"
#include "terminal/relay/wire.h"
#include "unit.h"

#define S "0190a5d0-0000-7000-8000-000000000001"
#define G "0190a5d0-0000-7000-8000-000000000002"
#define H "0190a5d0-0000-7000-8000-000000000003"
/* base64url of 64 bytes 0x00..0x3f */
#define SIG "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0-Pw"

static bool
parses(const char *text, gw_ridentify *out)
{
	char	   *copy = unit_exact_copy(text, strlen(text));
	bool		ok = gw_rwire_parse_identify(copy, strlen(text), out);

	free(copy);
	return ok;
}

static void
test_paths(void)
{
	bothy_uuid	u;
	static const char *const bad[] = {
		"", "x", S "/", S "x", "/" S, "0190A5D0-0000-7000-8000-000000000001",
		"{" S "}", "0190a5d0000070008000000000000001", S S, "0190a5d0-0000-7000-8000-00000000000g",
	};
	size_t		i;
	int			refused = 0;

	UNIT_OK(gw_rwire_session_path(S, &u) && u.b[15] == 1, "path: a canonical UUID is the session");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused += unit_case(!gw_rwire_session_path(bad[i], &u), bad[i]);
	UNIT_OK(refused == (int) (sizeof(bad) / sizeof(bad[0])),
			"path: anything but exactly one canonical UUID is refused");
}

static void
test_device(void)
{
	gw_ridentify id;
	char		big[1200];
	char		token[BOTHY_TOKEN_MAX + 2];

	UNIT_OK(parses("{\"op\":\"identify\",\"side\":\"device\",\"token\":\"bothy1.a.b.c\"}", &id) &&
			id.side == GW_RSIDE_DEVICE && id.token_len == 12 && strcmp(id.token, "bothy1.a.b.c") == 0,
			"device: identify with a token");
	UNIT_OK(parses("{\"token\":\"t\",\"side\":\"device\",\"op\":\"identify\"}", &id),
			"device: members in any order");
	memset(token, 'a', sizeof(token));
	token[BOTHY_TOKEN_MAX] = '\0';
	snprintf(big, sizeof(big), "{\"op\":\"identify\",\"side\":\"device\",\"token\":\"%s\"}", token);
	UNIT_OK(parses(big, &id) && id.token_len == BOTHY_TOKEN_MAX, "device: a token of 1024 characters");
	token[BOTHY_TOKEN_MAX] = 'a';
	token[BOTHY_TOKEN_MAX + 1] = '\0';
	snprintf(big, sizeof(big), "{\"op\":\"identify\",\"side\":\"device\",\"token\":\"%s\"}", token);
	UNIT_OK(!parses(big, &id), "device: a token of 1025 characters is refused");
}

static void
test_host(void)
{
	gw_ridentify id;
	uint8_t		want[GW_TSIG_BYTES];
	int			i;

	for (i = 0; i < GW_TSIG_BYTES; i++)
		want[i] = (uint8_t) i;
	UNIT_OK(parses("{\"op\":\"identify\",\"side\":\"host\",\"host\":\"" H "\",\"session\":\"" S
				   "\",\"grant\":\"" G "\",\"sig\":\"" SIG "\"}", &id) &&
			id.side == GW_RSIDE_HOST && id.host.b[15] == 3 && id.session.b[15] == 1 &&
			id.grant.b[15] == 2 && memcmp(id.sig, want, sizeof(want)) == 0,
			"host: identify with host, session, grant and signature");
}

static void
test_refused(void)
{
	static const char *const bad[] = {
		"",
		"not json",
		"[]",
		"\"identify\"",
		"{}",
		"{\"op\":\"identify\"}",
		"{\"op\":\"Identify\",\"side\":\"device\",\"token\":\"t\"}",
		"{\"op\":\"hello\",\"side\":\"device\",\"token\":\"t\"}",
		"{\"op\":\"identify\",\"side\":\"Device\",\"token\":\"t\"}",
		"{\"op\":\"identify\",\"side\":\"both\",\"token\":\"t\"}",
		"{\"op\":\"identify\",\"side\":\"device\"}",
		"{\"op\":\"identify\",\"side\":\"device\",\"token\":\"\"}",
		"{\"op\":\"identify\",\"side\":\"device\",\"token\":\"has space\"}",
		"{\"op\":\"identify\",\"side\":\"device\",\"token\":\"\\u00e9\"}",
		"{\"op\":\"identify\",\"side\":\"device\",\"token\":5}",
		"{\"op\":\"identify\",\"side\":\"device\",\"token\":\"t\",\"x\":1}",
		"{\"op\":\"identify\",\"side\":\"device\",\"token\":\"t\",\"token\":\"u\"}",
		"{\"op\":\"identify\",\"side\":\"device\",\"token\":\"t\",\"session\":\"" S "\"}",
		"{\"op\":\"identify\",\"side\":\"host\",\"session\":\"" S "\",\"grant\":\"" G "\",\"sig\":\"" SIG "\"}",
		"{\"op\":\"identify\",\"side\":\"host\",\"host\":\"" H "\",\"session\":\"" S "\",\"grant\":\"" G "\"}",
		"{\"op\":\"identify\",\"side\":\"host\",\"host\":\"" H "\",\"session\":\"" S "\",\"grant\":\"" G
		"\",\"sig\":\"" SIG "\",\"token\":\"t\"}",
		"{\"op\":\"identify\",\"side\":\"host\",\"host\":\"0190A5D0-0000-7000-8000-000000000003\",\"session\":\""
		S "\",\"grant\":\"" G "\",\"sig\":\"" SIG "\"}",
		"{\"op\":\"identify\",\"side\":\"host\",\"host\":\"" H "\",\"session\":null,\"grant\":\"" G
		"\",\"sig\":\"" SIG "\"}",
		"{\"op\":\"identify\",\"side\":\"host\",\"host\":\"" H "\",\"session\":\"" S "\",\"grant\":\"" G
		"\",\"sig\":\"" SIG "==\"}",
		"{\"op\":\"identify\",\"side\":\"host\",\"host\":\"" H "\",\"session\":\"" S "\",\"grant\":\"" G
		"\",\"sig\":\"AAEC\"}",
		"{\"op\":\"identify\",\"side\":\"host\",\"host\":\"" H "\",\"session\":\"" S "\",\"grant\":\"" G
		"\",\"sig\":\"" SIG "AA\"}",
		"{\"op\":\"identify\",\"side\":\"host\",\"host\":\"" H "\",\"session\":\"" S "\",\"grant\":\"" G
		"\",\"sig\":\"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+Pw\"}",
		"{\"op\":\"identify\",\"side\":\"host\",\"host\":\"" H "\",\"session\":\"" S "\",\"grant\":\"" G
		"\",\"sig\":\"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0-Px\"}",
	};
	size_t		i;
	int			refused = 0;
	gw_ridentify id;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused += unit_case(!parses(bad[i], &id), bad[i]);
	UNIT_OK(refused == (int) (sizeof(bad) / sizeof(bad[0])),
			"identify: every malformed message is refused (4002)");
}

static void
test_status_messages(void)
{
	UNIT_OK(strcmp(gw_rwire_waiting, "{\"op\":\"waiting\"}") == 0 &&
			strcmp(gw_rwire_paired, "{\"op\":\"paired\"}") == 0, "waiting and paired");
}

/* A pong's payload echoing a mark of relay/ack.c, strictly. */
static void
test_ack(void)
{
	static const char *const bad[] = {"", "01", "-1", "+1", " 1", "1 ", "1a", "0x10",
		"18446744073709551616", "99999999999999999999", "123456789012345678901", "\377" "1"};
	uint64_t	n = 7;
	size_t		i;
	int			refused = 0;

	UNIT_OK(gw_rwire_parse_ack("0", 1, &n) && n == 0, "ack: 0");
	UNIT_OK(gw_rwire_parse_ack("65536", 5, &n) && n == 65536, "ack: a count");
	UNIT_OK(gw_rwire_parse_ack("18446744073709551615", 20, &n) && n == UINT64_MAX, "ack: the largest count");
	UNIT_OK(gw_rwire_parse_ack("12x", 2, &n) && n == 12, "ack: only len bytes are read");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused += unit_case(!gw_rwire_parse_ack(bad[i], strlen(bad[i]), &n), bad[i]);
	UNIT_OK(refused == (int) (sizeof(bad) / sizeof(bad[0])), "ack: anything else is not an acknowledgement");
}

int
main(void)
{
	unit_diag("src/gateway/terminal/relay/wire.c");
	test_paths();
	test_device();
	test_host();
	test_refused();
	test_status_messages();
	test_ack();
	return unit_done();
}
