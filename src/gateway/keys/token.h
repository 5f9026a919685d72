/*
 * keys/token.h
 *		The gateway's tokens: a person-device token, an agent token, the
 *		resume token a node hands out in "ready" and the single-use terminal
 *		session token of a device stream.  Each carries its kind, its
 *		subject, the key ID that signed it and an expiry, and is signed with
 *		Ed25519 by the key store (keystore.h).
 *
 * Contract between the server code and the token code (token.c).  A token
 * is printable ASCII that fits in a JSON string without escaping; its exact
 * format is documented in docs/tokens.md.  Verification is strict: any
 * deviation from the format, an unknown key, a bad signature, an expired
 * token or the wrong kind is refused, and the reason code is for metrics and
 * logs (it never echoes the token).
 */
#ifndef BOTHY_GATEWAY_TOKEN_H
#define BOTHY_GATEWAY_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keys/keystore.h"
#include "uuid.h"

/* Longest token text, without its NUL. */
#define BOTHY_TOKEN_MAX 1024

typedef enum bothy_token_kind
{
	BOTHY_TOKEN_PERSON_DEVICE = 1,	/* identify: a person on one device */
	BOTHY_TOKEN_AGENT,				/* identify: an agent consumer */
	BOTHY_TOKEN_RESUME,				/* resume: a gateway session, of a person device or an agent */
	BOTHY_TOKEN_TERMINAL			/* a device stream: one grant of a terminal session */
} bothy_token_kind;

typedef struct bothy_token
{
	bothy_token_kind kind;
	bool		is_agent;		/* RESUME: true when the session is an agent's */
	bothy_uuid	person;			/* PERSON_DEVICE, RESUME of a person, TERMINAL */
	bothy_uuid	device;			/* PERSON_DEVICE, RESUME of a person, TERMINAL */
	bothy_uuid	agent;			/* AGENT, RESUME of an agent */
	bothy_uuid	session;		/* RESUME: the gateway session; TERMINAL: the terminal session */
	bothy_uuid	grant;			/* TERMINAL: the grant (jti) the token is for */
	int64_t		expires_at;		/* Unix seconds */
	char		key_id[BOTHY_KEY_ID_MAX + 1];	/* set by sign and verify */
} bothy_token;

typedef enum bothy_token_result
{
	BOTHY_TOKEN_OK = 0,
	BOTHY_TOKEN_MALFORMED,		/* not the format, a bad member, too long */
	BOTHY_TOKEN_UNKNOWN_KEY,	/* no such key, or it retired */
	BOTHY_TOKEN_BAD_SIGNATURE,
	BOTHY_TOKEN_EXPIRED,
	BOTHY_TOKEN_WRONG_KIND		/* valid, but not one of the kinds the caller accepts */
} bothy_token_result;

/* Signs t (t->key_id is set to the signing key); false when out is too small. */
bool		bothy_token_sign(const bothy_keystore *ks, bothy_token *t, char *out, size_t outlen);

/*
 * Verifies text[0..len) at now (Unix seconds) and accepts only the kinds in
 * the bit set accept (1u << kind).  *out is filled only on BOTHY_TOKEN_OK.
 */
bothy_token_result bothy_token_verify(const bothy_keystore *ks, const char *text, size_t len,
									  int64_t now, unsigned accept, bothy_token *out);

/* A constant English name of a result, for logs and metric labels. */
const char *bothy_token_result_name(bothy_token_result r);

/*
 * Added for the CLI, the daemon and the tests; everything above is the
 * original contract and unchanged.
 */

/* The bit of a kind in bothy_token_verify's accept set. */
#define BOTHY_TOKEN_ACCEPT(kind) (1u << (unsigned) (kind))

/*
 * Lifetimes in seconds.  Person-device and agent tokens: what
 * `bothy-gateway token ... --ttl` accepts and its default.  The key store's
 * retirement (BOTHY_KEY_RETIRE_AFTER_S) is derived from BOTHY_TOKEN_TTL_MAX.
 */
#define BOTHY_TOKEN_TTL_MIN 60
#define BOTHY_TOKEN_TTL_MAX 31536000	/* 365 days */
#define BOTHY_TOKEN_TTL_DEFAULT 86400	/* 1 day */

/*
 * A resume token lives 5 minutes: long enough to reconnect after a dropped
 * connection, to any node; short because it is handed out on every "ready"
 * and only continues a session.
 */
#define BOTHY_TOKEN_RESUME_TTL 300

/* The largest expires_at a token may carry: 9999-12-31T23:59:59Z. */
#define BOTHY_TOKEN_EXPIRES_MAX INT64_C(253402300799)

/*
 * Mints the resume token of session for the identity in who (a verified
 * PERSON_DEVICE, AGENT or RESUME token): kind RESUME, the same person and
 * device or agent, expiring at now + BOTHY_TOKEN_RESUME_TTL (Unix seconds),
 * signed like bothy_token_sign.  False when who is no identity or out is too
 * small; the daemon sends out in "ready" as "resume".
 */
bool		bothy_token_mint_resume(const bothy_keystore *ks, const bothy_token *who,
									const bothy_uuid *session, int64_t now,
									char *out, size_t outlen);

/*
 * Mints the terminal session token of one grant (the REST answer of an open
 * or attach): kind TERMINAL with the session, its grant, the person and the
 * device, expiring at expires_at (Unix seconds: the grant's expiry), signed
 * like bothy_token_sign.  Single use is the database's: the stream that
 * presents it uses the grant once (bothy.terminal_grant_use).  False when
 * expires_at is out of range or out is too small.
 */
bool		bothy_token_mint_terminal(const bothy_keystore *ks, const bothy_uuid *session,
									  const bothy_uuid *grant, const bothy_uuid *person,
									  const bothy_uuid *device, int64_t expires_at,
									  char *out, size_t outlen);

#endif							/* BOTHY_GATEWAY_TOKEN_H */
