/*
 * test_token.c
 *		Unit tests of src/gateway/keys/token.c and keystore.c against temporary
 *		key directories: rotation, the token format and its strict
 *		verification (expiry, kinds, tampering, unknown keys, malformed and
 *		non-canonical texts), the key store's refusals, retirement, refresh,
 *		and key IDs.
 *
 * Times are fixed (2025-01-01 and later) and passed in through the *_at
 * functions, so nothing here depends on the wall clock but the one check
 * of bothy_keystore_verify.
 */
#define _GNU_SOURCE				/* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base64url.h"
#include "keys/keystore.h"
#include "keys/token.h"
#include "unit.h"
#include "unit_json.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

#define T0 INT64_C(1735689600)	/* 2025-01-01T00:00:00Z */
#define T0_MS (T0 * 1000)
#define DAY_S INT64_C(86400)
#define DAY_MS (DAY_S * 1000)
#define KEY_FILE_BYTES 61		/* "bothy-ed25519-v1 " + 43 + "\n" */

#define P1 "0190a4a8-2c3e-7d41-8f5a-3b9c2d1e0f4a"
#define D1 "0190a4a8-2c3e-7d42-8f5a-3b9c2d1e0f4b"
#define A1 "0190a4a8-2c3e-7d43-8f5a-3b9c2d1e0f4c"
#define S1 "0190a4a8-2c3e-7d44-8f5a-3b9c2d1e0f4d"
#define G1 "0190a4a8-2c3e-7d45-8f5a-3b9c2d1e0f4e"

#define ACCEPT_ALL (BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_PERSON_DEVICE) | \
					BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_AGENT) | \
					BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_RESUME))

static char base[64];

static void
die(const char *what)
{
	fprintf(stderr, "test_token: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* base/name; valid until the next call (copy it to keep it). */
static const char *
path(const char *name)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s/%s", base, name);
	return buf;
}

static const char *
key_path(const char *dir, const char *id)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/%s.key", dir, id);
	return buf;
}

static int
remove_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void) st;
	(void) flag;
	(void) ftw;
	return remove(p);
}

/* At exit, also after die(): the key directories go with the test. */
static void
remove_base(void)
{
	if (base[0] != '\0' && nftw(base, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		fprintf(stderr, "test_token: cannot remove %s\n", base);
}

static void
write_file(const char *p, const char *text, mode_t mode)
{
	int			fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t) strlen(text) ||
		fchmod(fd, mode) != 0 || close(fd) != 0)
		die("writing a test file");
}

static bool
rotate(const char *dir, int64_t now_ms, char id[BOTHY_KEY_ID_MAX + 1])
{
	char		err[256];

	return bothy_keystore_rotate_at(dir, now_ms, id, err, sizeof(err));
}

/* A fresh key store of one key made at T0, under base/name. */
static bothy_keystore *
fresh_store(const char *name, char id[BOTHY_KEY_ID_MAX + 1])
{
	char		err[256];
	bothy_keystore *ks;

	if (!rotate(path(name), T0_MS, id))
		die("rotate");
	ks = bothy_keystore_open_at(path(name), T0_MS, err, sizeof(err));
	if (ks == NULL)
	{
		fprintf(stderr, "test_token: open: %s\n", err);
		exit(2);
	}
	return ks;
}

static bool
uuid_eq(const bothy_uuid *a, const char *text)
{
	bothy_uuid	b = unit_uuid(text);

	return bothy_uuid_compare(a, &b) == 0;
}

static bothy_token
person_token(int64_t exp)
{
	bothy_token t;

	memset(&t, 0, sizeof(t));
	t.kind = BOTHY_TOKEN_PERSON_DEVICE;
	t.person = unit_uuid(P1);
	t.device = unit_uuid(D1);
	t.expires_at = exp;
	return t;
}

static bothy_token
agent_token(int64_t exp)
{
	bothy_token t;

	memset(&t, 0, sizeof(t));
	t.kind = BOTHY_TOKEN_AGENT;
	t.agent = unit_uuid(A1);
	t.expires_at = exp;
	return t;
}

/* Verify from a heap copy of exactly len bytes, so ASan sees any over-read. */
static bothy_token_result
verify_exact(const bothy_keystore *ks, const char *text, size_t len, int64_t now,
			 unsigned accept, bothy_token *out)
{
	char	   *copy = unit_exact_copy(text, len);
	bothy_token_result r;

	r = bothy_token_verify(ks, copy, len, now, accept, out);
	free(copy);
	return r;
}

static bothy_token_result
verify(const bothy_keystore *ks, const char *text, int64_t now, unsigned accept)
{
	bothy_token out;

	return verify_exact(ks, text, strlen(text), now, accept, &out);
}

/* "bothy1.<signing ID>.<payload>.<signature>", signed by ks whatever payload is. */
static void
forge(const bothy_keystore *ks, const char *payload, char *out, size_t outlen)
{
	uint8_t		sig[64];
	char		kid[BOTHY_KEY_ID_MAX + 1];
	size_t		len;

	len = (size_t) snprintf(out, outlen, "bothy1.%s.", bothy_keystore_signing_id(ks));
	if (!bothy_b64url_encode((const uint8_t *) payload, strlen(payload), out + len, outlen - len))
		die("forge: payload too long");
	len += strlen(out + len);
	if (!bothy_keystore_sign(ks, (const uint8_t *) out, len, sig, kid) || len + 2 > outlen)
		die("forge: sign");
	out[len++] = '.';
	if (!bothy_b64url_encode(sig, sizeof(sig), out + len, outlen - len))
		die("forge: signature");
}

/* The decoded payload of a token text, NUL-terminated into out. */
static bool
payload_of(const char *text, char *out, size_t outlen)
{
	const char *p1 = strchr(text, '.');
	const char *p2 = p1 ? strchr(p1 + 1, '.') : NULL;
	const char *p3 = p2 ? strchr(p2 + 1, '.') : NULL;
	size_t		used = 0;

	if (p3 == NULL || !bothy_b64url_decode(p2 + 1, (size_t) (p3 - p2 - 1), (uint8_t *) out,
										   outlen - 1, &used))
		return false;
	out[used] = '\0';
	return true;
}

/* The start of part n (0: "bothy1", 1: key ID, 2: payload, 3: signature). */
static char *
part(char *text, int n)
{
	char	   *p = text;

	while (n-- > 0 && p != NULL)
	{
		p = strchr(p, '.');
		if (p != NULL)
			p++;
	}
	return p;
}

/* Replaces the character at p by another of the base64url alphabet. */
static void
flip(char *p)
{
	*p = *p == 'A' ? 'B' : 'A';
}

/* --- key IDs ------------------------------------------------------------------ */

static bool
id_is(const char *id, int64_t want_ms)
{
	int64_t		ms = -1;

	return bothy_key_id_parse(id, strlen(id), &ms) && ms == want_ms;
}

static bool
id_refused(const char *id)
{
	int64_t		ms = 4242;

	return !bothy_key_id_parse(id, strlen(id), &ms) && ms == 4242;
}

static void
test_key_ids(void)
{
	static const char *const bad[] = {
		"20230229-000000-000-00000000",	/* 2023 is no leap year */
		"21000229-000000-000-00000000",	/* nor is 2100 */
		"20231301-000000-000-00000000",	/* month 13 */
		"20230001-000000-000-00000000",	/* month 0 */
		"20230100-000000-000-00000000",	/* day 0 */
		"20230431-000000-000-00000000",	/* 31 April */
		"20230101-240000-000-00000000",	/* 24:00 */
		"20230101-236000-000-00000000",	/* minute 60 */
		"20230101-235960-000-00000000",	/* second 60 */
		"19691231-235959-999-00000000",	/* before 1970 */
		"00000101-000000-000-00000000",
		"20230101-000000-000-ABCDEF01",	/* upper-case hex */
		"20230101-000000-000-0000000g",
		"20230101_000000-000-00000000",
		"20230101-000000_000-00000000",
		"20230101-000000-000_00000000",
		"2023010-1000000-000-00000000",
		"+0230101-000000-000-00000000",
		"20230101-000000-000-0000000",	/* 27 */
		"20230101-000000-000-000000000",	/* 29 */
		"",
	};
	size_t		i;
	int64_t		ms;
	bool		pass = true;

	UNIT_OK(id_is("19700101-000000-000-00000000", 0), "key ID: the epoch is 0 ms");
	UNIT_OK(id_is("20000101-000000-000-deadbeef", INT64_C(946684800000)), "key ID: 2000-01-01");
	UNIT_OK(id_is("20240229-235959-999-0123abcd", INT64_C(1709251199999)), "key ID: a leap day, last ms");
	UNIT_OK(id_is("20000229-120000-000-00000000", INT64_C(951825600000)), "key ID: 2000 is a leap year");
	UNIT_OK(id_is("99991231-235959-999-ffffffff", INT64_C(253402300799999)), "key ID: the last ms of 9999");
	for (i = 0; i < N_ELEMS(bad); i++)
		pass = unit_case(id_refused(bad[i]), bad[i]) && pass;
	UNIT_OK(pass, "key ID: impossible dates and times, before 1970, upper-case or non-hex, "
			"wrong separators and lengths refused");
	UNIT_OK(!bothy_key_id_parse(NULL, 28, &ms), "key ID: NULL refused");
	UNIT_OK(bothy_key_id_parse("20000101-000000-000-deadbeef.key", 28, &ms) && ms == INT64_C(946684800000),
			"key ID: only len bytes are read");
}

/* --- rotation and the key files -------------------------------------------------- */

static void
test_rotate(void)
{
	char		id[BOTHY_KEY_ID_MAX + 1];
	char		id2[BOTHY_KEY_ID_MAX + 1];
	char		id3[BOTHY_KEY_ID_MAX + 1];
	char		err[256];
	char		text[128];
	struct stat st;
	int64_t		ms = 0;
	int64_t		ms2 = 0;
	bothy_keystore *ks;
	FILE	   *f;
	size_t		n = 0;

	UNIT_OK(rotate(path("keys"), T0_MS + 5, id) && strlen(id) == 28 &&
			strncmp(id, "20250101-000000-005-", 20) == 0,
			"rotate: a missing directory gets a key named by its creation time");
	UNIT_OK(bothy_key_id_parse(id, strlen(id), &ms) && ms == T0_MS + 5, "rotate: the ID parses to now_ms");
	UNIT_OK(stat(path("keys"), &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700,
			"rotate: the directory is created 0700");
	UNIT_OK(stat(key_path(path("keys"), id), &st) == 0 && S_ISREG(st.st_mode) &&
			(st.st_mode & 07777) == 0600 && st.st_size == KEY_FILE_BYTES,
			"rotate: the key file is <ID>.key, 0600, 61 bytes");
	f = fopen(key_path(path("keys"), id), "r");
	if (f != NULL)
	{
		n = fread(text, 1, sizeof(text) - 1, f);
		fclose(f);
	}
	text[n] = '\0';
	UNIT_OK(n == KEY_FILE_BYTES && strncmp(text, "bothy-ed25519-v1 ", 17) == 0 && text[60] == '\n' &&
			strspn(text + 17, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") == 43,
			"rotate: the key file is the magic, 43 base64url characters and a newline");

	ks = bothy_keystore_open_at(path("keys"), T0_MS, err, sizeof(err));
	UNIT_OK(ks != NULL && strcmp(bothy_keystore_signing_id(ks), id) == 0,
			"open: the only key signs");
	bothy_keystore_close(ks);

	UNIT_OK(rotate(path("keys"), T0_MS + 1000, id2) && strcmp(id2, id) > 0,
			"rotate again: a later ID, sorting after the first");
	UNIT_OK(rotate(path("keys"), T0_MS - DAY_MS, id3) && strcmp(id3, id2) > 0 &&
			bothy_key_id_parse(id2, strlen(id2), &ms) && bothy_key_id_parse(id3, strlen(id3), &ms2) &&
			ms2 == ms + 1,
			"rotate with a clock behind: one ms after the newest key, so it still signs");
	ks = bothy_keystore_open_at(path("keys"), T0_MS, err, sizeof(err));
	UNIT_OK(ks != NULL && strcmp(bothy_keystore_signing_id(ks), id3) == 0, "open: the newest key signs");
	bothy_keystore_close(ks);

	UNIT_OK(!bothy_keystore_rotate_at(path("no/such/parent"), T0_MS, id, err, sizeof(err)) &&
			strcmp(err, "cannot create the key store directory") == 0 && id[0] == '\0',
			"rotate: a missing parent is refused, new_id empty");
	UNIT_OK(!bothy_keystore_rotate_at("", T0_MS, id, err, sizeof(err)) &&
			strcmp(err, "no key store directory given") == 0, "rotate: an empty path is refused");
	UNIT_OK(!bothy_keystore_rotate_at(path("rot-neg"), -1, id, err, sizeof(err)) &&
			strcmp(err, "the clock is outside the years 1970 to 9999") == 0 && id[0] == '\0',
			"rotate: the first key with a clock before 1970 is refused");
}

/* Keys made at A and B = A + 1 s; then rotations at later times delete A. */
static void
test_deletion(void)
{
	char		a[BOTHY_KEY_ID_MAX + 1];
	char		b[BOTHY_KEY_ID_MAX + 1];
	char		c[BOTHY_KEY_ID_MAX + 1];
	char		d[BOTHY_KEY_ID_MAX + 1];
	char		dir[256];
	int64_t		retire_a = T0_MS + 1000 + 366 * DAY_MS;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path("del"));
	if (!rotate(dir, T0_MS, a) || !rotate(dir, T0_MS + 1000, b))
		die("rotate");
	UNIT_OK(rotate(dir, retire_a + 30 * DAY_MS - 1, c) && stat(key_path(dir, a), &st) == 0,
			"rotate: a key retired for 30 days less 1 ms is kept");
	UNIT_OK(rotate(dir, retire_a + 30 * DAY_MS, d) && stat(key_path(dir, a), &st) != 0 && errno == ENOENT &&
			stat(key_path(dir, b), &st) == 0 && stat(key_path(dir, c), &st) == 0 &&
			stat(key_path(dir, d), &st) == 0,
			"rotate: a key retired for 30 days is deleted, the others kept");
}

/* --- tokens ------------------------------------------------------------------ */

static void
test_sign_verify(void)
{
	char		id[BOTHY_KEY_ID_MAX + 1];
	bothy_keystore *ks = fresh_store("sv", id);
	char		text[BOTHY_TOKEN_MAX + 1];
	char		payload[600];
	char		want[600];
	bothy_token t = person_token(T0 + 3600);
	bothy_token out;
	size_t		i;
	bool		printable = true;
	static const bothy_uuid zero;

	UNIT_OK(bothy_token_sign(ks, &t, text, sizeof(text)) && strcmp(t.key_id, id) == 0,
			"sign person-device: true, key_id set to the signing key");
	for (i = 0; text[i] != '\0'; i++)
		printable = printable && text[i] > 0x20 && text[i] < 0x7f && text[i] != '"' && text[i] != '\\';
	UNIT_OK(printable && strlen(text) <= BOTHY_TOKEN_MAX && strncmp(text, "bothy1.", 7) == 0 &&
			strncmp(text + 7, id, strlen(id)) == 0 && text[7 + strlen(id)] == '.',
			"token text: printable ASCII without JSON escapes, bothy1.<key ID>.");
	snprintf(want, sizeof(want),
			 "{\"kind\":\"person-device\",\"person\":\"%s\",\"device\":\"%s\",\"exp\":%lld}",
			 P1, D1, (long long) (T0 + 3600));
	UNIT_OK(payload_of(text, payload, sizeof(payload)) && strcmp(payload, want) == 0,
			"token payload: the canonical person-device object");
	UNIT_OK(strlen(part(text, 3)) == 86, "token signature: 86 base64url characters (64 bytes)");

	memset(&out, 0x5a, sizeof(out));
	UNIT_OK(verify_exact(ks, text, strlen(text), T0, BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_PERSON_DEVICE), &out) ==
			BOTHY_TOKEN_OK && out.kind == BOTHY_TOKEN_PERSON_DEVICE && !out.is_agent &&
			uuid_eq(&out.person, P1) && uuid_eq(&out.device, D1) &&
			memcmp(&out.agent, &zero, sizeof(zero)) == 0 && memcmp(&out.session, &zero, sizeof(zero)) == 0 &&
			out.expires_at == T0 + 3600 && strcmp(out.key_id, id) == 0,
			"verify person-device: every value back, the others zero");
	UNIT_OK(bothy_token_verify(ks, text, strlen(text), T0, ~0u, NULL) == BOTHY_TOKEN_OK,
			"verify: out may be NULL, extra accept bits are harmless");

	t = agent_token(T0 + 60);
	UNIT_OK(bothy_token_sign(ks, &t, text, sizeof(text)) && payload_of(text, payload, sizeof(payload)),
			"sign agent");
	snprintf(want, sizeof(want), "{\"kind\":\"agent\",\"agent\":\"%s\",\"exp\":%lld}",
			 A1, (long long) (T0 + 60));
	UNIT_OK(strcmp(payload, want) == 0, "token payload: the canonical agent object");
	memset(&out, 0x5a, sizeof(out));
	UNIT_OK(verify_exact(ks, text, strlen(text), T0 + 59, BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_AGENT), &out) ==
			BOTHY_TOKEN_OK && out.kind == BOTHY_TOKEN_AGENT && uuid_eq(&out.agent, A1) &&
			memcmp(&out.person, &zero, sizeof(zero)) == 0 && out.expires_at == T0 + 60 &&
			strcmp(out.key_id, id) == 0,
			"verify agent: one second before expiry");

	/* expiry and kinds */
	UNIT_OK(verify(ks, text, T0 + 60, BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_AGENT)) == BOTHY_TOKEN_EXPIRED &&
			verify(ks, text, T0 + 100000, BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_AGENT)) == BOTHY_TOKEN_EXPIRED,
			"verify: expired at exp and after");
	UNIT_OK(verify(ks, text, T0, 0) == BOTHY_TOKEN_WRONG_KIND &&
			verify(ks, text, T0, BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_PERSON_DEVICE) |
				   BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_RESUME)) == BOTHY_TOKEN_WRONG_KIND &&
			verify(ks, text, T0, ~BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_AGENT)) == BOTHY_TOKEN_WRONG_KIND,
			"verify: an agent token where only other kinds are accepted is wrong_kind");
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_OK,
			"verify: accepted when its kind is among others");
	UNIT_OK(verify(ks, text, T0 + 60, 0) == BOTHY_TOKEN_EXPIRED, "verify: expired before wrong kind");
	memset(&out, 0x5a, sizeof(out));
	out.expires_at = 7;
	UNIT_OK(verify_exact(ks, text, strlen(text), T0, 0, &out) == BOTHY_TOKEN_WRONG_KIND &&
			out.expires_at == 7, "verify: out untouched when refused");

	/* the edges of the signer */
	t = person_token(BOTHY_TOKEN_EXPIRES_MAX);
	UNIT_OK(bothy_token_sign(ks, &t, text, sizeof(text)) &&
			verify(ks, text, BOTHY_TOKEN_EXPIRES_MAX - 1, ACCEPT_ALL) == BOTHY_TOKEN_OK,
			"sign: expiry 9999-12-31T23:59:59Z signs and verifies");
	t = person_token(BOTHY_TOKEN_EXPIRES_MAX + 1);
	strcpy(text, "x");
	UNIT_OK(!bothy_token_sign(ks, &t, text, sizeof(text)) && text[0] == '\0',
			"sign: an expiry after 9999 refused, out empty");
	t = person_token(0);
	UNIT_OK(!bothy_token_sign(ks, &t, text, sizeof(text)), "sign: expiry 0 refused");
	t = person_token(-5);
	UNIT_OK(!bothy_token_sign(ks, &t, text, sizeof(text)), "sign: a negative expiry refused");
	t = person_token(T0 + 1);
	t.kind = (bothy_token_kind) 0;
	UNIT_OK(!bothy_token_sign(ks, &t, text, sizeof(text)), "sign: kind 0 refused");
	t.kind = (bothy_token_kind) (BOTHY_TOKEN_TERMINAL + 1);
	UNIT_OK(!bothy_token_sign(ks, &t, text, sizeof(text)), "sign: a kind past the last refused");
	t = person_token(T0 + 1);
	UNIT_OK(!bothy_token_sign(NULL, &t, text, sizeof(text)) &&
			!bothy_token_sign(ks, NULL, text, sizeof(text)) &&
			!bothy_token_sign(ks, &t, NULL, 100), "sign: NULL store, token or buffer refused");
	{
		size_t		len;

		(void) bothy_token_sign(ks, &t, text, sizeof(text));
		len = strlen(text);
		memset(text, '#', sizeof(text));
		t.key_id[0] = '\0';
		UNIT_OK(!bothy_token_sign(ks, &t, text, len) && text[0] == '\0' && t.key_id[0] == '\0' &&
				bothy_token_sign(ks, &t, text, len + 1) && strlen(text) == len,
				"sign: a buffer one byte short refused (key_id not set), exactly enough works");
	}
	bothy_keystore_close(ks);
}

static void
test_resume(void)
{
	char		id[BOTHY_KEY_ID_MAX + 1];
	bothy_keystore *ks = fresh_store("resume", id);
	char		text[BOTHY_TOKEN_MAX + 1];
	char		payload[600];
	char		want[600];
	bothy_token who = person_token(T0 + 3600);
	bothy_token out;
	bothy_token chained;
	bothy_uuid	session = unit_uuid(S1);
	unsigned	resume = BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_RESUME);

	UNIT_OK(bothy_token_mint_resume(ks, &who, &session, T0, text, sizeof(text)) &&
			payload_of(text, payload, sizeof(payload)), "mint_resume for a person device");
	snprintf(want, sizeof(want),
			 "{\"kind\":\"resume\",\"session\":\"%s\",\"person\":\"%s\",\"device\":\"%s\",\"exp\":%lld}",
			 S1, P1, D1, (long long) (T0 + BOTHY_TOKEN_RESUME_TTL));
	UNIT_OK(strcmp(payload, want) == 0, "resume payload of a person: session, person, device, exp now + 300");
	UNIT_OK(verify_exact(ks, text, strlen(text), T0 + 299, resume, &out) == BOTHY_TOKEN_OK &&
			out.kind == BOTHY_TOKEN_RESUME && !out.is_agent && uuid_eq(&out.session, S1) &&
			uuid_eq(&out.person, P1) && uuid_eq(&out.device, D1) &&
			out.expires_at == T0 + 300 && strcmp(out.key_id, id) == 0,
			"verify resume of a person: every value back");
	UNIT_OK(verify(ks, text, T0 + 300, resume) == BOTHY_TOKEN_EXPIRED, "resume: expired 300 s after minting");
	UNIT_OK(verify(ks, text, T0, BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_PERSON_DEVICE)) == BOTHY_TOKEN_WRONG_KIND,
			"resume: not accepted where identify's kinds are");
	chained = out;
	UNIT_OK(bothy_token_mint_resume(ks, &chained, &session, T0 + 200, text, sizeof(text)) &&
			verify_exact(ks, text, strlen(text), T0 + 200, resume, &out) == BOTHY_TOKEN_OK &&
			!out.is_agent && uuid_eq(&out.person, P1) && uuid_eq(&out.device, D1) &&
			out.expires_at == T0 + 500, "mint_resume from a person's resume keeps the person and device");

	who = agent_token(T0 + 3600);
	UNIT_OK(bothy_token_mint_resume(ks, &who, &session, T0, text, sizeof(text)) &&
			payload_of(text, payload, sizeof(payload)), "mint_resume for an agent");
	snprintf(want, sizeof(want), "{\"kind\":\"resume\",\"session\":\"%s\",\"agent\":\"%s\",\"exp\":%lld}",
			 S1, A1, (long long) (T0 + BOTHY_TOKEN_RESUME_TTL));
	UNIT_OK(strcmp(payload, want) == 0, "resume payload of an agent: session, agent, exp");
	UNIT_OK(verify_exact(ks, text, strlen(text), T0, resume, &out) == BOTHY_TOKEN_OK &&
			out.kind == BOTHY_TOKEN_RESUME && out.is_agent && uuid_eq(&out.agent, A1) &&
			uuid_eq(&out.session, S1), "verify resume of an agent: is_agent and the agent");
	chained = out;
	UNIT_OK(bothy_token_mint_resume(ks, &chained, &session, T0 + 1, text, sizeof(text)) &&
			verify_exact(ks, text, strlen(text), T0 + 1, resume, &out) == BOTHY_TOKEN_OK &&
			out.is_agent && uuid_eq(&out.agent, A1), "mint_resume from an agent's resume stays an agent's");

	who.kind = (bothy_token_kind) 0;
	UNIT_OK(!bothy_token_mint_resume(ks, &who, &session, T0, text, sizeof(text)) && text[0] == '\0',
			"mint_resume: no identity refused, out empty");
	who = agent_token(T0 + 3600);
	UNIT_OK(!bothy_token_mint_resume(ks, NULL, &session, T0, text, sizeof(text)) &&
			!bothy_token_mint_resume(ks, &who, NULL, T0, text, sizeof(text)),
			"mint_resume: NULL identity or session refused");
	UNIT_OK(!bothy_token_mint_resume(ks, &who, &session, -1, text, sizeof(text)),
			"mint_resume: a negative now refused");
	UNIT_OK(bothy_token_mint_resume(ks, &who, &session, BOTHY_TOKEN_EXPIRES_MAX - 300, text, sizeof(text)) &&
			!bothy_token_mint_resume(ks, &who, &session, BOTHY_TOKEN_EXPIRES_MAX - 299, text, sizeof(text)),
			"mint_resume: the last now whose expiry is representable, and one past");
	UNIT_OK(!bothy_token_mint_resume(ks, &who, &session, T0, text, 100),
			"mint_resume: a small buffer refused");
	bothy_keystore_close(ks);
}

static void
test_terminal(void)
{
	char		id[BOTHY_KEY_ID_MAX + 1];
	bothy_keystore *ks = fresh_store("terminal", id);
	char		text[BOTHY_TOKEN_MAX + 1];
	char		payload[600];
	char		want[600];
	bothy_token out;
	bothy_uuid	session = unit_uuid(S1);
	bothy_uuid	grant = unit_uuid(G1);
	bothy_uuid	person = unit_uuid(P1);
	bothy_uuid	device = unit_uuid(D1);
	unsigned	terminal = BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_TERMINAL);

	UNIT_OK(bothy_token_mint_terminal(ks, &session, &grant, &person, &device, T0 + 30, text,
									  sizeof(text)) &&
			payload_of(text, payload, sizeof(payload)), "mint_terminal");
	snprintf(want, sizeof(want),
			 "{\"kind\":\"terminal\",\"session\":\"%s\",\"grant\":\"%s\",\"person\":\"%s\","
			 "\"device\":\"%s\",\"exp\":%lld}", S1, G1, P1, D1, (long long) (T0 + 30));
	UNIT_OK(strcmp(payload, want) == 0, "terminal payload: session, grant, person, device, exp");
	UNIT_OK(verify_exact(ks, text, strlen(text), T0 + 29, terminal, &out) == BOTHY_TOKEN_OK &&
			out.kind == BOTHY_TOKEN_TERMINAL && uuid_eq(&out.session, S1) && uuid_eq(&out.grant, G1) &&
			uuid_eq(&out.person, P1) && uuid_eq(&out.device, D1) && out.expires_at == T0 + 30 &&
			strcmp(out.key_id, id) == 0, "verify terminal: every value back");
	UNIT_OK(verify(ks, text, T0 + 30, terminal) == BOTHY_TOKEN_EXPIRED, "terminal: expired at its grant's expiry");
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_WRONG_KIND,
			"terminal: not accepted by identify or resume");
	UNIT_OK(verify(ks, text, T0, terminal | ACCEPT_ALL) == BOTHY_TOKEN_OK,
			"terminal: accepted where its kind is");
	UNIT_OK(!bothy_token_mint_terminal(ks, &session, NULL, &person, &device, T0 + 30, text, sizeof(text)) &&
			text[0] == '\0', "mint_terminal: no grant refused, out empty");
	UNIT_OK(!bothy_token_mint_terminal(ks, &session, &grant, &person, &device, 0, text, sizeof(text)) &&
			!bothy_token_mint_terminal(ks, &session, &grant, &person, &device,
									   BOTHY_TOKEN_EXPIRES_MAX + 1, text, sizeof(text)),
			"mint_terminal: an expiry out of range refused");
	UNIT_OK(!bothy_token_mint_terminal(ks, &session, &grant, &person, &device, T0 + 30, text, 100),
			"mint_terminal: a small buffer refused");
	bothy_keystore_close(ks);
}

static void
test_tampering(void)
{
	char		id[BOTHY_KEY_ID_MAX + 1];
	char		other_id[BOTHY_KEY_ID_MAX + 1];
	bothy_keystore *ks = fresh_store("tamper", id);
	bothy_keystore *other = fresh_store("tamper-other", other_id);
	char		good[BOTHY_TOKEN_MAX + 1];
	char		text[BOTHY_TOKEN_MAX + 1];
	bothy_token t = person_token(T0 + 3600);
	char	   *p;

	if (!bothy_token_sign(ks, &t, good, sizeof(good)))
		die("sign");

	strcpy(text, good);
	flip(part(text, 2) + 10);
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_BAD_SIGNATURE, "tampered payload: bad_signature");
	strcpy(text, good);
	flip(part(text, 3) + 40);
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_BAD_SIGNATURE,
			"tampered signature: bad_signature");
	strcpy(text, good);
	p = part(text, 3) + 85;		/* the last: 4 bits that must be zero */
	*p = 'B';
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED,
			"signature with non-zero trailing bits: malformed, not another spelling");
	strcpy(text, good);
	memcpy(part(text, 1), "20250101-000000-000-ffffffff", 28);
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_UNKNOWN_KEY,
			"a well-formed key ID the store does not hold: unknown_key");
	UNIT_OK(verify(other, good, T0, ACCEPT_ALL) == BOTHY_TOKEN_UNKNOWN_KEY,
			"a token of another key store: unknown_key");
	strcpy(text, good);
	memcpy(part(text, 1), other_id, 28);
	UNIT_OK(verify(other, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_BAD_SIGNATURE,
			"the key ID swapped for the other store's: bad_signature (the ID is signed)");
	bothy_keystore_close(other);
	bothy_keystore_close(ks);
}

static void
test_malformed(void)
{
	char		id[BOTHY_KEY_ID_MAX + 1];
	bothy_keystore *ks = fresh_store("malformed", id);
	char		good[BOTHY_TOKEN_MAX + 1];
	char		text[BOTHY_TOKEN_MAX + 64];
	char		sig63[128];
	uint8_t		zeros[65] = {0};
	bothy_token t = person_token(T0 + 3600);
	size_t		len;

	if (!bothy_token_sign(ks, &t, good, sizeof(good)))
		die("sign");
	len = strlen(good);

	UNIT_OK(verify_exact(ks, good, 0, T0, ACCEPT_ALL, NULL) == BOTHY_TOKEN_MALFORMED, "malformed: empty");
	UNIT_OK(bothy_token_verify(ks, NULL, 10, T0, ACCEPT_ALL, NULL) == BOTHY_TOKEN_MALFORMED,
			"malformed: NULL");
	UNIT_OK(verify(ks, "bothy1.", T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED &&
			verify(ks, "bothy1...", T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED,
			"malformed: the prefix alone, and empty parts");
	UNIT_OK(verify_exact(ks, good, len - 1, T0, ACCEPT_ALL, NULL) == BOTHY_TOKEN_MALFORMED,
			"malformed: one character short (len respected)");
	UNIT_OK(verify_exact(ks, good, part(good, 3) - good - 1, T0, ACCEPT_ALL, NULL) == BOTHY_TOKEN_MALFORMED,
			"malformed: no signature part");
	snprintf(text, sizeof(text), "%s.AAAA", good);
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED, "malformed: a fifth part");
	snprintf(text, sizeof(text), "%s", good);
	text[5] = '2';
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED, "malformed: bothy2.");
	snprintf(text, sizeof(text), " %s", good);
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED, "malformed: a leading blank");
	snprintf(text, sizeof(text), "%s\n", good);
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED, "malformed: a trailing newline");
	snprintf(text, sizeof(text), "%s", good);
	memcpy(part(text, 1), "20250101-000000-000-FFFFFFFF", 28);
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED, "malformed: an upper-case key ID");
	snprintf(text, sizeof(text), "%s", good);
	memcpy(part(text, 1), "20250230", 8);
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED, "malformed: a key ID of 30 February");
	snprintf(text, sizeof(text), "%s", good);
	part(text, 2)[5] = '+';
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED,
			"malformed: '+' (base64, not base64url)");
	snprintf(text, sizeof(text), "%s", good);
	part(text, 3)[5] = '/';
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED, "malformed: '/' in the signature");
	snprintf(text, sizeof(text), "%s==", good);
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED, "malformed: padding");
	snprintf(text, sizeof(text), "%.*s", (int) (part(good, 3) - good), good);
	if (!bothy_b64url_encode(zeros, 63, sig63, sizeof(sig63)))
		die("encode");
	strcat(text, sig63);
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED, "malformed: a 63-byte signature");
	snprintf(text, sizeof(text), "%.*s", (int) (part(good, 3) - good), good);
	if (!bothy_b64url_encode(zeros, 65, sig63, sizeof(sig63)))
		die("encode");
	strcat(text, sig63);
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED, "malformed: a 65-byte signature");

	/* 1025 bytes: refused for its length, whatever it holds */
	memset(text, 'A', BOTHY_TOKEN_MAX + 1);
	memcpy(text, good, len);
	UNIT_OK(verify_exact(ks, text, BOTHY_TOKEN_MAX + 1, T0, ACCEPT_ALL, NULL) == BOTHY_TOKEN_MALFORMED,
			"malformed: longer than 1024 bytes");
	bothy_keystore_close(ks);
}

/* Payloads signed with the real key: only the one canonical text verifies. */
static void
test_canonical(void)
{
	char		id[BOTHY_KEY_ID_MAX + 1];
	bothy_keystore *ks = fresh_store("canonical", id);
	char		text[BOTHY_TOKEN_MAX + 1];
	char		big[700];
	bothy_token out;
	bool		pass = true;

#define PD(person, device, exp) \
	"{\"kind\":\"person-device\",\"person\":\"" person "\",\"device\":\"" device "\",\"exp\":" exp "}"
	static const struct
	{
		const char *name;
		const char *payload;
	}			bad[] = {
		{"a blank after a colon", "{\"kind\": \"person-device\",\"person\":\"" P1 "\",\"device\":\"" D1 "\",\"exp\":1735693200}"},
		{"members out of order", "{\"kind\":\"person-device\",\"device\":\"" D1 "\",\"person\":\"" P1 "\",\"exp\":1735693200}"},
		{"kind not first", "{\"person\":\"" P1 "\",\"kind\":\"person-device\",\"device\":\"" D1 "\",\"exp\":1735693200}"},
		{"an extra member", "{\"kind\":\"person-device\",\"person\":\"" P1 "\",\"device\":\"" D1 "\",\"exp\":1735693200,\"x\":1}"},
		{"a duplicate member", "{\"kind\":\"person-device\",\"person\":\"" P1 "\",\"person\":\"" P1 "\",\"device\":\"" D1 "\",\"exp\":1735693200}"},
		{"an escaped letter", "{\"kind\":\"person-device\",\"\\u0070erson\":\"" P1 "\",\"device\":\"" D1 "\",\"exp\":1735693200}"},
		{"a trailing newline", PD(P1, D1, "1735693200") "\n"},
		{"exp a string", PD(P1, D1, "\"1735693200\"")},
		{"exp a real", PD(P1, D1, "1735693200.0")},
		{"exp with an exponent", PD(P1, D1, "17356932e2")},
		{"exp 0", PD(P1, D1, "0")},
		{"exp negative", PD(P1, D1, "-1")},
		{"exp after 9999", PD(P1, D1, "253402300800")},
		{"an upper-case UUID", PD("0190A4A8-2C3E-7D41-8F5A-3B9C2D1E0F4A", D1, "1735693200")},
		{"a UUID without hyphens", PD("0190a4a82c3e7d418f5a3b9c2d1e0f4a", D1, "1735693200")},
		{"no device", "{\"kind\":\"person-device\",\"person\":\"" P1 "\",\"exp\":1735693200}"},
		{"an unknown kind", "{\"kind\":\"admin\",\"person\":\"" P1 "\",\"device\":\"" D1 "\",\"exp\":1735693200}"},
		{"kind agent with a person", "{\"kind\":\"agent\",\"person\":\"" P1 "\",\"device\":\"" D1 "\",\"exp\":1735693200}"},
		{"a resume with agent and person", "{\"kind\":\"resume\",\"session\":\"" S1 "\",\"agent\":\"" A1 "\",\"person\":\"" P1 "\",\"device\":\"" D1 "\",\"exp\":1735693200}"},
		{"a resume without session", "{\"kind\":\"resume\",\"agent\":\"" A1 "\",\"exp\":1735693200}"},
		{"an array", "[\"person-device\"]"},
		{"not JSON", "hello"},
		{"empty", ""},
	};
	size_t		i;

	forge(ks, PD(P1, D1, "1735693200"), text, sizeof(text));
	UNIT_OK(verify_exact(ks, text, strlen(text), T0, ACCEPT_ALL, &out) == BOTHY_TOKEN_OK &&
			uuid_eq(&out.person, P1) && out.expires_at == T0 + 3600,
			"canonical: a payload written by hand in the one form verifies");
	forge(ks, "{\"kind\":\"resume\",\"session\":\"" S1 "\",\"agent\":\"" A1 "\",\"exp\":1735693200}",
		  text, sizeof(text));
	UNIT_OK(verify_exact(ks, text, strlen(text), T0, ACCEPT_ALL, &out) == BOTHY_TOKEN_OK &&
			out.is_agent && uuid_eq(&out.agent, A1) && uuid_eq(&out.session, S1),
			"canonical: an agent's resume written by hand verifies");
	for (i = 0; i < N_ELEMS(bad); i++)
	{
		forge(ks, bad[i].payload, text, sizeof(text));
		pass = unit_case(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED, bad[i].name) && pass;
	}
	UNIT_OK(pass, "canonical: validly signed payloads with another spacing, order, member, escape, "
			"number spelling, UUID form or kind are malformed");
	forge(ks, PD(P1, D1, "1735689600"), text, sizeof(text));
	UNIT_OK(verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_EXPIRED,
			"canonical: a valid payload at its expiry is expired, not malformed");

	memset(big, ' ', 600);
	big[0] = '{';
	big[598] = '}';
	big[599] = '\0';
	forge(ks, big, text, sizeof(text));
	UNIT_OK(strlen(text) <= BOTHY_TOKEN_MAX && verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_MALFORMED,
			"a signed payload over 512 bytes is malformed");
#undef PD
	bothy_keystore_close(ks);
}

/* --- rotation as the nodes see it: old keys verify, the new one signs ---------------- */

static void
test_rotation_and_retirement(void)
{
	char		id1[BOTHY_KEY_ID_MAX + 1];
	char		id2[BOTHY_KEY_ID_MAX + 1];
	char		err[256];
	bothy_keystore *ks = fresh_store("rot", id1);
	char		old[BOTHY_TOKEN_MAX + 1];
	char		fresh[BOTHY_TOKEN_MAX + 1];
	bothy_token t = person_token(T0 + 400 * DAY_S);
	bothy_token out;
	int64_t		retire_s;

	if (!bothy_token_sign(ks, &t, old, sizeof(old)))
		die("sign");
	UNIT_OK(rotate(path("rot"), T0_MS + 1000, id2) && strcmp(id2, id1) > 0, "rotation: a second key");
	UNIT_OK(bothy_keystore_refresh(ks, T0_MS + 1000, 1000, err, sizeof(err)) &&
			strcmp(bothy_keystore_signing_id(ks), id2) == 0, "rotation: after a refresh the new key signs");
	UNIT_OK(bothy_token_sign(ks, &t, fresh, sizeof(fresh)) && strcmp(t.key_id, id2) == 0 &&
			verify_exact(ks, fresh, strlen(fresh), T0, ACCEPT_ALL, &out) == BOTHY_TOKEN_OK &&
			strcmp(out.key_id, id2) == 0, "rotation: a new token names the new key and verifies");
	UNIT_OK(verify_exact(ks, old, strlen(old), T0, ACCEPT_ALL, &out) == BOTHY_TOKEN_OK &&
			strcmp(out.key_id, id1) == 0, "rotation: a token of the old key still verifies");

	/* The old key retires 366 days after the new one was made (T0 + 1 s). */
	retire_s = T0 + 1 + 366 * DAY_S;
	UNIT_OK(verify(ks, old, retire_s - 1, ACCEPT_ALL) == BOTHY_TOKEN_OK,
			"retirement: the old key verifies one second before it retires");
	UNIT_OK(verify(ks, old, retire_s, ACCEPT_ALL) == BOTHY_TOKEN_UNKNOWN_KEY,
			"retirement: then it is unknown, though its token has not expired");
	UNIT_OK(verify(ks, fresh, retire_s, ACCEPT_ALL) == BOTHY_TOKEN_OK,
			"retirement: the newest key never retires");
	bothy_keystore_close(ks);
}

/* --- refresh ------------------------------------------------------------------------ */

static void
test_refresh(void)
{
	char		id1[BOTHY_KEY_ID_MAX + 1];
	char		id2[BOTHY_KEY_ID_MAX + 1];
	char		id3[BOTHY_KEY_ID_MAX + 1];
	char		id4[BOTHY_KEY_ID_MAX + 1];
	char		err[256];
	char		text[BOTHY_TOKEN_MAX + 1];
	char		dir[256];
	bothy_keystore *ks = fresh_store("refresh", id1);	/* read at T0_MS */
	bothy_token t = person_token(T0 + 3600);

	snprintf(dir, sizeof(dir), "%s", path("refresh"));
	if (!rotate(dir, T0_MS + 10, id2))
		die("rotate");
	UNIT_OK(bothy_keystore_refresh(ks, T0_MS + 999, 1000, err, sizeof(err)) &&
			strcmp(bothy_keystore_signing_id(ks), id1) == 0,
			"refresh: younger than max_age, no read (the new key not seen)");
	UNIT_OK(bothy_keystore_refresh(ks, T0_MS + 1000, 1000, err, sizeof(err)) &&
			strcmp(bothy_keystore_signing_id(ks), id2) == 0,
			"refresh: at max_age the directory is read again");

	if (!rotate(dir, T0_MS + 20, id3))
		die("rotate");
	UNIT_OK(bothy_keystore_refresh(ks, T0_MS + 500, 1000, err, sizeof(err)) &&
			strcmp(bothy_keystore_signing_id(ks), id3) == 0,
			"refresh: a clock stepped back reads again");
	if (!rotate(dir, T0_MS + 30, id4))
		die("rotate");
	UNIT_OK(bothy_keystore_refresh(ks, T0_MS + 500, 0, err, sizeof(err)) &&
			strcmp(bothy_keystore_signing_id(ks), id4) == 0,
			"refresh: max_age 0 always reads");

	/* A failed read keeps the keys in use and restarts the timer. */
	if (chmod(dir, 0755) != 0)
		die("chmod");
	err[0] = '\0';
	UNIT_OK(!bothy_keystore_refresh(ks, T0_MS + 5000, 1000, err, sizeof(err)) &&
			strcmp(err, "key store directory is open to group or others (it must be 0700)") == 0,
			"refresh: a directory opened to others fails, with the reason");
	UNIT_OK(strcmp(bothy_keystore_signing_id(ks), id4) == 0 && bothy_token_sign(ks, &t, text, sizeof(text)) &&
			verify(ks, text, T0, ACCEPT_ALL) == BOTHY_TOKEN_OK,
			"refresh: after a failure the keys loaded before still sign and verify");
	if (chmod(dir, 0700) != 0 || !rotate(dir, T0_MS + 40, id1))
		die("chmod or rotate");
	UNIT_OK(bothy_keystore_refresh(ks, T0_MS + 5999, 1000, err, sizeof(err)) &&
			strcmp(bothy_keystore_signing_id(ks), id4) == 0,
			"refresh: a failed read restarts the timer too");
	UNIT_OK(bothy_keystore_refresh(ks, T0_MS + 6000, 1000, err, sizeof(err)) &&
			strcmp(bothy_keystore_signing_id(ks), id1) == 0,
			"refresh: once the directory is fixed and max_age passed, the newest key signs");
	UNIT_OK(!bothy_keystore_refresh(NULL, T0_MS, 0, err, sizeof(err)) && strcmp(err, "no key store") == 0,
			"refresh: NULL refused");
	bothy_keystore_close(ks);
}

/* --- the key store's refusals ---------------------------------------------------------- */

/* Opening dir fails with exactly want. */
static bool
open_refused(const char *dir, const char *want)
{
	char		err[256] = "";
	bothy_keystore *ks = bothy_keystore_open_at(dir, T0_MS, err, sizeof(err));

	if (ks != NULL)
	{
		bothy_keystore_close(ks);
		return false;
	}
	if (strcmp(err, want) != 0)
		unit_diag(err);
	return strcmp(err, want) == 0;
}

static bool
opens(const char *dir)
{
	char		err[256];
	bothy_keystore *ks = bothy_keystore_open_at(dir, T0_MS, err, sizeof(err));

	bothy_keystore_close(ks);
	return ks != NULL;
}

static void
test_refusals(void)
{
	char		dir[256];
	char		id[BOTHY_KEY_ID_MAX + 1];
	char		id2[BOTHY_KEY_ID_MAX + 1];
	char		err[256];
	char		other[600];		/* a key_path and a suffix */
	const char *open_to_others = "key store directory is open to group or others (it must be 0700)";
	const char *file_open = "key file is open to group or others (it must be 0600)";
	const char *stray = "key store holds a file that is not a key file";
	const char *no_parse = "key file does not parse";

	snprintf(dir, sizeof(dir), "%s", path("ref"));
	UNIT_OK(open_refused(path("missing"), "key store directory does not exist"),
			"open refused: a missing directory");
	UNIT_OK(open_refused("", "no key store directory given") &&
			open_refused(NULL, "no key store directory given"), "open refused: an empty or NULL path");
	write_file(path("plain-file"), "x", 0600);
	UNIT_OK(open_refused(path("plain-file"), "key store path is not a directory"),
			"open refused: a regular file");
	if (mkdir(dir, 0700) != 0 || chmod(dir, 0700) != 0)
		die("mkdir");
	UNIT_OK(open_refused(dir, "key store holds no key"), "open refused: an empty directory");
	if (!rotate(dir, T0_MS, id))
		die("rotate");
	UNIT_OK(opens(dir), "open: the directory with one key");

	if (chmod(dir, 0755) != 0)
		die("chmod");
	UNIT_OK(open_refused(dir, open_to_others), "open refused: directory 0755");
	UNIT_OK(!bothy_keystore_rotate_at(dir, T0_MS + 1, id2, err, sizeof(err)) &&
			strcmp(err, open_to_others) == 0, "rotate refused: directory 0755");
	if (chmod(dir, 0701) != 0)
		die("chmod");
	UNIT_OK(open_refused(dir, open_to_others), "open refused: directory 0701 (search by others)");
	if (chmod(dir, 0710) != 0)
		die("chmod");
	UNIT_OK(open_refused(dir, open_to_others), "open refused: directory 0710 (search by group)");
	if (chmod(dir, 0700) != 0)
		die("chmod");

	if (chmod(key_path(dir, id), 0644) != 0)
		die("chmod");
	UNIT_OK(open_refused(dir, file_open), "open refused: key file 0644");
	if (chmod(key_path(dir, id), 0620) != 0)
		die("chmod");
	UNIT_OK(open_refused(dir, file_open), "open refused: key file 0620");
	if (chmod(key_path(dir, id), 0400) != 0)
		die("chmod");
	UNIT_OK(opens(dir), "open: a key file 0400 (no access by others) is fine");
	if (chmod(key_path(dir, id), 0600) != 0)
		die("chmod");

	write_file(path("ref/README"), "notes\n", 0600);
	UNIT_OK(open_refused(dir, stray), "open refused: a stray file");
	UNIT_OK(!bothy_keystore_rotate_at(dir, T0_MS + 1, id2, err, sizeof(err)) && strcmp(err, stray) == 0,
			"rotate refused: a stray file");
	unlink(path("ref/README"));
	snprintf(other, sizeof(other), "%s.bak", key_path(dir, id));
	write_file(other, "x", 0600);
	UNIT_OK(open_refused(dir, stray), "open refused: <ID>.key.bak");
	unlink(other);
	write_file(key_path(dir, "20250101-000000-000-XXXXXXXX"), "x", 0600);
	UNIT_OK(open_refused(dir, stray), "open refused: a .key file whose name is no key ID");
	unlink(key_path(dir, "20250101-000000-000-XXXXXXXX"));
	write_file(path("ref/.hidden.tmp"), "half a key", 0644);
	UNIT_OK(opens(dir), "open: names starting with a dot are skipped (rotation's temp files)");
	unlink(path("ref/.hidden.tmp"));

	/* A second key file, broken in each way. */
	snprintf(id2, sizeof(id2), "%s", "20250101-000001-000-00000000");
	write_file(key_path(dir, id2), "bothy-ed25519-v1 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n", 0600);
	UNIT_OK(opens(dir), "open: a hand-written key file in the format loads");
	write_file(key_path(dir, id2), "bothy-ed25519-v1 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 0600);
	UNIT_OK(open_refused(dir, no_parse), "open refused: a key file without its newline");
	write_file(key_path(dir, id2), "bothy-ed25519-v1 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n\n", 0600);
	UNIT_OK(open_refused(dir, no_parse), "open refused: a key file one byte too long");
	write_file(key_path(dir, id2), "bothy-ed25519-v2 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n", 0600);
	UNIT_OK(open_refused(dir, no_parse), "open refused: another magic");
	write_file(key_path(dir, id2), "bothy-ed25519-v1 AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB\n", 0600);
	UNIT_OK(open_refused(dir, no_parse), "open refused: a seed with non-zero trailing bits");
	write_file(key_path(dir, id2), "", 0600);
	UNIT_OK(open_refused(dir, no_parse), "open refused: an empty key file");
	unlink(key_path(dir, id2));
	snprintf(other, sizeof(other), "%s", key_path(dir, id));
	if (symlink(other, key_path(dir, id2)) != 0)
		die("symlink");
	UNIT_OK(open_refused(dir, "key file is a symbolic link"), "open refused: a key file that is a symlink");
	unlink(key_path(dir, id2));
	if (mkdir(key_path(dir, id2), 0700) != 0)
		die("mkdir");
	UNIT_OK(open_refused(dir, "key store holds a key file that is not a regular file"),
			"open refused: a key file that is a directory");
	rmdir(key_path(dir, id2));
	UNIT_OK(opens(dir), "open: the directory is good again");

	if (geteuid() == 0)
	{
		if (chown(dir, 65534, 65534) != 0)
			die("chown");
		UNIT_OK(open_refused(dir, "key store directory is not owned by the user running bothy-gateway"),
				"open refused: a directory of another user");
		if (chown(dir, 0, 0) != 0 || chown(key_path(dir, id), 65534, 65534) != 0)
			die("chown");
		UNIT_OK(open_refused(dir, "key file is not owned by the user running bothy-gateway"),
				"open refused: a key file of another user");
		if (chown(key_path(dir, id), 0, 0) != 0)
			die("chown");
	}
	else
		unit_diag("not root: the ownership checks are not run");
}

/* --- the store's own signing, verifying and names -------------------------------------------- */

static void
test_store_api(void)
{
	char		id[BOTHY_KEY_ID_MAX + 1];
	char		kid[BOTHY_KEY_ID_MAX + 1];
	char		err[256];
	bothy_keystore *ks;
	const uint8_t msg[] = "a message";
	uint8_t		sig[64];
	static const char *const names[] = {
		"ok", "malformed", "unknown_key", "bad_signature", "expired", "wrong_kind",
	};
	bool		pass = true;
	int			i;

	if (!bothy_keystore_rotate(path("api"), id, err, sizeof(err)))
		die("rotate");
	ks = bothy_keystore_open(path("api"), err, sizeof(err));
	UNIT_OK(ks != NULL && bothy_keystore_sign(ks, msg, sizeof(msg), sig, kid) && strcmp(kid, id) == 0,
			"store: rotate and open at the real clock, sign names the key");
	UNIT_OK(bothy_keystore_verify(ks, id, msg, sizeof(msg), sig), "store: verify at the real clock");
	UNIT_OK(bothy_keystore_check(ks, id, msg, sizeof(msg) - 1, sig, T0_MS) == BOTHY_KEY_BAD_SIGNATURE &&
			!bothy_keystore_verify(ks, id, msg, sizeof(msg) - 1, sig),
			"store: another message is a bad signature");
	UNIT_OK(bothy_keystore_check(ks, "20250101-000000-000-00000000", msg, sizeof(msg), sig, T0_MS) ==
			BOTHY_KEY_UNKNOWN && bothy_keystore_check(ks, NULL, msg, sizeof(msg), sig, T0_MS) ==
			BOTHY_KEY_UNKNOWN && bothy_keystore_check(NULL, id, msg, sizeof(msg), sig, T0_MS) ==
			BOTHY_KEY_UNKNOWN, "store: an unknown or NULL key ID, or no store, is unknown");
	UNIT_OK(!bothy_keystore_sign(NULL, msg, sizeof(msg), sig, kid) &&
			strcmp(bothy_keystore_signing_id(NULL), "") == 0,
			"store: no store signs nothing and has an empty signing ID");
	bothy_keystore_close(ks);
	bothy_keystore_close(NULL);

	for (i = 0; i <= BOTHY_TOKEN_WRONG_KIND; i++)
		pass = pass && strcmp(bothy_token_result_name((bothy_token_result) i), names[i]) == 0;
	UNIT_OK(pass && strcmp(bothy_token_result_name((bothy_token_result) 99), "unknown") == 0,
			"result names; out of range is unknown");
}

int
main(void)
{
	snprintf(base, sizeof(base), "/tmp/bothy-unit-token-XXXXXX");
	if (mkdtemp(base) == NULL)
	{
		base[0] = '\0';
		die("mkdtemp");
	}
	atexit(remove_base);
	unit_diag("key IDs");
	test_key_ids();
	unit_diag("rotation");
	test_rotate();
	test_deletion();
	unit_diag("tokens");
	test_sign_verify();
	test_resume();
	test_terminal();
	test_tampering();
	test_malformed();
	test_canonical();
	unit_diag("rotation, retirement and refresh");
	test_rotation_and_retirement();
	test_refresh();
	unit_diag("key store refusals");
	test_refusals();
	test_store_api();
	return unit_done();
}
