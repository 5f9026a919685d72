/*
 * terminal/control/hostcheck.c
 *		The host's state applied to this node's control connections (see
 *		hostcheck.h).
 *
 * The hosts of a call are sorted like the answer (bothy.terminal_host_states
 * orders by host, and uuid order is byte order), so a host missing from
 * the answer, an unknown host, is found by one merge of the two.
 */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "core/node.h"
#include "core/uuidlist.h"
#include "core/uuidset.h"
#include "logline.h"
#include "terminal/control/connection.h"
#include "terminal/control/endpoint.h"
#include "terminal/control/hostcheck.h"
#include "terminal/control/hosts.h"
#include "terminal/control/opens.h"
#include "terminal/control/presence.h"

static const char sql_states[] =
"SELECT host, state, encode(public_key, 'hex') FROM bothy.terminal_host_states($1::uuid[])";

typedef struct check
{
	bool		reconcile;		/* after a listener loss: then announce and send opens */
	size_t		n;
	bothy_uuid	hosts[];		/* sorted */
} check;

/* What the database holds of one host. */
typedef struct known
{
	bool		exists;
	gw_thost	state;
	bool		has_key;
	uint8_t		key[GW_TKEY_BYTES];
} known;

static void
apply(gw_tconn *tc, void *arg)
{
	const known *k = arg;

	if (tc->conn.state == GW_CONN_CLOSING || tc->verdict)
		return;
	if (tc->conn.state == GW_TC_CHECKING)
	{
		tc->recheck = true;
		return;
	}
	if (tc->conn.state != GW_TC_READY)
		return;
	if (!k->exists)
		gw_conn_close(&tc->conn, GW_TCODE_REFUSED, "key refused");
	else if (k->state == GW_THOST_DISABLED)
		gw_conn_close(&tc->conn, GW_TCODE_DISABLED, "host disabled");
	else if (k->state == GW_THOST_PAIRING || !k->has_key ||
			 memcmp(k->key, tc->key, GW_TKEY_BYTES) != 0 ||
			 (tc->hstate == GW_THOST_ACTIVE && k->state == GW_THOST_CONFIRMING))
		gw_conn_close(&tc->conn, GW_TCODE_PAIRING, "host pairing again");
	else if (tc->hstate == GW_THOST_CONFIRMING && k->state == GW_THOST_ACTIVE)
		gw_tconn_ready(tc, GW_THOST_ACTIVE);
}

/* After a reconciliation: announce at once, and the sessions of its host. */
static void
resume(gw_tconn *tc, void *arg)
{
	(void) arg;
	if (tc->conn.state == GW_CONN_CLOSING || !gw_tconn_connected(tc))
		return;
	if (tc->announced)
		gw_tpresence_announce(tc);
	gw_topens_due(tc);
}

/* One row into k; false when it is not what the function returns. */
static bool
read_row(const PGresult *res, int i, bothy_uuid *host, known *k)
{
	const char *state = PQgetvalue(res, i, 1);
	size_t		used = 0;

	memset(k, 0, sizeof(*k));
	k->exists = true;
	if (!gw_db_uuid_at(res, i, 0, host) ||
		PQgetisnull(res, i, 1) || !gw_thost_parse(state, strlen(state), &k->state))
		return false;
	if (PQgetisnull(res, i, 2))
		return true;
	k->has_key = true;
	return strlen(PQgetvalue(res, i, 2)) == 2 * GW_TKEY_BYTES &&
		sodium_hex2bin(k->key, GW_TKEY_BYTES, PQgetvalue(res, i, 2), 2 * GW_TKEY_BYTES,
					   NULL, &used, NULL) == 0 && used == GW_TKEY_BYTES;
}

static void
checked(void *arg, gw_db_result result, const PGresult *res)
{
	check	   *c = arg;
	known		k,
				unknown = {0};
	size_t		next = 0;
	int			i;

	gw_tcontrol_call_ended();
	if (result != GW_DB_OK || PQnfields(res) != 3)
	{
		if (c->reconcile)
			gw_log(GW_LOG_WARN, "terminal host states not read back after a listener loss");
		else
			gw_log(GW_LOG_WARN, "terminal host states not read");
		free(c);
		return;
	}
	for (i = 0; i < PQntuples(res); i++)
	{
		bothy_uuid	host;

		if (!read_row(res, i, &host, &k))
		{
			gw_log(GW_LOG_ERROR, "terminal host answer not understood");
			break;
		}
		/* the hosts before this row are unknown to the database */
		while (next < c->n && bothy_uuid_compare(&c->hosts[next], &host) < 0)
			gw_thosts_each(&c->hosts[next++], apply, &unknown);
		if (next < c->n && bothy_uuid_compare(&c->hosts[next], &host) == 0)
			gw_thosts_each(&c->hosts[next++], apply, &k);
	}
	if (i == PQntuples(res))
		while (next < c->n)
			gw_thosts_each(&c->hosts[next++], apply, &unknown);
	if (c->reconcile)
		for (next = 0; next < c->n; next++)
			gw_thosts_each(&c->hosts[next], resume, NULL);
	free(c);
}

static int
by_uuid(const void *a, const void *b)
{
	return bothy_uuid_compare(a, b);
}

/* One call for hosts[0..n), sorted here. */
static void
submit(const bothy_uuid *hosts, size_t n, bool reconcile)
{
	check	   *c = malloc(sizeof(*c) + n * sizeof(bothy_uuid));
	char	   *list;
	const char *params[1];

	if (c == NULL)
		return;
	c->reconcile = reconcile;
	c->n = n;
	memcpy(c->hosts, hosts, n * sizeof(bothy_uuid));
	qsort(c->hosts, n, sizeof(bothy_uuid), by_uuid);
	list = gw_uuid_array_literal(c->hosts, n);
	params[0] = list;
	gw_tcontrol_call_began();
	if (list == NULL || gw_db_submit(gw.db, sql_states, 1, params, checked, c) == NULL)
		checked(c, GW_DB_ERROR, NULL);
	free(list);
}

void
gw_thostcheck_close(const bothy_uuid *host)
{
	if (gw_thosts_any(host))
		submit(host, 1, false);
}

static void
confirming_here(gw_tconn *tc, void *arg)
{
	bool	   *any = arg;

	if (tc->conn.state == GW_TC_READY && tc->hstate == GW_THOST_CONFIRMING)
		*any = true;
}

void
gw_thostcheck_confirmed(const bothy_uuid *host)
{
	bool		any = false;

	gw_thosts_each(host, confirming_here, &any);
	if (any)
		submit(host, 1, false);
}

static void
collect(gw_conn *c, void *arg)
{
	gw_tconn   *tc = gw_tconn_of(c);

	if (tc->indexed && !gw_uuidset_add(arg, &tc->host))
		gw_log(GW_LOG_ERROR, "terminal host states not read back: out of memory");
}

void
gw_thostcheck_reconcile(void)
{
	gw_uuidset	hosts = {0};
	bothy_uuid	batch[GW_THOSTCHECK_BATCH];
	const bothy_uuid *u;
	size_t		pos = 0,
				n = 0;

	gw_conn_each(&gw_tcontrol_endpoint, collect, &hosts);
	while ((u = gw_uuidset_next(&hosts, &pos)) != NULL)
	{
		batch[n++] = *u;
		if (n == GW_THOSTCHECK_BATCH)
		{
			submit(batch, n, true);
			n = 0;
		}
	}
	if (n > 0)
		submit(batch, n, true);
	gw_uuidset_free(&hosts);
}
