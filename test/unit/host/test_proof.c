/*
 * test_proof.c
 *		Unit tests of src/host/proof.c and the fingerprint: docs/host.md's
 *		fingerprint vector ("Pairing"), each signed context byte for byte, and
 *		signatures equal to another implementation's (the vectors below
 *		were made with python3-cryptography from RFC 8032's test 1 key;
 *		Ed25519 is deterministic), the nonce's bounds.
 */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "host/hostkey.h"
#include "host/proof.h"
#include "unit.h"

#define HOST "01890a5d-ac96-774b-bcce-b302099a8057"
#define SESSION "01890a5d-ac96-7aaa-8bbb-000000000002"
#define GRANT "01890a5d-ac96-7ccc-9ddd-000000000003"
/* the base64url of the bytes 0 .. 31, as a server may send a nonce */
#define NONCE "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"

static const char rfc8032_seed[] =
"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
static const char rfc8032_pk[] =
"d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";

static void
from_hex(const char *hex, uint8_t *out, size_t len)
{
	size_t		bin_len = 0;

	sodium_hex2bin(out, len, hex, strlen(hex), NULL, &bin_len, NULL);
}

static bool
context_is(host_proof kind, const char *a, const char *b, const char *expected)
{
	char		out[HOST_PROOF_CONTEXT_MAX + 1];
	size_t		n = host_proof_context(kind, a, b, out, sizeof(out));

	return n == strlen(expected) && memcmp(out, expected, n + 1) == 0;
}

static bool
sign_is(const host_key *k, host_proof kind, const char *a, const char *b, const char *expected)
{
	char		sig[HOST_SIG_TEXT_LEN + 1];

	return host_proof_sign(k, kind, a, b, sig) && strcmp(sig, expected) == 0;
}

int
main(void)
{
	host_key	k;
	uint8_t		seed[32];
	uint8_t		pk[32];
	char		fp[HOST_FINGERPRINT_LEN + 1];
	char		out[64];
	char		sig[HOST_SIG_TEXT_LEN + 1];
	uint8_t		raw[64];
	size_t		used = 0;
	char		context[HOST_PROOF_CONTEXT_MAX + 1];
	char		nonce[200];

	unit_diag("the signed contexts (src/host/proof.c)");

	if (sodium_init() < 0)
		return 2;
	from_hex(rfc8032_pk, pk, sizeof(pk));
	host_key_fingerprint(pk, fp);
	UNIT_OK(strcmp(fp, "SHA256:If4x36FUomFia/hUBG/SJxt77UtqvkWqWId+9H+XIbk") == 0,
			"docs/host.md's fingerprint vector (RFC 8032 test 1's public key)");
	UNIT_OK(strlen(fp) == HOST_FINGERPRINT_LEN && strchr(fp, '=') == NULL,
			"the fingerprint is standard base64 without padding");

	UNIT_OK(context_is(HOST_PROOF_HELLO, HOST, NONCE, "bothy-host-hello-v1\n" HOST "\n" NONCE),
			"hello's context: bothy-host-hello-v1, host, nonce, no trailing newline");
	UNIT_OK(context_is(HOST_PROOF_PAIR, HOST, NONCE, "bothy-host-pair-v1\n" HOST "\n" NONCE),
			"pair's context: bothy-host-pair-v1, host, nonce");
	UNIT_OK(context_is(HOST_PROOF_PROBE, HOST, NONCE, "bothy-host-probe-v1\n" HOST "\n" NONCE),
			"probe_ack's context: bothy-host-probe-v1, host, nonce");
	UNIT_OK(context_is(HOST_PROOF_DATA, SESSION, GRANT,
					   "bothy-host-data-v1\n" SESSION "\n" GRANT),
			"identify's context: bothy-host-data-v1, session, grant");
	UNIT_OK(host_proof_context(HOST_PROOF_HELLO, HOST, NONCE, out, sizeof(out)) == 0 &&
			out[0] == '\0', "a context that does not fit is refused, not cut");

	/* RFC 8032 test 1's key, with the host ID of the file it would be in */
	memset(&k, 0, sizeof(k));
	from_hex(rfc8032_seed, seed, sizeof(seed));
	crypto_sign_seed_keypair(k.pk, k.sk, seed);
	UNIT_OK(memcmp(k.pk, pk, 32) == 0, "the seed gives RFC 8032's public key");
	UNIT_OK(sign_is(&k, HOST_PROOF_HELLO, HOST, NONCE,
					"e7V5TvsF1HNV4x3gYjm82tGhMEwJGinYGMyXZfnHiWYT5SqszARZYjwAhWBNJCFp8OYJenJmboRNbpxNDqKiDg"),
			"hello's signature equals python3-cryptography's");
	UNIT_OK(sign_is(&k, HOST_PROOF_PAIR, HOST, NONCE,
					"GcEDG39NcinyJFz2Jd0jroGkFBJ_8S_vtDup9BD7YilPJU8LyL6KN-eB575IfRGFB0-hKI83yVGY1yt3FJ-TCw"),
			"pair's signature equals python3-cryptography's");
	UNIT_OK(sign_is(&k, HOST_PROOF_PROBE, HOST, NONCE,
					"M6iwk_sRlrHmYGtygZKK4_ceX6mBJie9mHoCeax3-yXF2Su55Y0Y0PuWWm_1HODZBFJMoxryeDdWccrgzQDWCQ"),
			"probe_ack's signature equals python3-cryptography's");
	UNIT_OK(sign_is(&k, HOST_PROOF_DATA, SESSION, GRANT,
					"lHsLnn2inyeJRptDFei8-JVlFWmQ-W4Q7i0IScT0oDvxgo_h4W7fo0He0CMs1DTMoj-meHI63Vy-A3K_0GgVCg"),
			"identify's signature equals python3-cryptography's");

	/* a fresh key's signature verifies over exactly the context, nothing else */
	UNIT_OK(host_proof_sign(&k, HOST_PROOF_HELLO, HOST, NONCE, sig) &&
			strlen(sig) == HOST_SIG_TEXT_LEN &&
			sodium_base642bin(raw, sizeof(raw), sig, strlen(sig), NULL, &used, NULL,
							  sodium_base64_VARIANT_URLSAFE_NO_PADDING) == 0 && used == 64,
			"a signature is 86 characters of unpadded base64url");
	host_proof_context(HOST_PROOF_HELLO, HOST, NONCE, context, sizeof(context));
	UNIT_OK(crypto_sign_verify_detached(raw, (const uint8_t *) context, strlen(context), pk) == 0,
			"it verifies over the context");
	strcat(context, "\n");
	UNIT_OK(crypto_sign_verify_detached(raw, (const uint8_t *) context, strlen(context), pk) != 0,
			"and not over the context with a trailing newline");

	/* nonces */
	UNIT_OK(host_proof_nonce_ok(NONCE, strlen(NONCE)), "a 32-byte nonce is signed");
	UNIT_OK(host_proof_nonce_ok("AAECAwQFBgcICQoLDA0ODw", 22), "a 16-byte nonce, the least");
	UNIT_OK(!host_proof_nonce_ok("AAECAwQFBgcICQoLDA0O", 20), "a 15-byte nonce is refused");
	UNIT_OK(!host_proof_nonce_ok("AAECAwQFBgcICQoLDA0ODw==", 24), "padding is refused");
	UNIT_OK(!host_proof_nonce_ok("AAECAwQFBgcICQoLDA0ODx", 22),
			"non-zero trailing bits are refused (one spelling)");
	UNIT_OK(!host_proof_nonce_ok("AAECAwQFBgcICQoLDA0OD+", 22) &&
			!host_proof_nonce_ok("AAECAwQFBgcICQoLDA0OD/", 22), "the standard alphabet is refused");
	memset(nonce, 'A', sizeof(nonce));
	UNIT_OK(host_proof_nonce_ok(nonce, 171), "a 128-byte nonce (171 characters), the most");
	UNIT_OK(!host_proof_nonce_ok(nonce, 172), "over 128 bytes is refused");
	UNIT_OK(!host_proof_nonce_ok(nonce, 169), "a length no byte string encodes to is refused");
	return unit_done();
}
