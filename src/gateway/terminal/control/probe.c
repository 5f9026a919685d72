/*
 * terminal/control/probe.c
 *		The duplicate probe and its verdict (see probe.h).
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/db.h"
#include "core/node.h"
#include "logline.h"
#include "terminal/control/connection.h"
#include "terminal/control/hosts.h"
#include "terminal/hostsig.h"
#include "terminal/control/opens.h"
#include "terminal/control/presence.h"
#include "terminal/control/probe.h"
#include "terminal/send.h"
#include "terminal/control/stats.h"
#include "terminal/settings.h"

static const char sql_duplicate[] = "SELECT bothy.terminal_host_duplicate($1::uuid)";

/* A connection that may be probed or announced: ready, reported, no verdict running. */
static bool
comparable(const gw_tconn *tc)
{
	return gw_tconn_connected(tc) && !tc->verdict;
}

static void
start(gw_tconn *tc)
{
	char		out[128];

	if (tc->probing || !comparable(tc))
		return;
	randombytes_buf(tc->nonce, sizeof(tc->nonce));
	tc->probing = true;
	tc->probe_until = gw_mono_ms() + gw_tsettings.terminal_host_duplicate_probe_timeout;
	gw_tconn_rearm(tc);
	(void) gw_tconn_send(tc, out, gw_tenc_probe(out, sizeof(out), tc->nonce));
}

/* What this node does of a connection of the host heard of elsewhere. */
typedef struct heard
{
	bothy_uuid	host;
	bothy_uuid	conn;
	bool		older_here;		/* a connection here is older: it may be probed */
} heard;

static void
heard_one(gw_tconn *tc, void *arg)
{
	heard	   *h = arg;
	int			order = bothy_uuid_compare(&tc->id, &h->conn);

	if (!comparable(tc))
		return;
	if (order < 0)
		h->older_here = true;
	else if (order > 0 && tc->announced)
		gw_tpresence_announce(tc);
}

static void
probe_older(gw_tconn *tc, void *arg)
{
	const bothy_uuid *conn = arg;

	if (comparable(tc) && bothy_uuid_compare(&tc->id, conn) < 0)
		start(tc);
}

static const char sql_known[] = "SELECT bothy.terminal_host_conn_known($1::uuid, $2::uuid)";

/* The database answered whether it knows the newer connection. */
static void
known_done(void *arg, gw_db_result result, const PGresult *res)
{
	heard	   *h = arg;
	bool		known = false;

	if (result == GW_DB_OK && gw_db_bool(res, &known) && known)
		gw_thosts_each(&h->host, probe_older, &h->conn);
	else if (result == GW_DB_OK)
		gw_tstats.presence_unknown++;
	/* a failed question probes nothing: the next heartbeat's announcement asks again */
	free(h);
}

/*
 * A probe can end in the duplicate verdict, which forgets the host's key:
 * so an announcement is a hint, and only a connection the database knows
 * (terminal_host_announce recorded it when it staged the signal) is probed
 * for (docs/security.md).  Answering with an announcement of our own
 * (this node's connection is the newer) needs no such care.
 */
void
gw_tprobe_heard(const bothy_uuid *host, const bothy_uuid *conn)
{
	heard		h = {*host, *conn, false};
	heard	   *copy;
	char		hs[BOTHY_UUID_STRLEN + 1],
				cs[BOTHY_UUID_STRLEN + 1];
	const char *params[2] = {hs, cs};

	gw_thosts_each(host, heard_one, &h);
	if (!h.older_here || (copy = malloc(sizeof(*copy))) == NULL)
		return;
	*copy = h;
	bothy_uuid_format(host, hs);
	bothy_uuid_format(conn, cs);
	if (gw_db_submit(gw.db, sql_known, 2, params, known_done, copy) == NULL)
		free(copy);
}

static void
local_one(gw_tconn *other, void *arg)
{
	gw_tconn   *tc = arg;

	if (other == tc || !comparable(other))
		return;
	start(bothy_uuid_compare(&other->id, &tc->id) < 0 ? other : tc);
}

void
gw_tprobe_local(gw_tconn *tc)
{
	gw_thosts_each(&tc->host, local_one, tc);
}

/* D-M2-47-11: one record per duplicate closed here, with its close code. */
static void
duplicate_closed(gw_tconn *tc, int code, const char *reason)
{
	gw_logf(GW_LOG_WARN, "terminal duplicate control connection", "code=%d", code);
	gw_conn_close(&tc->conn, code, reason);
}

/* bothy.terminal_host_duplicate answered: extra is the host. */
static void
verdict_done(gw_tconn *tc, gw_db_result result, const PGresult *res, const void *extra)
{
	bothy_signal sig = {0};
	const char *state = result == GW_DB_OK && PQntuples(res) == 1 && PQnfields(res) == 1 &&
		!PQgetisnull(res, 0, 0) ? PQgetvalue(res, 0, 0) : "";
	bool		disabled = strcmp(state, "disabled") == 0;

	if (!disabled && strcmp(state, "pairing") != 0)
	{
		/* not recorded: the next announcement of the newer connection probes again */
		gw_tstats.verdicts[GW_TVERDICT_FAILED]++;
		gw_log(GW_LOG_WARN, "terminal duplicate verdict not recorded");
		if (tc != NULL)
		{
			tc->verdict = false;
			gw_topens_due(tc);	/* what came due while the verdict ran, from the database */
		}
		return;
	}
	gw_tstats.verdicts[disabled ? GW_TVERDICT_DISABLED : GW_TVERDICT_PAIRING]++;
	if (tc != NULL)
	{
		if (disabled)
			gw_conn_close(&tc->conn, GW_TCODE_DISABLED, "host disabled");
		else
			duplicate_closed(tc, GW_TCODE_DUPLICATE, "duplicate verdict");
	}
	gw_terminal_committed();
	/* the others close with the code of the state, here and on every node */
	sig.kind = BOTHY_KIND_TERMINAL_HOST_CLOSE;
	memcpy(&sig.host_id, extra, sizeof(sig.host_id));
	gw_terminal_decided(&sig);
}

void
gw_tprobe_answered(gw_tconn *tc, const uint8_t sig[GW_TSIG_BYTES])
{
	char		host[BOTHY_UUID_STRLEN + 1];
	const char *params[1] = {host};

	tc->probing = false;
	if (!gw_hsig_verify_nonce(GW_HSIG_PROBE, tc->key, &tc->host, tc->nonce, sig))
	{
		gw_tstats.probes[GW_TPROBE_REFUSED]++;
		duplicate_closed(tc, GW_TCODE_REFUSED, "probe answer refused");
		return;
	}
	/* it holds the key, and so does the newer connection: the key is in two places */
	gw_tstats.probes[GW_TPROBE_ANSWERED]++;
	tc->verdict = true;
	bothy_uuid_format(&tc->host, host);
	if (!gw_tconn_submit(tc, sql_duplicate, 1, params, verdict_done, &tc->host, sizeof(tc->host)))
		verdict_done(tc, GW_DB_ERROR, NULL, &tc->host);
}

void
gw_tprobe_expired(gw_tconn *tc)
{
	tc->probing = false;
	gw_tstats.probes[GW_TPROBE_UNANSWERED]++;
	duplicate_closed(tc, GW_TCODE_SILENT, "no probe answer in time");
}
