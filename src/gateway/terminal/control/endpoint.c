/*
 * terminal/control/endpoint.c
 *		The endpoint of the control connections at /terminal/host (see
 *		endpoint.h): the challenge, hello and pair checked against the
 *		database, ready, the report and heartbeats with their deadline,
 *		the dispatch of the other ops to probe.c and opens.c, and the log
 *		tail's rows for the control plane.  It calls the handlers; they
 *		and it call connection.c's primitives.
 *
 * Order of checks for a message: parse strictly (4002), then the state
 * (hello or pair only first, neither after; nothing while the check of
 * hello or pair runs: 4002).  A pair's signature is verified before any
 * database call, so a forged pair costs the database nothing; a hello
 * needs the key the database holds, read with one call.  A database that
 * fails a hello or a pair closes the connection with 1011: the host
 * service connects again (to any node).
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/node.h"
#include "logline.h"
#include "terminal/control/connection.h"
#include "terminal/control/endpoint.h"
#include "terminal/control/hostcheck.h"
#include "terminal/control/hosts.h"
#include "terminal/hostsig.h"
#include "terminal/control/opens.h"
#include "terminal/control/presence.h"
#include "terminal/control/probe.h"
#include "terminal/send.h"
#include "terminal/control/stats.h"
#include "terminal/settings.h"

/* Large enough for every message the node sends on a control connection. */
#define OUT_MAX 256

static const char sql_host_state[] =
"SELECT state, encode(public_key, 'hex') FROM bothy.terminal_host_states(ARRAY[$1::uuid])";

static const char sql_pair[] =
"SELECT bothy.terminal_host_pair($1::uuid, $2, decode($3, 'hex'))";

/*
 * ready after hello or pair.  A terminal.host_close heard while its check
 * ran (hostcheck.c sets recheck only then) makes the state it read stale:
 * read it again.
 */
static void
checked_ready(gw_tconn *tc, gw_thost state)
{
	gw_tconn_ready(tc, state);
	if (tc->recheck)
	{
		tc->recheck = false;
		gw_thostcheck_close(&tc->host);
	}
}

/* --- closes ---------------------------------------------------------------- */

static void
refuse(gw_tconn *tc, gw_trefusal reason, const char *close_reason)
{
	static const char *const names[GW_TREFUSE_COUNT] = {"unknown_host", "bad_signature", "wrong_code"};

	gw_tstats.refused[reason]++;
	gw_logf(GW_LOG_INFO, "terminal control connection refused", "reason=%s", names[reason]);
	gw_conn_close(&tc->conn, GW_TCODE_REFUSED, close_reason);
}

static void
unexpected(gw_tconn *tc)
{
	gw_log(GW_LOG_INFO, "terminal control connection closed: unexpected message");
	gw_conn_close(&tc->conn, GW_CLOSE_MALFORMED, "unexpected message");
}

/* hello or pair could not be checked: the host service tries again. */
static void
unavailable(gw_tconn *tc, gw_db_result result)
{
	gw_logf(GW_LOG_WARN, "terminal control connection closed: database unavailable", "result=%s",
			result == GW_DB_TIMEOUT ? "timeout" : "error");
	gw_conn_close(&tc->conn, GW_CLOSE_INTERNAL, "database unavailable");
}

static void
not_understood(gw_tconn *tc)
{
	gw_log(GW_LOG_ERROR, "terminal host answer not understood");
	gw_conn_close(&tc->conn, GW_CLOSE_INTERNAL, "internal error");
}

/* --- hello and pair ------------------------------------------------------ */

static bool
key_of_hex(const char *hex, uint8_t key[GW_TKEY_BYTES])
{
	size_t		used = 0;

	return strlen(hex) == 2 * GW_TKEY_BYTES &&
		sodium_hex2bin(key, GW_TKEY_BYTES, hex, 2 * GW_TKEY_BYTES, NULL, &used, NULL) == 0 &&
		used == GW_TKEY_BYTES;
}

/* bothy.terminal_host_states answered a hello: extra is its signature. */
static void
hello_checked(gw_tconn *tc, gw_db_result result, const PGresult *res, const void *extra)
{
	uint8_t		key[GW_TKEY_BYTES];
	const char *state;
	gw_thost	h;

	if (tc == NULL)
		return;
	if (result != GW_DB_OK)
	{
		unavailable(tc, result);
		return;
	}
	if (PQnfields(res) != 2 || PQntuples(res) > 1)
	{
		not_understood(tc);
		return;
	}
	if (PQntuples(res) == 0)
	{
		refuse(tc, GW_TREFUSE_UNKNOWN_HOST, "key refused");
		return;
	}
	state = PQgetvalue(res, 0, 0);
	if (!gw_thost_parse(state, strlen(state), &h))
	{
		not_understood(tc);
		return;
	}
	/* pairing: no key to say hello with; the host service pairs again */
	if (h == GW_THOST_PAIRING)
	{
		gw_conn_close(&tc->conn, GW_TCODE_PAIRING, "host pairing again");
		return;
	}
	if (PQgetisnull(res, 0, 1) || !key_of_hex(PQgetvalue(res, 0, 1), key))
	{
		not_understood(tc);
		return;
	}
	if (!gw_hsig_verify_nonce(GW_HSIG_HELLO, key, &tc->host, tc->nonce, extra))
	{
		refuse(tc, GW_TREFUSE_BAD_SIGNATURE, "key refused");
		return;
	}
	if (h == GW_THOST_DISABLED)
	{
		gw_conn_close(&tc->conn, GW_TCODE_DISABLED, "host disabled");
		return;
	}
	memcpy(tc->key, key, GW_TKEY_BYTES);
	checked_ready(tc, h);
}

/*
 * hello or pair claims host: the connection joins the host's list (its
 * answer finds it there) and waits for the database's check.
 */
static void
check(gw_tconn *tc, const bothy_uuid *host, const char *sql, int nparams,
	  const char *const *params, gw_tconn_done done, const void *extra, size_t extra_len)
{
	tc->host = *host;
	gw_thosts_add(tc);
	tc->conn.state = GW_TC_CHECKING;
	tc->deadline = 0;
	if (!gw_tconn_submit(tc, sql, nparams, params, done, extra, extra_len))
		unavailable(tc, GW_DB_ERROR);
}

static void
hello(gw_tconn *tc, const gw_tmsg *m)
{
	char		host[BOTHY_UUID_STRLEN + 1];
	const char *params[1] = {host};

	bothy_uuid_format(&m->host, host);
	check(tc, &m->host, sql_host_state, 1, params, hello_checked, m->sig, GW_TSIG_BYTES);
}

/* bothy.terminal_host_pair answered: extra is the key presented. */
static void
paired(gw_tconn *tc, gw_db_result result, const PGresult *res, const void *extra)
{
	bool		ok = false;

	if (result == GW_DB_OK && !gw_db_bool(res, &ok))
	{
		if (tc != NULL)
			not_understood(tc);
		return;
	}
	if (ok)
		gw_terminal_committed();
	if (tc == NULL)
		return;
	if (result != GW_DB_OK)
		unavailable(tc, result);
	else if (!ok)
		refuse(tc, GW_TREFUSE_WRONG_CODE, "pairing refused");
	else
	{
		memcpy(tc->key, extra, GW_TKEY_BYTES);
		checked_ready(tc, GW_THOST_CONFIRMING);
	}
}

static void
pair(gw_tconn *tc, const gw_tmsg *m)
{
	char		host[BOTHY_UUID_STRLEN + 1];
	char		key[2 * GW_TKEY_BYTES + 1];
	const char *params[3] = {host, m->code, key};

	/* the key presented signs this challenge: the host service holds it */
	if (!gw_hsig_verify_nonce(GW_HSIG_PAIR, m->key, &m->host, tc->nonce, m->sig))
	{
		refuse(tc, GW_TREFUSE_BAD_SIGNATURE, "key refused");
		return;
	}
	bothy_uuid_format(&m->host, host);
	sodium_bin2hex(key, sizeof(key), m->key, GW_TKEY_BYTES);
	check(tc, &m->host, sql_pair, 3, params, paired, m->key, GW_TKEY_BYTES);
}

/* --- ready ------------------------------------------------------------------ */

static void
reported(gw_tconn *tc, const gw_tmsg *m)
{
	bool		first = !tc->reported;

	tc->reported = true;
	if (first)
	{
		/* probation from the first announcement (D-M2-47-7); multi only */
		if (!tc->announced && gw.cluster.multi)
		{
			gw_tpresence_announce(tc);
			tc->probation_until = gw_mono_ms() + 2 * gw_tsettings.terminal_host_duplicate_probe_timeout;
			gw_tconn_rearm(tc);
		}
		gw_tprobe_local(tc);
		gw_topens_due(tc);
	}
	if (m->nsessions > 0 && tc->hstate == GW_THOST_ACTIVE)
		gw_topens_reported(tc, m);
}

static void
heartbeat(gw_tconn *tc)
{
	char		out[OUT_MAX];

	gw_tconn_arm_heartbeat(tc);
	(void) gw_tconn_send(tc, out, gw_tenc_heartbeat_ack(out, sizeof(out)));
	if (tc->announced)
		gw_tpresence_announce(tc);
	if (tc->opens_retry)
	{
		tc->opens_retry = false;
		gw_topens_due(tc);
	}
}

/* --- the endpoint ------------------------------------------------------------ */

static void
established(gw_conn *c)
{
	gw_tconn   *tc = gw_tconn_of(c);
	char		out[OUT_MAX];

	gw_new_uuid(&tc->id);
	randombytes_buf(tc->nonce, sizeof(tc->nonce));
	tc->deadline = gw_mono_ms() + gw.opt.identify_timeout_ms;
	gw_tconn_rearm(tc);
	gw_tstats_count(tc, GW_TCOUNT_UNREADY);
	(void) gw_tconn_send(tc, out, gw_tenc_challenge(out, sizeof(out), tc->nonce));
}

static void
ready_message(gw_tconn *tc, const gw_tmsg *m)
{
	switch (m->op)
	{
		case GW_TOP_REPORT:
			reported(tc, m);
			return;
		case GW_TOP_HEARTBEAT:
			heartbeat(tc);
			return;
		case GW_TOP_SESSION_STARTED:
			if (tc->hstate == GW_THOST_ACTIVE)
			{
				gw_topens_started(tc, m);
				return;
			}
			break;
		case GW_TOP_PROBE_ACK:
			if (tc->probing)
			{
				gw_tprobe_answered(tc, m->sig);
				return;
			}
			break;
		case GW_TOP_NONE:
		case GW_TOP_HELLO:
		case GW_TOP_PAIR:
			break;
	}
	unexpected(tc);
}

static void
message(gw_conn *c, const char *msg, size_t len, bool binary)
{
	gw_tconn   *tc = gw_tconn_of(c);
	gw_tmsg		m;
	gw_parse_status	status;

	(void) binary;				/* the endpoint takes none: the core closes with 4002 */
	if (c->state == GW_CONN_CLOSING)
		return;
	status = gw_tmsg_parse(msg, len, &m);
	if (status != GW_PARSE_OK)
	{
		gw_logf(GW_LOG_INFO, "terminal control connection closed: malformed message", "reason=%s",
				gw_parse_status_code(status));
		gw_conn_close(c, GW_CLOSE_MALFORMED, "malformed message");
		return;
	}
	if (c->state == GW_TC_NEW && m.op == GW_TOP_HELLO)
		hello(tc, &m);
	else if (c->state == GW_TC_NEW && m.op == GW_TOP_PAIR)
		pair(tc, &m);
	else if (c->state == GW_TC_READY)
		ready_message(tc, &m);
	else
		unexpected(tc);
}

static void
tick(gw_conn *c, int64_t now)
{
	gw_tconn   *tc = gw_tconn_of(c);

	if (c->state == GW_TC_NEW && now >= tc->deadline)
	{
		gw_conn_close(c, GW_CLOSE_MALFORMED, "no hello in time");
		return;
	}
	if (c->state != GW_TC_READY)
	{
		gw_tconn_rearm(tc);		/* woken before its hello deadline: ask again */
		return;
	}
	if (now >= tc->deadline)
	{
		gw_tstats.heartbeats_missed++;
		gw_log(GW_LOG_INFO, "terminal control connection closed: no heartbeat in time");
		gw_conn_close(c, GW_TCODE_SILENT, "no heartbeat in time");
		return;
	}
	if (tc->probing && now >= tc->probe_until)
	{
		gw_tprobe_expired(tc);
		return;
	}
	if (tc->opens_due && !gw_tconn_held(tc, now))
		gw_topens_due(tc);
	gw_tconn_rearm(tc);
}

static void
closed(gw_conn *c)
{
	gw_tconn   *tc = gw_tconn_of(c);

	gw_tpresence_withdraw(tc);
	gw_thosts_remove(tc);
	gw_tstats_count(tc, GW_TCOUNT_NONE);
}

void
gw_tcontrol_observe(const gw_tlog_row *row)
{
	if (row->transition == GW_TLOG_SESSION_CLOSED)
		gw_topens_closed(row);
	else if (row->transition == GW_TLOG_HOST_CONFIRMED)
		gw_thostcheck_confirmed(&row->host);
}

const gw_ws_endpoint gw_tcontrol_endpoint = {
	.path = "/terminal/host",
	.prefix = false,
	.binary = false,
	.conn_size = sizeof(gw_tconn),
	.established = established,
	.message = message,
	.tick = tick,
	.closed = closed,
};
