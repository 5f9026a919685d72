/*
 * keys/keystore.h
 *		The key store shared by every node (D-M7-17-8): one directory of
 *		Ed25519 signing keys.  The newest key signs; every key that has not
 *		retired verifies, so a key rotated through one node verifies on every
 *		other node once its cache (bothy.signing_key_cache_ttl) refreshed.
 *
 * Contract between the gateway's server code and the key store; the
 * implementation is keystore.c.  Errors are returned as constant English
 * text in err (never a key, a path component that names a person, or a
 * token), ready for one log record or one line on stderr.
 */
#ifndef BOTHY_GATEWAY_KEYSTORE_H
#define BOTHY_GATEWAY_KEYSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A key ID: printable ASCII [a-z0-9-], NUL-terminated. */
#define BOTHY_KEY_ID_MAX 40

typedef struct bothy_keystore bothy_keystore;

/*
 * Opens DIR and loads its keys.  Refuses (NULL, reason in err) when DIR is
 * missing, is not owned by the current user, is readable, writable or
 * searchable by group or others, or holds a key file that is, or a file
 * that does not parse, or no key at all.
 */
bothy_keystore *bothy_keystore_open(const char *dir, char *err, size_t errlen);

/*
 * Re-reads the directory when the last read is older than max_age_ms
 * (now_ms is the caller's clock, CLOCK_REALTIME milliseconds); a cheap
 * no-op otherwise.  On failure the keys loaded before stay in use and the
 * reason is in err: returns false.
 */
bool		bothy_keystore_refresh(bothy_keystore *ks, int64_t now_ms, int64_t max_age_ms,
								   char *err, size_t errlen);

void		bothy_keystore_close(bothy_keystore *ks);

/* The ID of the key that signs now (the newest). */
const char *bothy_keystore_signing_id(const bothy_keystore *ks);

/*
 * Adds a new key to DIR (created 0700 when missing) which becomes the
 * signing key; keys retired long enough ago are removed.  Used by
 * `bothy-gateway keys rotate`.  On success the new key's ID is in new_id.
 */
bool		bothy_keystore_rotate(const char *dir, char new_id[BOTHY_KEY_ID_MAX + 1],
								  char *err, size_t errlen);

/* Signs msg with the signing key: 64 bytes into sig.  False without a key. */
bool		bothy_keystore_sign(const bothy_keystore *ks, const uint8_t *msg, size_t len,
								uint8_t sig[64], char key_id[BOTHY_KEY_ID_MAX + 1]);

/* True when key_id names a key that still verifies and sig is its signature of msg. */
bool		bothy_keystore_verify(const bothy_keystore *ks, const char *key_id,
								  const uint8_t *msg, size_t len, const uint8_t sig[64]);

/*
 * Added for the CLI, the tests and token.c; everything above is the
 * original contract and unchanged.
 */

/* A key store holds at most this many key files; more is refused. */
#define BOTHY_KEYSTORE_MAX_KEYS 1024

/*
 * Retirement (docs/tokens.md): a key stops verifying BOTHY_KEY_RETIRE_AFTER_S
 * after the next newer key was created.  Until every node has seen the newer
 * key (at most bothy.signing_key_cache_ttl, 1 h at most) the old one may still
 * sign, and what it signed lives at most BOTHY_TOKEN_TTL_MAX (365 days), so
 * 366 days leaves no unexpired token in need of it, with ~23 h for clock skew.
 * `keys rotate` deletes a key file BOTHY_KEY_DELETE_AFTER_S after it retired.
 */
#define BOTHY_KEY_RETIRE_AFTER_S (INT64_C(366) * 86400)
#define BOTHY_KEY_DELETE_AFTER_S (INT64_C(30) * 86400)

/* bothy_keystore_open with the time of the read given (tests; refresh ages from it). */
bothy_keystore *bothy_keystore_open_at(const char *dir, int64_t now_ms, char *err, size_t errlen);

/*
 * bothy_keystore_rotate at now_ms: the new key's creation time is now_ms, or
 * one millisecond after the newest key when that one claims a later time (a
 * rotating node whose clock is behind), so the new key always signs.
 */
bool		bothy_keystore_rotate_at(const char *dir, int64_t now_ms,
									 char new_id[BOTHY_KEY_ID_MAX + 1],
									 char *err, size_t errlen);

typedef enum bothy_key_check
{
	BOTHY_KEY_VERIFIED = 0,
	BOTHY_KEY_UNKNOWN,			/* no such key, or it retired by now_ms */
	BOTHY_KEY_BAD_SIGNATURE
} bothy_key_check;

/*
 * bothy_keystore_verify at now_ms, telling an unknown or retired key from a
 * bad signature.  bothy_keystore_verify is this at the CLOCK_REALTIME clock.
 */
bothy_key_check bothy_keystore_check(const bothy_keystore *ks, const char *key_id,
									 const uint8_t *msg, size_t len, const uint8_t sig[64],
									 int64_t now_ms);

/*
 * True when id[0..len) is a key ID in its one spelling,
 * YYYYMMDD-HHMMSS-mmm-xxxxxxxx (UTC creation time, 8 lower-case hex digits
 * of randomness), so IDs sort by creation; *created_ms is then its time.
 */
bool		bothy_key_id_parse(const char *id, size_t len, int64_t *created_ms);

#endif							/* BOTHY_GATEWAY_KEYSTORE_H */
