/*
 * terminal/relay/identify.c
 *		A stream side's identify (docs/protocol.md, "Terminal streams",
 *		"Identify"): the device with its single-use terminal session token,
 *		the host's data connection with a signature of its key over (session,
 *		grant).  Both build the expectation of the session's current grant
 *		from the row in the same call (RelayExpectation, D-M2-47-21) and join
 *		its slot.
 *
 * Order of checks: the message's form (4002), then what needs no
 * database: the token's signature, kind and expiry, and that the token or
 * the identify names the session of the path (4001); then one call.  A
 * device's call uses the grant once (bothy.terminal_grant_use) and reads
 * the row; a host's reads the host's key and state and the row, and the
 * signature is checked before anything of the row is told: a host that
 * cannot sign learns nothing of the session.  No reason is told to the
 * client; the log says which check refused.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/node.h"
#include "keys/node_keys.h"
#include "keys/token.h"
#include "logline.h"
#include "terminal/hostsig.h"
#include "terminal/relay/conn.h"
#include "terminal/relay/db.h"
#include "terminal/relay/stats.h"
#include "terminal/relay/wire.h"

typedef struct gw_ridentify_call
{
	gw_rconn   *c;
	gw_db_call *db;
	bothy_uuid	host;			/* host: the host it says it is */
	bothy_uuid	grant;			/* the token's grant, or the host's */
	uint8_t		sig[GW_TSIG_BYTES];	/* host: its signature */
} gw_ridentify_call;

static int	pending;

static const char sql_device[] =
"SELECT u.used, " GW_RDB_EXPECTATION
" FROM bothy.terminal_grant_use($1::uuid, $2::uuid) AS u(used)"
" LEFT JOIN bothy.terminal_relay_expectation($1::uuid) e ON true"
" LEFT JOIN LATERAL bothy.terminal_host_states(ARRAY[e.host]) h ON true";

static const char sql_host[] =
"SELECT h.state, encode(h.public_key, 'hex'), " GW_RDB_EXPECTATION
" FROM bothy.terminal_host_states(ARRAY[$1::uuid]) h"
" LEFT JOIN bothy.terminal_relay_expectation($2::uuid) e ON true";

static void
refuse(gw_rconn *c, const char *reason)
{
	gw_relay_stats.refused[c->side.kind]++;
	gw_logf(GW_LOG_INFO, "terminal stream refused", "side=%s reason=%s",
			gw_relay_side_name(c->side.kind), reason);
	gw_conn_close(&c->conn, GW_TCODE_REFUSED, "identify refused");
}

static bool
same(const bothy_uuid *a, const bothy_uuid *b)
{
	return memcmp(a->b, b->b, sizeof(a->b)) == 0;
}

/* The expectation read with the identify: the side joins its slot. */
static void
join(gw_rconn *c, const gw_rrow *row, const bothy_uuid *grant)
{
	int64_t		now = gw_mono_ms();
	gw_rslot   *slot;

	if (!same(&row->grant, grant))
	{
		refuse(c, "grant");		/* not the session's current grant */
		return;
	}
	slot = gw_rslots_expect(&c->session, row, now);
	if (slot == NULL)
	{
		gw_log(GW_LOG_ERROR, "client closed: out of memory");
		gw_conn_close(&c->conn, GW_CLOSE_INTERNAL, "out of memory");
		return;
	}
	if (gw_rslots_join(slot, &c->side, now))
		c->conn.state = GW_RCONN_JOINED;
	else
		refuse(c, "taken");		/* this grant's side of that kind is here already */
}

/* The call did not answer in time, or failed: the side may try again. */
static void
call_failed(gw_rconn *c, gw_db_result result)
{
	gw_rdb_failed("identify", result == GW_DB_OK ? GW_DB_ERROR : result);
	gw_conn_close(&c->conn, GW_CLOSE_INTERNAL, "database unavailable");
}

static gw_rconn *
answered(gw_ridentify_call *call)
{
	gw_rconn   *c = call->c;

	c->call = NULL;
	pending--;
	return c->conn.state == GW_RCONN_IDENTIFYING ? c : NULL;
}

static void
device_done(void *arg, gw_db_result result, const PGresult *res)
{
	gw_ridentify_call *call = arg;
	gw_rconn   *c = answered(call);
	gw_rrow		row;
	bool		used,
				exists;

	if (c == NULL)
		;
	else if (result != GW_DB_OK || !gw_db_bool_at(res, 0, &used) ||
			 !gw_rdb_expectation(res, 1, &row, &exists))
		call_failed(c, result);
	else if (!used || !exists)
		refuse(c, "used");		/* used before, expired, not current, or the session ended */
	else
		join(c, &row, &call->grant);
	free(call);
}

/* The hex of a bytea: exactly the 32 bytes of an Ed25519 key. */
static bool
key_of(const PGresult *res, int col, uint8_t key[crypto_sign_PUBLICKEYBYTES])
{
	size_t		used;

	return !PQgetisnull(res, 0, col) && PQgetlength(res, 0, col) == 2 * crypto_sign_PUBLICKEYBYTES &&
		sodium_hex2bin(key, crypto_sign_PUBLICKEYBYTES, PQgetvalue(res, 0, col),
					   (size_t) PQgetlength(res, 0, col), NULL, &used, NULL) == 0 &&
		used == crypto_sign_PUBLICKEYBYTES;
}

static void
host_done(void *arg, gw_db_result result, const PGresult *res)
{
	gw_ridentify_call *call = arg;
	gw_rconn   *c = answered(call);
	uint8_t		key[crypto_sign_PUBLICKEYBYTES];
	gw_rrow		row;
	bool		exists;

	if (c == NULL)
		;
	else if (result != GW_DB_OK)
		call_failed(c, result);
	else if (PQntuples(res) == 0)
		refuse(c, "host");		/* no such host */
	else if (!gw_rdb_expectation(res, 2, &row, &exists))
		call_failed(c, GW_DB_ERROR);
	else if (strcmp(PQgetvalue(res, 0, 0), "active") != 0 || !key_of(res, 1, key))
		refuse(c, "host");		/* not active, or no key */
	else if (!gw_hsig_verify_data(key, &c->session, &call->grant, call->sig))
		refuse(c, "signature");
	else if (!exists)
	{
		/* signed by the host, for a session that ended */
		gw_conn_close(&c->conn, GW_TCODE_ENDED, "session ended");
	}
	else if (!same(&row.host, &call->host))
		refuse(c, "host");		/* another host's session */
	else
		join(c, &row, &call->grant);
	free(call);
}

static void
start(gw_rconn *c, gw_ridentify_call *call, const char *sql, const bothy_uuid *a,
	  const bothy_uuid *b, gw_db_cb cb)
{
	char		x[BOTHY_UUID_STRLEN + 1],
				y[BOTHY_UUID_STRLEN + 1];
	const char *params[2] = {x, y};

	bothy_uuid_format(a, x);
	bothy_uuid_format(b, y);
	call->c = c;
	c->call = call;
	c->quiet_until = 0;			/* the call's own timeout ends the wait */
	c->conn.state = GW_RCONN_IDENTIFYING;
	call->db = gw_db_submit(gw.db, sql, 2, params, cb, call);
	if (call->db == NULL)
	{
		c->call = NULL;
		free(call);
		call_failed(c, GW_DB_ERROR);
		return;
	}
	pending++;
}

void
gw_ridentify_message(gw_rconn *c, const char *msg, size_t len)
{
	gw_ridentify id;
	gw_ridentify_call *call;

	if (!gw_rwire_parse_identify(msg, len, &id))
	{
		gw_conn_close(&c->conn, GW_CLOSE_MALFORMED, "malformed identify");
		return;
	}
	c->side.kind = id.side;
	if (id.side == GW_RSIDE_DEVICE)
	{
		bothy_token t;
		bothy_token_result r = bothy_token_verify(gw_keys(), id.token, id.token_len,
												  gw_now_ms() / 1000,
												  BOTHY_TOKEN_ACCEPT(BOTHY_TOKEN_TERMINAL), &t);

		if (r != BOTHY_TOKEN_OK)
		{
			refuse(c, bothy_token_result_name(r));
			return;
		}
		if (!same(&t.session, &c->session))
		{
			refuse(c, "session");	/* a token of another session's path */
			return;
		}
		if ((call = calloc(1, sizeof(*call))) == NULL)
		{
			call_failed(c, GW_DB_ERROR);
			return;
		}
		call->grant = t.grant;
		start(c, call, sql_device, &c->session, &t.grant, device_done);
		return;
	}
	if (!same(&id.session, &c->session))
	{
		refuse(c, "session");
		return;
	}
	if ((call = calloc(1, sizeof(*call))) == NULL)
	{
		call_failed(c, GW_DB_ERROR);
		return;
	}
	call->host = id.host;
	call->grant = id.grant;
	memcpy(call->sig, id.sig, sizeof(call->sig));
	start(c, call, sql_host, &id.host, &c->session, host_done);
}

void
gw_ridentify_cancel(gw_rconn *c)
{
	if (c->call == NULL)
		return;
	gw_db_cancel(c->call->db);
	free(c->call);
	c->call = NULL;
	pending--;
}

int
gw_ridentify_pending(void)
{
	return pending;
}
